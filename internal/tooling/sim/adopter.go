package sim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// AdopterMutation breaks one guarantee of an adopter's workload (future
// events, deferred jobs) on purpose. The zero value breaks nothing.
type AdopterMutation struct {
	ClaimAlways  bool          // the firing core's claim writes without its condition
	ClockAhead   time.Duration // the firing core's clock runs this far ahead
	NoReconcile  bool          // the reconciler sees no item: a lost timer is never re-armed
	CancelAlways bool          // future events: Cancel deletes without its condition
	AllTargets   bool          // future events: the dispatcher allows every target
	WriteAlways  bool          // deferred jobs: MarkActivity puts without its condition
}

// adopter is a history of an adopter of the core on its own schema: its
// inmem.Items table on the harness, fired by the firing core into the
// adopter's target. The workload (futureevents.go, deferredjobs.go)
// writes the items through the adopter's own client and checks them.
type adopter struct {
	*harness
	schema contract.Schema
	items  *inmem.Items
	fire   *fire.Core
	target fire.Deliverer
	// dupAllowed counts, per item, the faults that may each cause one
	// extra run of the target (a crash after it ran, a lost record of it).
	dupAllowed map[contract.Key]int
	// refused reports a failure the workload expects of the target (see
	// harness.refusedNames).
	refused func(err error) bool
	// step is how far one tick moves the clock.
	step func() time.Duration
	// once, onTime and live name the invariants of checkRecord.
	once, onTime, live string
}

// newAdopter builds the core's pipeline for schema s from begin, its
// invariants named once, onTime, live (checkRecord) and loss (lossInv).
// The workload sets target (what the firing core runs after a claim)
// before the history.
func newAdopter(cfg Config, s contract.Schema, begin time.Time, once, onTime, live, loss string) *adopter {
	a := &adopter{harness: newHarness(cfg, loss), schema: s, once: once, onTime: onTime, live: live,
		dupAllowed: map[contract.Key]int{}, refused: func(error) bool { return false }}
	wiring := a.wiring(inproc.NewEngine(a.options(begin, func(c changefeed.Change) string { return c.Key.String() })), inproc.Wiring{})
	// One blame for all: a fault in the batch excuses its failures.
	a.blameKey = func(string) string { return "" }
	a.items = inmem.NewItems(s)
	if sc, ok := a.sched.(*inmem.Scheduler); ok {
		sc.ListPrefix = s.ScheduleNamePrefix
	}
	now := a.clock.Now
	if d := cfg.Mutation.Adopter.ClockAhead; d > 0 {
		now = func() time.Time { return a.clock.Now().Add(d) }
	}
	var err error
	a.fire, err = fire.New(fire.Config{Schema: s, Store: faultyItems{Items: a.items, a: a}, Now: now, Log: discard})
	must(err)
	// The reconciler lists the items through the armed index, its fired
	// window wider than any history: every fired item stays listed.
	index := armedindex.Spec{FiredWithinSec: 30 * 86400}.WithDefaults(s)
	a.items.IndexKeys = []string{index.PartitionAttr, s.DueAttr}
	var items reconcile.Items = inmem.Armed{Items: a.items, Index: &index, Now: a.clock.Now}
	if cfg.Mutation.Adopter.NoReconcile {
		items = inmem.Armed{Items: inmem.NewItems(s), Index: &index, Now: a.clock.Now} // an empty table
	}
	wiring.Schema, wiring.Feed, wiring.Fire, wiring.Items = s, a.items, a.invoke, items
	wiring.Firer = fire.Firing{Core: a.fire, Target: reconTarget{a}}
	must(a.e.Wire(wiring))
	a.wired()
	return a
}

// history runs ticks busy ticks (ops writes items), then on, with
// faults, past the last due time, and ends (harness.finish).
func (a *adopter) history(ticks int, ops func()) {
	a.faultsOn = true
	for range ticks {
		a.tick(ops)
	}
	end := a.lastDue().Add(grace + time.Minute)
	for a.clock.Now().Before(end) {
		a.skipIdle(end, 30*time.Minute, 10*time.Minute) // a deferred job's next window is a week on
		a.tick(nil)
	}
	a.finish(a.lossInv)
	a.checkQueue()
}

