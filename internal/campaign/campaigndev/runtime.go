package campaigndev

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/campaignapi"
	"github.com/unschedule/unschedule/internal/campaign/cancel"
	"github.com/unschedule/unschedule/internal/campaign/inmem"
	"github.com/unschedule/unschedule/internal/campaign/plan"
	"github.com/unschedule/unschedule/internal/campaign/provision"
	"github.com/unschedule/unschedule/internal/campaign/reconciler"
	"github.com/unschedule/unschedule/internal/campaign/send"
	"github.com/unschedule/unschedule/internal/campaign/suppress"
	"github.com/unschedule/unschedule/internal/campaign/unsubscribe"
	"github.com/unschedule/unschedule/internal/clock"
)

// Outbox is where a campaign email lands (the dev server's outbox): to,
// on behalf of owner (the campaign's owner sees it in their outbox).
type Outbox interface {
	AppendCampaignEmail(owner string, m campaign.Message, at time.Time) (messageID string, err error)
}

// Config configures a Runtime. Outbox is required.
type Config struct {
	Outbox Outbox
	// Clock is the time the services read. Default: the wall clock.
	Clock campaign.Clock
	// Log receives every log line. Default: slog.Default().
	Log *slog.Logger
	// Origins are the allowed CORS origins of the API. Default: none.
	Origins []string
	// UnsubscribeBase is the unsubscribe URL the emails link (with
	// ?token=). Default: DefaultUnsubscribeBase.
	UnsubscribeBase string
}

// target names where the in-process schedules deliver: the in-process
// send worker (the names only label the requests).
var target = campaign.Target{GroupName: "dev-campaigns", FunctionArn: "dev:send", RoleArn: "dev:scheduler-role", DeadLetterArn: "dev:dead-letters"}

// Runtime is the campaign services in one process.
type Runtime struct {
	Store     *Store
	Hub       *Hub
	API       *campaignapi.Handler
	Scheduler *inmem.Scheduler
	// Suppressions is the suppression list of DevSender; Unsubscribe
	// serves the emails' unsubscribe links (ServeUnsubscribe).
	Suppressions *suppress.Memory
	Unsubscribe  *unsubscribe.Page
	worker       *send.Worker
	provision    *provision.Provisioner
	reconciler   *reconciler.Reconciler
	clock        campaign.Clock
	log          *slog.Logger

	ctx    context.Context // the runtime's life: provisioning and dispatches run under it
	stop   context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	errors map[string]int // schedule name -> failed fires (its retries)
	fireMu sync.Mutex     // one FireDue at a time (the ticker and a test's clock advance)
}

