package sim

// The seam between the campaign workload (campaign.go) and the services
// it runs: it builds them over in-memory ports and wires the faults in.

import (
	"context"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer/paced"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// campaignServices are one campaign's services over in-memory ports on
// the history's clock, its sends armed on the history's timer.
type campaignServices struct {
	store  *memory.CampaignStore
	sched  *inmem.Remote
	sender *memory.CampaignSender
	// owners is the sender group, asked through a cache of
	// campaign.SenderCacheTTL, as the functions do.
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

func (r refusals) Check(ctx context.Context, owner string) (campaign.Verdict, error) {
	v, err := r.SenderCheck.Check(ctx, owner)
	if err == nil && !v.Allowed && r.first.IsZero() {
		*r.first = r.clk.Now()
	}
	return v, err
}

// allowAll is the mutant's sender check: every owner may send.
type allowAll struct{}

func (allowAll) Check(context.Context, string) (campaign.Verdict, error) {
	return campaign.Allow(), nil
}

// buildServices stores the campaign and its tasks and builds the services
// on the timer's stand-in, with the history's campaign mutations; seed
// fixes their jitter, pageSize the provisioner's page.
func (w *campaignWorld) buildServices(tasks []campaign.SendTask, seed uint64, pageSize int) error {
	clk, m := w.clock, w.cfg.Mutation
	p := &w.campaignServices
	p.store, p.sched, p.sender = memory.NewCampaignStore(), inmem.NewRemote(w.e.Timer, nil), memory.NewCampaignSender(clk)
	p.owners, p.cps = memory.NewCampaignSenders(w.c.OwnerID), memory.NewCampaignCheckpoints()
	p.store.PutCampaign(w.c)
	p.store.PutTasks(tasks...)
	p.sched.Fault = w.schedulerCall
	p.sender.Fault = w.sendCall
	var sender campaign.Sender = crashingSender{p.sender, w}
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
		return err
	}
	var owners campaign.SenderCheck = cached
	if m.CampaignIgnoreRemoval {
		owners = allowAll{}
	}
	check := refusals{SenderCheck: owners, clk: clk, first: &p.refused}
	if p.worker, err = send.New(crashingTasks{p.store, w}, p.store, sender, check, workerClock, send.DefaultLease); err != nil {
		return err
	}
	// The reconciler function's caller: one call in flight, throttles
	// and errors retried.
	caller, err := paced.New(paced.Config{Concurrency: 1, CallsPerSecond: campaign.DefaultReconcileCallsPerSecond, Seed: seed}, clk)
	if err != nil {
		return err
	}
	p.recon = campaign.ReconcilePorts{Tasks: p.store, Campaigns: p.store, Timer: p.sched, Sender: recorded, Owners: check,
		Dispatcher: dispatcher{w}, Clock: clk, Caller: caller, Checkpoints: &inmem.Checkpoints{}, Log: discard}
	if p.canc, err = campaigncancel.New(p.store, p.store, p.sched, clk, seed); err != nil {
		return err
	}
	// One call in flight and one task handed out at a time keep the
	// history repeatable (the provision tests cover concurrency).
	p.prov, err = provision.New(provision.Config{Concurrency: 1, MaxAhead: 1, PageSize: pageSize,
		Seed: seed, MaxErrorAttempts: 3}, p.store, p.store, check, p.sched, p.cps, clk)
	return err
}

// reconcileMargin is how long before its deadline a reconciler pass
// stops (campaignlambda.ReconcileMargin).
const reconcileMargin = time.Minute

// reconcile runs one pass of the core reconciler with the campaign's
// rules, as the reconciler function does, its budget up to deadline.
func (p *campaignServices) reconcile(ctx context.Context, deadline time.Time) (reconcile.Result, campaign.RepairCounts, error) {
	if budget := deadline.Sub(p.recon.Clock.Now()) - reconcileMargin; p.rec == nil || budget != p.budget {
		var err error
		p.rules, p.budget = &campaign.Repair{}, budget
		if p.rec, err = campaign.NewReconciler(reconcile.Config{Budget: budget}, p.rules, p.recon); err != nil {
			return reconcile.Result{}, campaign.RepairCounts{}, err
		}
	}
	res, err := p.rec.Run(ctx)
	return res, p.rules.Counts(), err
}

// crashingSender crashes the worker before the send, after its claim.
type crashingSender struct {
	*memory.CampaignSender
	w *campaignWorld
}

func (s crashingSender) Send(ctx context.Context, m campaign.Message) (campaign.Receipt, error) {
	if s.w.inject(FaultCrashAfterClaim, 0.04) {
		panic(errCampaignCrash)
	}
	return s.CampaignSender.Send(ctx, m)
}

// crashingTasks crashes the worker after its send, before its write.
type crashingTasks struct {
	*memory.CampaignStore
	w *campaignWorld
}

func (s crashingTasks) Replace(ctx context.Context, prev, next campaign.SendTask) error {
	if prev.State == campaign.Running && s.w.inject(FaultCrashAfterPublish, 0.04) {
		panic(errCampaignCrash)
	}
	return s.CampaignStore.Replace(ctx, prev, next)
}

// noIdempotency is a mutant sender that keeps no record of what it sent:
// a repeated send goes out again, under a key of its own.
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

// dispatcher hands the reconciler's overdue tasks to the send function.
type dispatcher struct{ w *campaignWorld }

func (d dispatcher) Dispatch(_ context.Context, e campaign.FireEvent) error {
	d.w.dispatched(e)
	return nil
}