func (a *adopter) tick(ops func()) {
	var acts []func()
	if ops != nil {
		for range a.rng.Intn(4) {
			acts = append(acts, ops)
		}
	}
	if a.faultsOn && a.chance(0.01) {
		acts = append(acts, a.loseTimer)
	}
	a.harness.tick(a.step(), acts)
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

// invoke is one invocation of the expiry function (the firing core,
// then the target): a failure must have an injected cause, or be the
// target's refusal.
func (a *adopter) invoke(_ context.Context, sc contract.Schedule) (string, error) {
	c0 := a.injected
	p, err := a.schema.DecodePayload([]byte(a.schema.EncodePayload(sc.Payload)))
	if err != nil {
		a.violate(a.lossInv, "timer %s has a payload the expiry function cannot read: %v", sc.Name, err)
		return "", nil
	}
	out, err := a.fire.Fire(a.ctx, p, a.target)
	a.tracef("%s due %s: %s %v", sc.Name, contract.FormatTime(p.Due), out, err)
	if err == nil {
		return string(out), nil
	}
	if a.refused(err) {
		a.refusedNames[sc.Name] = true
	} else {
		a.checkFiring(c0, sc, p.Key, err)
	}
	return string(out), err
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
// target's faults: refused before it, or a crash after it (one more run
// allowed).
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

// faultyItems is the firing core's store with the faults of the tasks'
// expiry store: a failed claim, a lost record of the delivery (one more
// run allowed). ClaimAlways drops the claim's condition.
type faultyItems struct {
	*inmem.Items
	a *adopter
}

func (s faultyItems) Claim(ctx context.Context, p contract.Payload, now time.Time) error {
	if s.a.inject(FaultExpireWriteFailed, 0.05) {
		return fmt.Errorf("claim %s: %w", p.Key, errTable)
	}
	if s.a.cfg.Mutation.Adopter.ClaimAlways {
		attrs, ok := s.Attrs(p.Key)
		if !ok {
			return fire.ErrConditionFailed
		}
		attrs[s.a.schema.StateAttr] = s.a.schema.FiredState
		delete(attrs, s.a.schema.DeliveredAtAttr)
		attrs[s.a.schema.ClaimAtAttr] = contract.FormatTime(now)
		return s.Put(attrs)
	}
	return s.Items.Claim(ctx, p, now)
}

func (s faultyItems) TakeOver(ctx context.Context, p contract.Payload, now time.Time, lease time.Duration) error {
	if s.a.inject(FaultExpireWriteFailed, 0.05) {
		return fmt.Errorf("take over %s: %w", p.Key, errTable)
	}
	return s.Items.TakeOver(ctx, p, now, lease)
}

func (s faultyItems) MarkDelivered(ctx context.Context, k contract.Key, at time.Time) error {
	if s.a.inject(FaultMarkNotifiedFailed, 0.04) {
		s.a.dupAllowed[k]++
		return fmt.Errorf("mark delivered %s: %w", k, errTable)
	}
	return s.Items.MarkDelivered(ctx, k, at)
}

// record is one item as an adopter's history saw it: when it is due,
// whether a write of it took effect, and when the target ran it.
type record struct {
	key     contract.Key
	due     time.Time
	written bool
	runs    []time.Time
}

// checkRecord checks what the core owes every item (name is how the
// messages call it): the target runs only an item written, never before
// its due time; and one the target owes a run (owed) is run once (one
// more per crash after the run or lost record of it), its item (ours:
// still this record's in the table) ending Fired and marked delivered.
func (a *adopter) checkRecord(r *record, name string, owed, ours bool) {
	if r.written {
		a.res.Items++
	}
	a.res.Deliveries += len(r.runs)
	for _, at := range r.runs {
		if !r.written {
			a.violate(a.once, "%s was run but never written", name)
		}
		if at.Before(r.due) {
			a.violate(a.onTime, "%s due %s was run %s early", name, contract.FormatTime(r.due), r.due.Sub(at))
		}
	}
	if !owed {
		return
	}
	cur, found, err := a.items.Get(a.ctx, r.key)
	switch {
	case len(r.runs) == 0:
		a.violate(a.live, "%s due %s was never run", name, contract.FormatTime(r.due))
	case len(r.runs) > 1+a.dupAllowed[r.key]:
		a.violate(a.once, "%s was run %d times (%d allowed by crashes)", name, len(r.runs), 1+a.dupAllowed[r.key])
	case err != nil || !found || !ours || !cur.Due.Equal(r.due) || cur.State != a.schema.FiredState || !cur.Delivered:
		a.violate(a.live, "%s ends %+v, want Fired and delivered", name, cur)
	}
}

// putIfAbsent is an app's conditional PutItem on the adopter's table: it
// evaluates the one condition the app sends (cond, on placeholder naming
// attr) exactly and refuses any other, refuses an existing item (unless
// always: a mutant drops the condition), and injects refused calls and
// lost answers; written sees each item put.
func (a *adopter) putIfAbsent(in *dynamodb.PutItemInput, cond, placeholder, attr string, key func(map[string]string) contract.Key,
	always bool, written func(map[string]string)) (*dynamodb.PutItemOutput, error) {
	if aws.ToString(in.ConditionExpression) != cond || in.ExpressionAttributeNames[placeholder] != attr {
		return nil, fmt.Errorf("dynamodb PutItem: unsupported condition %q %v", aws.ToString(in.ConditionExpression), in.ExpressionAttributeNames)
	}
	if err := a.tableFault("PutItem"); err != nil {
		return nil, err
	}
	attrs := dynamo.FromAttrs(in.Item)
	if _, ok := a.items.Attrs(key(attrs)); ok && !always {
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	must(a.items.Put(attrs))
	written(attrs)
	return &dynamodb.PutItemOutput{}, a.answerLost("PutItem")
}

// tableFault refuses an app's table call (FaultTableCallFailed).
func (a *adopter) tableFault(op string) error {
	if a.inject(FaultTableCallFailed, 0.05) {
		return fmt.Errorf("dynamodb %s: %w", op, errThrottled)
	}
	return nil
}

// answerLost loses the answer of an app's write that took effect
// (FaultTableAnswerLost).
func (a *adopter) answerLost(op string) error {
	if a.inject(FaultTableAnswerLost, 0.04) {
		return fmt.Errorf("dynamodb %s: %w", op, errTimeout)
	}
	return nil
}

// retry is an app's call with one retry after an injected fault.
func retry(call func() error) error {
	err := call()
	if err != nil && injected(err) {
		err = call()
	}
	return err
}

func injected(err error) bool {
	return errors.Is(err, errThrottled) || errors.Is(err, errTimeout)
}
