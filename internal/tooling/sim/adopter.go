package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// AdopterMutation breaks one guarantee of an adopter's workload (future
// events, deferred jobs) on purpose. The zero value breaks nothing.
type AdopterMutation struct {
	// ClaimAlways: the firing core's claim writes without its condition
	// (every firing claims the item again and runs the target).
	ClaimAlways bool
	// ClockAhead: the firing core's clock runs this far ahead, so it takes
	// an early firing for one on time.
	ClockAhead time.Duration
	// NoReconcile: the reconciler sees no item, so a lost timer is never
	// armed again.
	NoReconcile bool
	// CancelAlways (future events): the table deletes on Cancel without
	// its condition, a fired event included.
	CancelAlways bool
	// AllTargets (future events): the dispatcher allows every target.
	AllTargets bool
	// WriteAlways (deferred jobs): the table puts MarkActivity's item
	// without its condition, over a fired one included.
	WriteAlways bool
}

// adopter is a history of an adopter of the scheduling core on its own
// schema: its items in inmem.Items, the shared stream path (stages),
// the history's timer with its faults, the firing core (fire.Core) with
// the adopter's target, and the core's reconciler (reconcile over
// inmem.Armed), all with the task workload's faults. The workload
// (futureevents.go, deferredjobs.go) writes the items through the
// adopter's own client and checks its invariants; inv names the
// invariants with its letter (F, J).
type adopter struct {
	core
	stages
	ctx    context.Context
	clock  *inproc.Clock
	schema contract.Schema
	items  *inmem.Items
	sched  inmem.TimerScheduler
	fsched faultyScheduler
	fire   *fire.Core
	target fire.Deliverer
	recon  *reconcile.Reconciler
	check  *reconcile.Reconciler
	invs   []invocation
	dead   []invocation
	// dupAllowed counts, per item, the faults that may each cause one
	// extra run of the target (a crash after it ran, a lost record of it).
	dupAllowed map[contract.Key]int
	// refused reports a failure the workload expects of the target (an
	// unregistered future event's): no loss, and it stays in the DLQ;
	// refusedNames are the timers whose firing it refused.
	refused      func(err error) bool
	refusedNames map[string]bool
	// step is how far one tick moves the clock.
	step   func() time.Duration
	letter string
	log    *slog.Logger
}

func (a *adopter) inv(n int) string { return fmt.Sprintf("%s%d", a.letter, n) }

// newAdopter builds the core's pipeline for schema s from start; the
// workload sets target (what the firing core runs after a claim) before
// the history.
func newAdopter(cfg Config, s contract.Schema, letter string, lossInv int, begin time.Time) *adopter {
	a := &adopter{core: newCore(cfg), ctx: context.Background(), schema: s, letter: letter,
		dupAllowed: map[contract.Key]int{}, refusedNames: map[string]bool{}, refused: func(error) bool { return false }}
	a.log = slog.New(slog.DiscardHandler)
	a.clock = inproc.NewClock(begin)
	a.now, a.epoch = a.clock.Now, begin
	a.items = inmem.NewItems(s)
	a.stages = newStages(&a.core, a.ctx, a.clock, a.inv(lossInv))
	a.feed = a.items
	a.dedupID = cfg.Mutation.DedupID
	a.shardKey = func(c changefeed.Change) string { return c.Key.String() }
	// One blame for all: a fault in the batch excuses its failures.
	a.blameKey = func(string) string { return "" }
	a.sched = a.newTimer()
	if sc, ok := a.sched.(*inmem.Scheduler); ok {
		sc.ListPrefix = s.ScheduleNamePrefix
	}
	a.fsched = faultyScheduler{w: &a.core, in: a.sched, blame: func(string) { a.blame("") }}
	now := a.clock.Now
	if d := cfg.Mutation.Adopter.ClockAhead; d > 0 {
		now = func() time.Time { return a.clock.Now().Add(d) }
	}
	var err error
	a.fire, err = fire.New(fire.Config{Schema: s, Store: faultyItems{a: a}, Now: now, Log: a.log})
	must(err)
	a.proc, err = cancel.NewProcessor(s, enqueuer{&a.stages}, nil, a.log)
	must(err)
	a.worker, err = cancel.NewWorker(s, a.fsched, nil, a.log)
	must(err)
	a.worker.SetClock(a.clock.Now)
	// The reconciler lists the items through the state-keyed armed index
	// (the partitions of a table the core creates), its fired window
	// wider than any history so that every fired item stays listed.
	index := armedindex.Spec{FiredWithinSec: 30 * 86400}.WithDefaults(s)
	a.items.IndexKeys = []string{index.PartitionAttr, s.DueAttr}
	var items reconcile.Items = inmem.Armed{Items: a.items, Index: &index, Now: a.clock.Now}
	if cfg.Mutation.Adopter.NoReconcile {
		items = noItems{}
	}
	deps := reconcile.Deps{Schema: s, Items: items, Scheduler: a.fsched, Schedules: a.fsched,
		Firer: fire.Firing{Core: a.fire, Target: reconTarget{a}}, Checkpoints: &inmem.Checkpoints{},
		Clock: a.clock, Sleep: a.clock.Sleep, Log: a.log}
	a.recon, err = reconcile.New(reconcile.Config{Budget: time.Duration(2+a.rng.Intn(30)) * time.Second,
		PageSize: 2 + a.rng.Intn(20)}, deps)
	must(err)
	deps.Checkpoints = &inmem.Checkpoints{}
	a.check, err = reconcile.New(reconcile.Config{Budget: 24 * time.Hour, PageSize: 1 + a.rng.Intn(50)}, deps)
	must(err)
	a.addShards()
	return a
}

