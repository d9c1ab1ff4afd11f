package sim

// The seam between the campaign workload (campaign.go) and the campaign
// services it runs: the one file that builds the in-memory ports, the
// provisioner, the send worker, the reconciler and the canceller, and
// wires the workload's fault hooks into them. When those services change
// shape, this file changes; the workload's history and its invariants
// speak only to campaignPorts.

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/paced"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// campaignHooks are the workload's faults and observers, asked by the
// ports at the moments they can strike.
type campaignHooks interface {
	// schedulerCall is asked before each timer call (op "Arm", "Move",
	// "Disarm", "Get", "List": the port's verbs): a non-nil error is returned
	// instead; with lost set the call takes effect and its answer is
	// lost.
	schedulerCall(op, name string) (err error, lost bool)
	// sendCall is asked before the sender sends m (a bounce, a retryable
	// error).
	sendCall(m campaign.Message) error
	// crashAfterClaim and crashAfterSend crash the send worker (it panics
	// with errCampaignCrash) after its claim, before the send; or after
	// the send, before the task's write.
	crashAfterClaim(m campaign.Message) bool
	crashAfterSend(next campaign.SendTask) bool
	// dispatched: the reconciler handed an overdue task to the send
	// function.
	dispatched(e campaign.FireEvent)
}

// provisionRun is what one provisioning run did.
type provisionRun struct {
	Next, Created, Errors, Calls, Throttles int
	Continue, Done                          bool
}

// reconcilePass is what one reconciler pass did.
type reconcilePass struct {
	Recovered, Recreated, Retimed, Dispatched int
	// Busy: the pass did more than check.
	Busy bool
	Line string
}

// campaignPorts is one campaign's services over in-memory ports on the
// history's clock, its sends armed on the history's timer.
type campaignPorts struct {
	store  *memory.CampaignStore
	sched  *inmem.Remote
	sender *memory.CampaignSender
	// owners is the sender group, which holds the campaign's owner until
	// the history removes them; the services ask it through a cache of
	// campaign.SenderCacheTTL on the history's clock, as the functions do.
	owners *memory.CampaignSenders
	worker *send.Worker
	recon  campaign.ReconcilePorts
	// rec and rules are the reconciler built for budget (rebuilt when a
	// pass gets another).
	rec    *reconcile.Reconciler
	rules  *campaign.Repair
	budget time.Duration
	canc   *campaigncancel.Canceller
	prov   *provision.Provisioner
	cps    *memory.CampaignCheckpoints
	// refused is when a service was first told that the owner may no
	// longer send (zero: never): from then on the services cancel.
	refused time.Time
}

// refusals records, on the history's clock, the first verdict of check
// that refuses the owner: when the services learnt of the removal.
type refusals struct {
	campaign.SenderCheck
	clk   campaign.Clock
	first *time.Time
}

// allowAll is the mutant's sender check: every owner may send.
type allowAll struct{}

func (allowAll) Check(context.Context, string) (campaign.Verdict, error) {
	return campaign.Allow(), nil
}

func (r refusals) Check(ctx context.Context, owner string) (campaign.Verdict, error) {
	v, err := r.SenderCheck.Check(ctx, owner)
	if err == nil && !v.Allowed && r.first.IsZero() {
		*r.first = r.clk.Now()
	}
	return v, err
}

// newCampaignPorts stores c and its tasks and builds the services on
// the timer's stand-in t, with m's
// campaign mutations; seed fixes their jitter, pageSize the
// provisioner's page.
func newCampaignPorts(c campaign.Campaign, tasks []campaign.SendTask, clk *clock.Fake, t inmem.TimerScheduler, h campaignHooks, m Mutation, seed uint64, pageSize int) (*campaignPorts, error) {
	p := &campaignPorts{store: memory.NewCampaignStore(), sched: inmem.NewRemote(t, nil),
		sender: memory.NewCampaignSender(clk), owners: memory.NewCampaignSenders(c.OwnerID), cps: memory.NewCampaignCheckpoints()}
	p.store.PutCampaign(c)
	p.store.PutTasks(tasks...)
	p.sched.Fault = func(op, name string) (error, bool) { return h.schedulerCall(op, name) }
	p.sender.Fault = h.sendCall
	var sender campaign.Sender = crashingSender{p.sender, h}
	recorded := campaign.Sender(p.sender)
	if m.CampaignNoIdempotency {
		mut := &noIdempotency{Sender: sender, seen: map[string]int{}}
		sender, recorded = mut, mut
	}
	var workerClock campaign.Clock = clk
	if m.CampaignWorkerAhead != 0 {
		workerClock = clock.Func(func() time.Time { return clk.Now().Add(m.CampaignWorkerAhead) })
	}
	cached, err := campaign.NewCachedSenderCheck(p.owners, campaign.SenderCacheTTL, clk)
	if err != nil {
		return nil, err
	}
	var owners campaign.SenderCheck = cached
	if m.CampaignIgnoreRemoval {
		owners = allowAll{}
	}
	check := refusals{SenderCheck: owners, clk: clk, first: &p.refused}
	if p.worker, err = send.New(crashingTasks{p.store, h}, p.store, sender, check, workerClock, send.DefaultLease); err != nil {
		return nil, err
	}
	// The reconciler function's caller: one call in flight, throttles
	// and errors retried.
	caller, err := paced.New(paced.Config{Concurrency: 1, CallsPerSecond: campaign.DefaultReconcileCallsPerSecond, Seed: seed}, clk)
	if err != nil {
		return nil, err
	}
	p.recon = campaign.ReconcilePorts{Tasks: p.store, Campaigns: p.store, Timer: p.sched, Sender: recorded, Owners: check,
		Dispatcher: dispatcher{h}, Clock: clk, Caller: caller, Checkpoints: &inmem.Checkpoints{},
		Log: slog.New(slog.DiscardHandler)}
	if p.canc, err = campaigncancel.New(p.store, p.store, p.sched, clk, seed); err != nil {
		return nil, err
	}
	// One call in flight and one task handed out at a time keep the
	// history repeatable (the provision tests cover concurrency).
	p.prov, err = provision.New(provision.Config{Concurrency: 1, MaxAhead: 1, PageSize: pageSize,
		Seed: seed, MaxErrorAttempts: 3}, p.store, p.store, check, p.sched, p.cps, clk)
	return p, err
}

