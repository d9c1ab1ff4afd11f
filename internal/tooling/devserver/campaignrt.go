package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/campaigns/campaignlambda"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/httpapi"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// Campaign constants of make dev.
const (
	// DevSender is the From address of make dev's campaign emails.
	DevSender = "campaigns@localhost"
	// RouteUnsubscribe is the unsubscribe route the emails link (with
	// ?token=), public as in AWS.
	RouteUnsubscribe = "/unsubscribe"
	// ProvisionBudget is a provisioning run's deadline, the function's
	// timeout; a run that stops at it continues at once.
	ProvisionBudget = 15 * time.Minute
)

// campaignRuntime is the campaign services (send, provision, reconciler,
// cancel, campaignapi) over the server's store, wired in openCampaigns.
type campaignRuntime struct {
	store *memory.CampaignStore // announcing its writes to hub
	hub   *Hub
	api   *campaignapi.Handler
	// sends fires the send schedules of its Timer (Server.campTimer)
	// into the send worker, with the campaign schedule group's retries.
	sends      *inproc.Engine
	unsub      *unsubscribe.Page
	bounce     *campaignlambda.Bounce // the bounce function's handler, for the outbox's bounce and complaint buttons
	worker     *send.Worker
	provision  *provision.Provisioner
	reconciler *reconcile.Reconciler
	repair     *campaign.Repair
	clock      campaign.Clock
	log        *slog.Logger

	ctx  context.Context // the runtime's life: provisioning and dispatches run under it
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// openCampaigns wires the campaign services over s.db and resumes the
// provisioning of campaigns a stop interrupted.
func (s *Server) openCampaigns(origins []string) error {
	clk := clock.Func(s.cfg.Now)
	log := s.log.With("component", "campaigns")
	rt := &campaignRuntime{hub: NewHub(), clock: clk, log: log}
	// A failed fire is tried again on the next step, up to
	// campaign.ScheduleRetries times, then dead-lettered (logged; the
	// reconciler sends or moves the task).
	rt.sends = inproc.NewEngine(inproc.Options{Start: s.cfg.Now(), Log: log, FireAttempts: campaign.ScheduleRetries + 1,
		Hooks: inproc.Hooks{RetryDelay: func(int) time.Duration { return 0 }}})
	rt.sends.Timer = s.campTimer
	rt.sends.WireFiring(func(ctx context.Context, sc timer.Schedule) (string, error) {
		e, err := campaign.DecodeFire([]byte(campaign.TaskSchema.EncodePayload(sc.Payload)))
		if err != nil {
			return "", err
		}
		return "", rt.handle(ctx, e, "schedule")
	})
	rt.ctx, rt.stop = context.WithCancel(context.Background())
	rt.store = announcing(s.db.campaigns, rt.hub, clk, log)
	sender := outboxSender{db: s.db, campaigns: rt.store, clock: clk}
	var err error
	if rt.worker, err = send.New(rt.store, rt.store, sender, devSenders{s}, clk, 0); err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	// The signing key is kept, so the links in the outbox work after a restart.
	secret, err := s.db.Secret("unsubscribe-signing-key", unsubscribe.MinSecretBytes)
	if err != nil {
		return err
	}
	signer, err := unsubscribe.NewSigner(secret)
	if err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	keys := unsubscribe.StaticKeys(signer)
	suppressions := s.db.suppressions
	rt.unsub = &unsubscribe.Page{Keys: keys, Store: suppressions, Clock: clk, Log: log}
	rt.bounce = &campaignlambda.Bounce{List: suppressions, Log: log}
	rt.worker.Deliverability = &send.Deliverability{Sender: DevSender, Suppressions: suppressions,
		Links: unsubscribe.Links{Base: s.cfg.PublicURL + RouteUnsubscribe, Keys: keys}}
	if rt.provision, err = provision.New(provision.Config{}, rt.store, rt.store, devSenders{s}, s.campTimer, s.db.checkpoints, clk); err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	// The core reconciler with the campaign's rules, as its function runs it.
	rt.repair = &campaign.Repair{}
	if rt.reconciler, err = campaign.NewReconciler(reconcile.Config{RatePerSec: campaign.DefaultReconcileCallsPerSecond}, rt.repair,
		campaign.ReconcilePorts{Tasks: rt.store, Campaigns: rt.store, Timer: s.campTimer, Sender: sender, Owners: devSenders{s},
			Dispatcher: campaignDispatcher{rt}, Clock: clk, Log: log, Checkpoints: &inmem.Checkpoints{}}); err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	c, err := campaigncancel.New(rt.store, rt.store, s.campTimer, clk, uint64(time.Now().UnixNano()))
	if err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	c.Margin = 5 * time.Second // as the API function's main sets it: of the request's 29 s
	lim, err := limits.New(s.cfg.CampaignLimits, s.db.limits, clk)
	if err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	if rt.api, err = campaignapi.New(rt.store, s.cursors, campaignStarter{rt}, c, clk, nil, origins, campaignapi.DefaultSenderGroup, log); err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	rt.api.WithLimits(lim)
	s.campaigns = rt
	if len(s.cfg.CampaignSenders) == 0 {
		s.log.Info("no campaign senders: every campaign request is refused with 403; list who may send with -campaign-senders")
	}
	// A stop in the middle of provisioning leaves the campaign
	// Provisioning with its checkpoint: carry on from there.
	ids, err := rt.store.Provisioning(rt.ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		log.Info("resuming campaign provisioning", "campaignId", id)
		_ = campaignStarter{rt}.Start(rt.ctx, id) // fails only once stopped
	}
	return nil
}

// close stops provisioning runs and dispatched sends, and waits for them.
func (rt *campaignRuntime) close() {
	rt.stop()
	rt.wg.Wait()
}

// campaignStarter runs provisioning in the background (the asynchronous
// invoke of the provisioning function), continuing while a run asks to.
type campaignStarter struct{ rt *campaignRuntime }

func (s campaignStarter) Start(_ context.Context, id string) error {
	rt := s.rt
	if rt.ctx.Err() != nil {
		return errors.New("devserver: the server is stopping")
	}
	rt.wg.Go(func() {
		for {
			res, err := rt.provision.Run(rt.ctx, id, rt.clock.Now().Add(ProvisionBudget))
			if err != nil {
				if rt.ctx.Err() == nil {
					rt.log.Error("campaign provisioning failed", "campaignId", id, "error", err.Error())
				}
				return
			}
			rt.log.Info("campaign provisioning run", "campaignId", id, "created", res.Created, "left", res.Errors, "continue", res.Continue)
			if !res.Continue {
				return
			}
		}
	})
	return nil
}

// campaignDispatcher hands a task to the send worker at once (the
// reconciler's asynchronous invoke of the send function).
type campaignDispatcher struct{ rt *campaignRuntime }

func (d campaignDispatcher) Dispatch(_ context.Context, e campaign.FireEvent) error {
	d.rt.wg.Go(func() { _ = d.rt.handle(d.rt.ctx, e, "dispatch") })
	return nil
}

func (rt *campaignRuntime) handle(ctx context.Context, e campaign.FireEvent, how string) error {
	out, err := rt.worker.Handle(ctx, e)
	log := rt.log.With("campaignId", e.CampaignID, "taskId", e.TaskID, "via", how, "outcome", string(out))
	if err != nil {
		log.Error("campaign send failed", "error", err.Error())
		return err
	}
	log.Info("campaign send handled")
	return nil
}

// reconcile runs one campaign reconciler pass.
func (rt *campaignRuntime) reconcile(ctx context.Context) error {
	res, err := rt.reconciler.Run(ctx)
	if err != nil {
		return fmt.Errorf("campaign reconcile: %w", err)
	}
	if res.ItemsChecked > 0 {
		rt.log.Info("campaign reconcile pass", "result", fmt.Sprintf("%+v", res), "rules", fmt.Sprintf("%+v", rt.repair.Counts()))
	}
	return nil
}

// serveUnsubscribe serves the Unsubscribe function's page (GET) and
// action (POST).
func (rt *campaignRuntime) serveUnsubscribe(w http.ResponseWriter, r *http.Request) {
	res := rt.unsub.Serve(r.Context(), unsubscribe.Request{Method: r.Method, Token: r.URL.Query().Get("token"), Accept: r.Header.Get("Accept")})
	write(w, httpapi.Response{Status: res.Status, Headers: res.Headers, Body: []byte(res.Body)})
}
