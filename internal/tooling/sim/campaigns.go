package sim

// The seam between the campaign workload (campaign.go) and the services
// it runs: it builds them over in-memory ports and wires the faults in.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/unschedule/unschedule/contract"
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
	remote *inmem.Remote
	sender *memory.CampaignSender
	// owners is the sender group, asked through a cache of
	// campaign.SenderCacheTTL, as the functions do.
	owners *memory.CampaignSenders
	worker *send.Worker
	// rec is the reconciler function's pass, with the campaign's rules.
	rec   *reconcile.Reconciler
	rules *campaign.Repair
	canc  *campaigncancel.Canceller
	prov  *provision.Provisioner
	cps   *memory.CampaignCheckpoints
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

// buildServices stores the campaign and its tasks and builds the services
// on the timer's stand-in, with the history's campaign mutations; seed
// fixes their jitter, pageSize the provisioner's page.
func (w *campaignWorld) buildServices(tasks []campaign.SendTask, seed uint64, pageSize int) error {
	clk, m := w.clock, w.cfg.Mutation
	p := &w.campaignServices
	p.store, p.remote, p.sender = memory.NewCampaignStore(), inmem.NewRemote(w.e.Timer, nil), memory.NewCampaignSender(clk)
	p.owners, p.cps = memory.NewCampaignSenders(w.c.OwnerID), memory.NewCampaignCheckpoints()
	p.store.PutCampaign(w.c)
	p.store.PutTasks(tasks...)
	p.remote.Fault = w.schedulerCall
	p.sender.Fault = w.sendCall
	var sender campaign.Sender = crashingSender{p.sender, w}
	recorded := campaign.Sender(p.sender)
	if m.CampaignSender != nil {
		sender = m.CampaignSender(sender)
		recorded = sender
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
	if m.CampaignOwners != nil {
		owners = m.CampaignOwners(owners)
	}
	check := refusals{SenderCheck: owners, clk: clk, first: &p.refused}
	if p.worker, err = send.New(crashingTasks{p.store, w}, p.store, sender, check, workerClock, send.DefaultLease); err != nil {
		return err
	}
	// The reconciler function: its caller has one call in flight and
	// retries throttles and errors; a pass stops a minute before the
	// function's 15-minute timeout (campaignlambda.ReconcileMargin).
	caller, err := paced.New(paced.Config{Concurrency: 1, CallsPerSecond: campaign.DefaultReconcileCallsPerSecond, Seed: seed}, clk)
	if err != nil {
		return err
	}
	p.rules = &campaign.Repair{}
	if p.rec, err = campaign.NewReconciler(reconcile.Config{Budget: 14 * time.Minute}, p.rules, campaign.ReconcilePorts{Tasks: p.store,
		Campaigns: p.store, Timer: p.remote, Sender: recorded, Owners: check, Dispatcher: dispatcher{w}, Clock: clk, Caller: caller,
		Checkpoints: &inmem.Checkpoints{}, Log: discard}); err != nil {
		return err
	}
	if p.canc, err = campaigncancel.New(p.store, p.store, p.remote, clk, seed); err != nil {
		return err
	}
	// One call in flight and one task handed out at a time keep the
	// history repeatable (the provision tests cover concurrency).
	p.prov, err = provision.New(provision.Config{Concurrency: 1, MaxAhead: 1, PageSize: pageSize,
		Seed: seed, MaxErrorAttempts: 3}, p.store, p.store, check, p.remote, p.cps, clk)
	return err
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

// dispatcher hands the reconciler's overdue tasks to the send function:
// a dispatch is no schedule, its name carries the reconciler's input.
type dispatcher struct{ w *campaignWorld }

func (d dispatcher) Dispatch(_ context.Context, e campaign.FireEvent) error {
	d.w.res.Faults[FaultSendDispatched]++
	b, _ := json.Marshal(e) // two strings always marshal
	d.w.e.Invoke(contract.Schedule{Name: string(b)}, d.w.clock.Now().Add(time.Second), 0)
	return nil
}