// New wires the campaign services over in-memory stand-ins.
func New(cfg Config) (*Runtime, error) {
	if cfg.Outbox == nil {
		return nil, errors.New("campaigndev: an outbox is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	rt := &Runtime{Hub: NewHub(), Scheduler: inmem.NewScheduler(nil), clock: cfg.Clock, log: cfg.Log, errors: map[string]int{}}
	rt.ctx, rt.stop = context.WithCancel(context.Background())
	rt.Store = NewStore(rt.Hub, cfg.Clock, cfg.Log)
	sender := &outboxSender{outbox: cfg.Outbox, campaigns: rt.Store, clock: cfg.Clock, sent: map[string]campaign.Receipt{}}
	var err error
	if rt.worker, err = send.New(rt.Store, rt.Store, sender, cfg.Clock, 0); err != nil {
		return nil, err
	}
	if err := rt.deliverability(cfg.UnsubscribeBase); err != nil {
		return nil, err
	}
	if rt.provision, err = provision.New(provision.Config{Target: target}, rt.Store, rt.Store, rt.Scheduler, provision.NewMemoryCheckpoints(), cfg.Clock); err != nil {
		return nil, err
	}
	if rt.reconciler, err = reconciler.New(reconciler.Config{Target: target}, rt.Store, rt.Store, rt.Scheduler, sender, dispatcher{rt}, cfg.Clock); err != nil {
		return nil, err
	}
	c, err := cancel.New(rt.Store, rt.Store, rt.Scheduler, cfg.Clock, target.GroupName, uint64(time.Now().UnixNano()))
	if err != nil {
		return nil, err
	}
	c.Margin = 5 * time.Second // as the API function's main sets it: of the request's 29 s
	if rt.API, err = campaignapi.New(rt.Store, starter{rt}, c, cfg.Clock, nil, cfg.Origins, campaignapi.DefaultSenderGroup, cfg.Log); err != nil {
		return nil, err
	}
	return rt, nil
}

// Close stops provisioning runs and dispatched sends, and waits for them.
func (rt *Runtime) Close() {
	rt.stop()
	rt.wg.Wait()
}

// Wait waits for the provisioning runs and dispatched sends started so
// far (tests: call it when nothing starts new ones).
func (rt *Runtime) Wait() { rt.wg.Wait() }

// ProvisionBudget is a provisioning run's deadline, as the function's
// 15-minute timeout is; a run that stops at it continues at once (the
// self re-invoke).
const ProvisionBudget = 15 * time.Minute

// starter runs provisioning in the background (the asynchronous invoke
// of the provisioning function), continuing while a run asks to.
type starter struct{ rt *Runtime }

func (s starter) Start(_ context.Context, id string) error {
	rt := s.rt
	if rt.ctx.Err() != nil {
		return errors.New("campaigndev: the server is stopping")
	}
	rt.wg.Go(func() {
		for {
			res, err := rt.provision.Run(rt.ctx, id, rt.clock.Now().Add(ProvisionBudget))
			if err != nil {
				rt.log.Error("campaign provisioning failed", "campaignId", id, "error", err.Error())
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

// dispatcher hands a task to the send worker at once (the reconciler's
// asynchronous invoke of the send function).
type dispatcher struct{ rt *Runtime }

func (d dispatcher) Dispatch(_ context.Context, e campaign.FireEvent) error {
	d.rt.wg.Go(func() { d.rt.handle(d.rt.ctx, e, "dispatch") })
	return nil
}

func (rt *Runtime) handle(ctx context.Context, e campaign.FireEvent, how string) error {
	out, err := rt.worker.Handle(ctx, e)
	log := rt.log.With("campaignId", e.CampaignID, "taskId", e.TaskID, "via", how, "outcome", string(out))
	if err != nil {
		log.Error("campaign send failed", "error", err.Error())
		return err
	}
	log.Info("campaign send handled")
	return nil
}

// FireDue runs every schedule whose at() time has come, as the scheduler
// does: the schedule is deleted (ActionAfterCompletion DELETE) once its
// fire succeeded or its campaign.ScheduleRetries retries are used up (a
// dead letter, logged); a failed fire is tried again on a later call. It
// returns how many schedules fired.
func (rt *Runtime) FireDue(ctx context.Context) int {
	rt.fireMu.Lock()
	defer rt.fireMu.Unlock()
	now := rt.clock.Now()
	type due struct {
		name string
		at   time.Time
		req  campaign.ScheduleRequest
	}
	var ready []due
	for name, r := range rt.Scheduler.Schedules() {
		at, err := AtTime(r.Expression, r.Timezone)
		if err != nil {
			rt.log.Error("campaign schedule dropped: unreadable expression", "schedule", name, "error", err.Error())
			rt.Scheduler.Remove(name)
			continue
		}
		if !at.After(now) {
			ready = append(ready, due{name, at, r})
		}
	}
	sort.Slice(ready, func(i, j int) bool { return ready[i].at.Before(ready[j].at) })
	for _, d := range ready {
		e, err := campaign.DecodeFire([]byte(d.req.Input))
		if err == nil {
			err = rt.handle(ctx, e, "schedule")
		}
		rt.mu.Lock()
		if err != nil && ctx.Err() == nil && rt.errors[d.name] < d.req.MaximumRetryAttempts {
			rt.errors[d.name]++
			rt.mu.Unlock()
			continue // retried on a later call
		}
		if err != nil {
			rt.log.Error("campaign schedule dead-lettered after its retries", "schedule", d.name, "error", err.Error())
		}
		delete(rt.errors, d.name)
		rt.mu.Unlock()
		rt.Scheduler.Remove(d.name)
	}
	return len(ready)
}

var atRE = regexp.MustCompile(`^at\((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\)$`)

// AtTime is the instant of a one-time schedule expression at(<local>)
// evaluated in zone.
func AtTime(expr, zone string) (time.Time, error) {
	m := atRE.FindStringSubmatch(expr)
	if m == nil {
		return time.Time{}, fmt.Errorf("expression %q is not at(YYYY-MM-DDTHH:MM:SS)", expr)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return time.Time{}, fmt.Errorf("zone %q: %w", zone, err)
	}
	return time.ParseInLocation(plan.LocalLayout, m[1], loc)
}

// Reconcile runs one reconciler pass.
func (rt *Runtime) Reconcile(ctx context.Context) (reconciler.Result, error) {
	return rt.reconciler.Run(ctx, rt.clock.Now().Add(5*time.Minute))
}

// Run fires due schedules every step and runs the reconciler every
// reconcileEvery (and at start), until ctx ends.
func (rt *Runtime) Run(ctx context.Context, step, reconcileEvery time.Duration) {
	fire := time.NewTicker(step)
	defer fire.Stop()
	rec := time.NewTicker(reconcileEvery)
	defer rec.Stop()
	reconcile := func() {
		res, err := rt.Reconcile(ctx)
		if err != nil && ctx.Err() == nil {
			rt.log.Error("campaign reconcile failed", "error", err.Error())
		} else if res.Checked > 0 {
			rt.log.Info("campaign reconcile pass", "result", fmt.Sprintf("%+v", res))
		}
	}
	reconcile()
	for {
		select {
		case <-ctx.Done():
			return
		case <-fire.C:
			rt.FireDue(ctx)
		case <-rec.C:
			reconcile()
		}
	}
}

// outboxSender is the campaign.Sender of make dev: each message lands in
// the outbox once per idempotency key, on behalf of the campaign's owner.
type outboxSender struct {
	outbox    Outbox
	campaigns campaign.Campaigns
	clock     campaign.Clock
	mu        sync.Mutex
	sent      map[string]campaign.Receipt
}

// ownerOf reads the owner of the campaign whose task the key
// (send-<campaign id>-<index>, SendTask.IdempotencyKey) names.
func (s *outboxSender) ownerOf(ctx context.Context, key string) (string, error) {
	id := strings.TrimPrefix(key, "send-")
	if i := strings.LastIndexByte(id, '-'); i > 0 {
		id = id[:i]
	}
	c, err := s.campaigns.Campaign(ctx, id)
	if err != nil {
		return "", fmt.Errorf("owner of %s: %w", key, err)
	}
	return c.OwnerID, nil
}

func (s *outboxSender) Send(ctx context.Context, m campaign.Message) (campaign.Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.sent[m.IdempotencyKey]; ok {
		return r, nil
	}
	owner, err := s.ownerOf(ctx, m.IdempotencyKey)
	if err != nil {
		return campaign.Receipt{}, err
	}
	at := s.clock.Now().UTC()
	id, err := s.outbox.AppendCampaignEmail(owner, m, at)
	if err != nil {
		return campaign.Receipt{}, fmt.Errorf("outbox: %w: %w", err, campaign.ErrRetryable)
	}
	r := campaign.Receipt{MessageID: id, SentAt: at}
	s.sent[m.IdempotencyKey] = r
	return r, nil
}

func (s *outboxSender) Sent(_ context.Context, key string) (campaign.Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.sent[key]; ok {
		return r, nil
	}
	return campaign.Receipt{}, campaign.ErrNotSent
}