// history runs ticks busy ticks (ops writes this instant's items), then
// on, with faults, past the last due time; then the faults stop, the
// pipeline drains, the clock passes the grace period (and on the TTL
// timer the latest deletion), the operator redrives the dead-letter
// queue and a fault-free reconciler pass runs. The workload checks after.
func (a *adopter) history(ticks int, ops func()) {
	a.faultsOn = true
	for range ticks {
		a.tick(ops)
	}
	end := a.lastDue().Add(grace + time.Minute)
	for a.clock.Now().Before(end) {
		a.skipIdle(end)
		a.tick(nil)
	}
	a.faultsOn = false
	a.settle()
	a.clock.Advance(grace + time.Minute)
	if k := kindOf(a.cfg.Timer); k.FiresWithin > 0 {
		a.clock.Advance(k.FiresWithin)
	}
	for _, inv := range a.dead {
		a.res.Faults[FaultDLQRedriven]++
		inv.attempts, inv.at = 0, a.clock.Now()
		a.invs = append(a.invs, inv)
	}
	a.dead = nil
	a.quiesce()
	a.checkQueue()
	if len(a.invs) > 0 {
		a.violate(a.lossInv, "%d invocations still waiting", len(a.invs))
	}
	for _, inv := range a.dead {
		if !a.refusedNames[inv.s.Name] {
			a.violate(a.lossInv, "the firing of %s is dead after the redrive", inv.s.Name)
		}
	}
}

func (a *adopter) tick(ops func()) {
	a.clock.Set(a.clock.Now().Truncate(time.Second).Add(a.step()))
	var acts []func()
	if ops != nil {
		for range a.rng.Intn(4) {
			acts = append(acts, ops)
		}
	}
	for range 1 + a.rng.Intn(3) {
		acts = append(acts, a.pump)
	}
	for range 1 + a.rng.Intn(3) {
		acts = append(acts, func() { a.deliver() })
	}
	acts = append(acts, a.fireDue, a.runDue)
	if a.faultsOn && a.inject(FaultReconcilerInterleaved, 0.03) {
		acts = append(acts, a.reconcile)
	}
	if a.faultsOn && a.chance(0.01) {
		acts = append(acts, a.loseTimer)
	}
	a.rng.Shuffle(len(acts), func(i, j int) { acts[i], acts[j] = acts[j], acts[i] })
	for _, f := range acts {
		f()
	}
}