// provisionMargin is how long before its deadline a provisioning run
// stops.
const provisionMargin = provision.DefaultMargin

func (p *campaignPorts) provision(ctx context.Context, id string, deadline time.Time) (provisionRun, error) {
	res, err := p.prov.Run(ctx, id, deadline)
	return provisionRun{Next: res.Next, Created: res.Created, Errors: res.Errors, Calls: res.Calls, Throttles: res.Throttles,
		Continue: res.Continue, Done: res.Done}, err
}

// savedCheckpoint is where the next provisioning run resumes.
func (p *campaignPorts) savedCheckpoint(id string) int {
	cp, _ := p.cps.Load(context.Background(), id)
	return cp.Next
}

// fire invokes the send worker once with a schedule's (or a dispatch's)
// event; it panics with errCampaignCrash when a hook crashes it.
func (p *campaignPorts) fire(ctx context.Context, e campaign.FireEvent) (string, error) {
	out, err := p.worker.Handle(ctx, e)
	return string(out), err
}

// reconcileMargin is how long before its deadline a reconciler pass
// stops (campaignlambda.ReconcileMargin).
const reconcileMargin = time.Minute

// reconcile runs one pass of the core reconciler with the campaign's
// rules, as the reconciler function does, its budget up to deadline.
func (p *campaignPorts) reconcile(ctx context.Context, deadline time.Time) (reconcilePass, error) {
	if budget := deadline.Sub(p.recon.Clock.Now()) - reconcileMargin; p.rec == nil || budget != p.budget {
		var err error
		p.rules, p.budget = &campaign.Repair{}, budget
		if p.rec, err = campaign.NewReconciler(reconcile.Config{Budget: budget}, p.rules, p.recon); err != nil {
			return reconcilePass{}, err
		}
	}
	res, err := p.rec.Run(ctx)
	n := p.rules.Counts()
	busy := res.Repaired() > 0 || res.Errors > 0 || res.ItemsMoved+res.ItemsRearmed+res.ItemsEnded > 0 || n != (campaign.RepairCounts{})
	return reconcilePass{Recovered: n.Finished + n.Requeued, Recreated: res.SchedulesCreated, Retimed: n.Retimed, Dispatched: res.ItemsFired,
		Busy: busy, Line: fmt.Sprintf("%+v %+v", res, n)}, err
}

func (p *campaignPorts) cancel(ctx context.Context, id, reason string, deadline time.Time) (string, error) {
	res, err := p.canc.Cancel(ctx, id, reason, deadline)
	return fmt.Sprintf("%+v", res), err
}

// schedules are what the timer holds.
func (p *campaignPorts) schedules() []timer.Schedule { return p.sched.All() }

func (p *campaignPorts) tasks(id string) []campaign.SendTask { return p.store.All(id) }
func (p *campaignPorts) open(id string) int                  { return p.store.CountOpen(id) }

func (p *campaignPorts) campaign(id string) campaign.Campaign {
	c, _ := p.store.Campaign(context.Background(), id)
	return c
}

// outbox is every message the sender sent; receipt is the sender's record
// of one.
func (p *campaignPorts) outbox() []campaign.Message { return p.sender.Outbox }
func (p *campaignPorts) receipt(key string) (campaign.Receipt, error) {
	return p.sender.Sent(context.Background(), key)
}

// crashingSender crashes the worker before the send, after its claim.
type crashingSender struct {
	*memory.CampaignSender
	h campaignHooks
}

func (s crashingSender) Send(ctx context.Context, m campaign.Message) (campaign.Receipt, error) {
	if s.h.crashAfterClaim(m) {
		panic(errCampaignCrash)
	}
	return s.CampaignSender.Send(ctx, m)
}

// crashingTasks crashes the worker after its send, before its write.
type crashingTasks struct {
	*memory.CampaignStore
	h campaignHooks
}

func (s crashingTasks) Replace(ctx context.Context, prev, next campaign.SendTask) error {
	if prev.State == campaign.Running && s.h.crashAfterSend(next) {
		panic(errCampaignCrash)
	}
	return s.CampaignStore.Replace(ctx, prev, next)
}

// noIdempotency is a mutant sender that keeps no record of what it sent:
// Sent never finds a message, and a repeated send goes out again (under
// a key of its own in the outbox).
type noIdempotency struct {
	campaign.Sender
	seen map[string]int
}

func (s *noIdempotency) Send(ctx context.Context, m campaign.Message) (campaign.Receipt, error) {
	k := m.IdempotencyKey
	if n := s.seen[k]; n > 0 {
		m.IdempotencyKey = fmt.Sprintf("%s#%d", k, n)
	}
	rc, err := s.Sender.Send(ctx, m)
	if err == nil {
		s.seen[k]++
	}
	return rc, err
}

func (s *noIdempotency) Sent(_ context.Context, key string) (campaign.Receipt, error) {
	return campaign.Receipt{}, fmt.Errorf("%s: %w", key, campaign.ErrNotSent)
}

type dispatcher struct{ h campaignHooks }

func (d dispatcher) Dispatch(_ context.Context, e campaign.FireEvent) error {
	d.h.dispatched(e)
	return nil
}
