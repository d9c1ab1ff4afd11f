package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/boltstore"
	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/campaignapi"
	"github.com/unschedule/unschedule/internal/campaign/campaigncancel"
	"github.com/unschedule/unschedule/internal/campaign/limits"
	"github.com/unschedule/unschedule/internal/campaign/provision"
	"github.com/unschedule/unschedule/internal/campaign/send"
	"github.com/unschedule/unschedule/internal/campaign/unsubscribe"
	"github.com/unschedule/unschedule/internal/clock"
	"github.com/unschedule/unschedule/internal/domain/reconcile"
)

// This file is the one place that wires the campaign services (send,
// provision, reconciler, cancel, campaignapi) over the store's campaign
// ports; everything else in the package reads only the ports.

// Campaign constants of make dev.
const (
	// DevSender is the From address of make dev's campaign emails: whose
	// suppression list the server keeps.
	DevSender = "campaigns@localhost"
	// RouteUnsubscribe is the unsubscribe route the emails link (with
	// ?token=), public as in AWS.
	RouteUnsubscribe = "/unsubscribe"
	// ProvisionBudget is a provisioning run's deadline, as the function's
	// 15-minute timeout is; a run that stops at it continues at once (the
	// self re-invoke).
	ProvisionBudget = 15 * time.Minute
	// campaignFiresPerStep bounds the campaign schedules one step fires;
	// the rest fire on the next.
	campaignFiresPerStep = 1000
)

// campaignTarget names where the schedules deliver: the in-process send
// worker (the names only label the requests).
var campaignTarget = campaign.Target{GroupName: "dev-campaigns", FunctionArn: "dev:send", RoleArn: "dev:scheduler-role", DeadLetterArn: "dev:dead-letters"}

// campaignRuntime is the campaign services of the dev server, all state
// in the server's store: a restart resumes every campaign where it was.
type campaignRuntime struct {
	store      *campaignStore
	hub        *Hub
	api        *campaignapi.Handler
	scheduler  boltstore.CampaignScheduler
	unsub      *unsubscribe.Page
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
	rt := &campaignRuntime{hub: NewHub(), scheduler: s.db.CampaignScheduler(), clock: clk, log: log}
	rt.ctx, rt.stop = context.WithCancel(context.Background())
	rt.store = &campaignStore{CampaignStore: s.db.CampaignStore(), pub: rt.hub, clock: clk, log: log}
	sender := outboxSender{db: s.db, campaigns: rt.store, clock: clk}
	var err error
	if rt.worker, err = send.New(rt.store, rt.store, sender, clk, 0); err != nil {
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
	suppressions := s.db.Suppressions()
	rt.unsub = &unsubscribe.Page{Keys: keys, Store: suppressions, Clock: clk, Log: log}
	rt.worker.Deliverability = &send.Deliverability{Sender: DevSender, Suppressions: suppressions,
		Links: unsubscribe.Links{Base: s.cfg.PublicURL + RouteUnsubscribe, Keys: keys}}
	if rt.provision, err = provision.New(provision.Config{Target: campaignTarget}, rt.store, rt.store, rt.scheduler, s.db.CampaignCheckpoints(), clk); err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	// The core reconciler with the campaign's rules, as the reconciler
	// function runs it (a pass of at most 4 minutes).
	rt.repair = &campaign.Repair{}
	if rt.reconciler, err = campaign.NewReconciler(reconcile.Config{RatePerSec: campaign.DefaultReconcileCallsPerSecond}, rt.repair,
		campaign.ReconcilePorts{Tasks: rt.store, Campaigns: rt.store, Scheduler: rt.scheduler, Sender: sender,
			Dispatcher: campaignDispatcher{rt}, Clock: clk, Target: campaignTarget, Log: log}); err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	c, err := campaigncancel.New(rt.store, rt.store, rt.scheduler, clk, campaignTarget.GroupName, uint64(time.Now().UnixNano()))
	if err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	c.Margin = 5 * time.Second // as the API function's main sets it: of the request's 29 s
	lim, err := limits.New(s.cfg.CampaignLimits, s.db.SenderLimits(), clk)
	if err != nil {
		return fmt.Errorf("devserver: campaigns: %w", err)
	}
	if rt.api, err = campaignapi.New(rt.store, campaignStarter{rt}, c, clk, nil, origins, campaignapi.DefaultSenderGroup, log); err != nil {
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

// wait waits for the provisioning runs and dispatched sends started so
// far (tests: call it when nothing starts new ones).
func (rt *campaignRuntime) wait() { rt.wg.Wait() }

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

// fireDue is the campaign part of the server's step: it fires every
// campaign schedule whose at() time has come, earliest first, as the
// scheduler does. A schedule is deleted (ActionAfterCompletion DELETE)
// once its fire succeeded or its MaximumRetryAttempts retries are used
// up (a dead letter, logged); a failed fire is tried again on a later
// step. It returns how many schedules fired.
func (rt *campaignRuntime) fireDue(ctx context.Context) (int, error) {
	due, err := rt.scheduler.Due(rt.clock.Now(), campaignFiresPerStep)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, d := range due {
		name := d.Request.Name
		e, err := campaign.DecodeFire([]byte(d.Request.Input))
		if err == nil {
			err = rt.handle(ctx, e, "schedule")
		}
		if err != nil && ctx.Err() != nil {
			return len(due), errors.Join(errs...) // stopping: the fire did not happen
		}
		if err != nil {
			n, ferr := rt.scheduler.Failed(name)
			if ferr != nil {
				errs = append(errs, ferr)
				continue
			}
			if n <= d.Request.MaximumRetryAttempts {
				continue // retried on a later step
			}
			rt.log.Error("campaign schedule dead-lettered after its retries", "schedule", name, "error", err.Error())
		}
		if err := rt.scheduler.Remove(name); err != nil && !errors.Is(err, campaign.ErrScheduleNotFound) {
			errs = append(errs, err)
		}
	}
	return len(due), errors.Join(errs...)
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

// serveUnsubscribe is the unsubscribe route (GET: the page, POST:
// unsubscribe), as the Unsubscribe function serves it in AWS.
func (rt *campaignRuntime) serveUnsubscribe(w http.ResponseWriter, r *http.Request) {
	res := rt.unsub.Serve(r.Context(), unsubscribe.Request{Method: r.Method, Token: r.URL.Query().Get("token"), Accept: r.Header.Get("Accept")})
	for k, v := range res.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(res.Status)
	_, _ = w.Write([]byte(res.Body))
}