// skipIdle moves the clock on to a few minutes before the next timer
// when nothing is in flight and that timer is more than half an hour
// away (a deferred job's next window is a week on): nothing happens in
// between but the interleaved reconciler runs, which the end's pass
// stands for.
func (a *adopter) skipIdle(end time.Time) {
	if !a.streamDone() || a.queue.Len() > 0 || len(a.invs) > 0 {
		return
	}
	next := end
	for _, sc := range a.sched.All() {
		if sc.At.Before(next) {
			next = sc.At
		}
	}
	if now := a.clock.Now(); next.Sub(now) > 30*time.Minute {
		a.clock.Set(next.Add(-time.Duration(1+a.rng.Intn(600)) * time.Second))
	}
}

// loseTimer loses one waiting timer (FaultTimerLost): the item stays
// armed, and only the reconciler arms it again, or fires it when overdue.
func (a *adopter) loseTimer() {
	all := a.sched.All()
	if len(all) == 0 {
		return
	}
	sc := all[a.rng.Intn(len(all))]
	a.count(FaultTimerLost)
	_ = a.sched.Disarm(a.ctx, sc.Name, sc.At)
	a.tracef("lost the timer %s at %s", sc.Name, contract.FormatTime(sc.At))
}

func (a *adopter) reconcile() {
	res, err := a.recon.Run(a.ctx)
	a.tracef("reconciler run: %+v %v", res, err)
}

// quiesce turns faults off, drains, runs a full reconciler pass (its
// errors are the refused targets' only) and drains again.
func (a *adopter) quiesce() {
	a.faultsOn = false
	a.settle()
	res, err := a.check.Run(a.ctx)
	if err != nil || !res.Completed || res.Errors > len(a.refusedNames) {
		a.violate(a.lossInv, "the fault-free reconciler pass did not complete cleanly: %+v, %v", res, err)
	}
	a.tracef("reconciler pass: %+v", res)
	a.settle()
}

func (a *adopter) settle() {
	for range 2000 {
		a.clock.Set(a.clock.Now().Truncate(time.Second).Add(5 * time.Second))
		for a.pumpAll() {
		}
		for a.deliver() {
		}
		a.fireDue()
		a.runDue()
		if a.streamDone() && a.queue.Len() == 0 && len(a.invs) == 0 {
			return
		}
	}
	a.violate(a.lossInv, "the pipeline did not settle: %d messages queued, %d invocations waiting", a.queue.Len(), len(a.invs))
}

// lastDue is the latest due time of an item or a timer (now if none).
func (a *adopter) lastDue() time.Time {
	last := a.clock.Now()
	for _, sc := range a.sched.All() {
		if sc.At.After(last) {
			last = sc.At
		}
	}
	all, _ := a.items.Changes(0)
	for _, c := range all {
		if c.New != nil && c.New.Due.After(last) && a.schema.Armed(*c.New) {
			last = c.New.Due
		}
	}
	return last
}

// fireDue hands the timers whose time came to the expiry function, with
// the timer's faults: early (the Scheduler's minute), late, twice.
func (a *adopter) fireDue() { a.invs = append(a.invs, a.firings(a.sched, a.clock.Now())...) }

func (a *adopter) runDue() {
	now := a.clock.Now()
	var due []invocation
	keep := a.invs[:0]
	for _, inv := range a.invs {
		if inv.at.After(now) {
			keep = append(keep, inv)
		} else {
			due = append(due, inv)
		}
	}
	a.invs = keep
	for _, inv := range due {
		a.invoke(inv)
	}
}

// invoke is one invocation of the expiry function with the timer's
// input: the firing core, then the target; retried after a failure, then
// dead-lettered.
func (a *adopter) invoke(inv invocation) {
	c0 := a.injected
	p, err := a.schema.DecodePayload([]byte(a.schema.EncodePayload(inv.s.Payload)))
	if err != nil {
		a.violate(a.lossInv, "timer %s has a payload the expiry function cannot read: %v", inv.s.Name, err)
		return
	}
	out, err := a.fire.Fire(a.ctx, p, a.target)
	a.tracef("%s due %s attempt %d: %s %v", inv.s.Name, contract.FormatTime(p.Due), inv.attempts+1, out, err)
	if err == nil {
		return
	}
	refused := a.refused(err)
	if refused {
		a.refusedNames[inv.s.Name] = true
	}
	if a.injected == c0 && !refused && !errors.Is(err, fire.ErrInProgress) && !firedEarly(inv, err) {
		a.violate(a.lossInv, "firing of %s failed without an injected fault: %v", p.Key, err)
	}
	inv.attempts++
	if inv.attempts >= maxAttempts {
		a.dead = append(a.dead, inv)
		return
	}
	inv.at = a.clock.Now().Add(time.Duration(inv.attempts) * time.Minute)
	a.invs = append(a.invs, inv)
}

// reconTarget is the target as the reconciler's firing runs it, traced.
type reconTarget struct{ a *adopter }

func (r reconTarget) Deliver(ctx context.Context, p contract.Payload) error {
	err := r.a.target.Deliver(ctx, p)
	if err != nil && r.a.refused(err) {
		r.a.refusedNames[r.a.schema.ScheduleName(p.Key)] = true
	}
	r.a.tracef("reconciler fired %s due %s: %v", p.Key, contract.FormatTime(p.Due), err)
	return err
}

// effect runs the target's effect do (an invoke, a job sent) with the
// target's faults: refused before it (FaultPublishFailed), or done and
// then a crash, so the caller sees an error (FaultCrashAfterPublish: one
// more run allowed).
func (a *adopter) effect(k contract.Key, do func()) error {
	if a.inject(FaultPublishFailed, 0.08) {
		return fmt.Errorf("target %s: %w", k, errThrottled)
	}
	do()
	if a.inject(FaultCrashAfterPublish, 0.04) {
		a.dupAllowed[k]++
		return errCrash
	}
	return nil
}

// faultyItems is the firing core's store, inmem.Items, with the
// faults of the task workload's expiry store: a claim that fails (the
// table unavailable) and a lost record of the delivery (one more run
// allowed). ClaimAlways drops the claim's condition.
type faultyItems struct{ a *adopter }

func (s faultyItems) Claim(ctx context.Context, p contract.Payload, now time.Time) error {
	if s.a.inject(FaultExpireWriteFailed, 0.05) {
		return fmt.Errorf("claim %s: %w", p.Key, errTable)
	}
	if s.a.cfg.Mutation.Adopter.ClaimAlways {
		attrs, ok := s.a.items.Attrs(p.Key)
		if !ok {
			return fire.ErrConditionFailed
		}
		attrs[s.a.schema.StateAttr] = s.a.schema.FiredState
		delete(attrs, s.a.schema.DeliveredAtAttr)
		attrs[s.a.schema.ClaimAtAttr] = contract.FormatTime(now)
		return s.a.items.Put(attrs)
	}
	return s.a.items.Claim(ctx, p, now)
}

func (s faultyItems) TakeOver(ctx context.Context, p contract.Payload, now time.Time, lease time.Duration) error {
	if s.a.inject(FaultExpireWriteFailed, 0.05) {
		return fmt.Errorf("take over %s: %w", p.Key, errTable)
	}
	return s.a.items.TakeOver(ctx, p, now, lease)
}

func (s faultyItems) MarkDelivered(ctx context.Context, k contract.Key, at time.Time) error {
	if s.a.inject(FaultMarkNotifiedFailed, 0.04) {
		s.a.dupAllowed[k]++
		return fmt.Errorf("mark delivered %s: %w", k, errTable)
	}
	return s.a.items.MarkDelivered(ctx, k, at)
}

func (s faultyItems) Get(ctx context.Context, k contract.Key) (contract.Item, bool, error) {
	return s.a.items.Get(ctx, k)
}

// noItems is the reconciler's view with no item (AdopterMutation.NoReconcile).
type noItems struct{}

func (noItems) List(context.Context, reconcile.ListRequest) (reconcile.ItemPage, error) {
	return reconcile.ItemPage{}, nil
}

func (noItems) Get(context.Context, contract.Key) (reconcile.Item, error) {
	return reconcile.Item{}, reconcile.ErrItemNotFound
}

// reArmed scans the table's change feed for an item that left the fired
// state for an armed one: a write that re-armed what the core fired.
func (a *adopter) reArmed() []changefeed.Change {
	all, _ := a.items.Changes(0)
	var out []changefeed.Change
	for _, c := range all {
		if c.Old != nil && c.New != nil && c.Old.State == a.schema.FiredState && a.schema.Armed(*c.New) {
			out = append(out, c)
		}
	}
	return out
}
