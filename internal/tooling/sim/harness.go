package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// maxReceives is the FIFO queue's bound on receives before the DLQ.
const maxReceives = 5

var discard = slog.New(slog.DiscardHandler)

// harness is what every workload on a table (the tasks, the adopters)
// shares: the core's one in-process pipeline on the virtual clock, the
// faults injected through its hooks, the ticks and the end of a history;
// lossInv names the invariant its own checks report under (I4, F6, J5).
type harness struct {
	core
	ctx     context.Context
	e       *inproc.Engine
	clock   *inproc.Clock
	sched   inmem.TimerScheduler
	fsched  *inmem.Remote
	check   *reconcile.Reconciler
	lossInv string
	// blameKey is the key a message group's faults are blamed under.
	blameKey func(group string) string
	// onHandle sees each message the worker handled, onRedrive each
	// firing the operator redrives at the end (nil: nothing).
	onHandle  func(cancel.Delivery)
	onRedrive func(inproc.Invocation)
	// refusedNames are the timers whose firing the target refused, as the
	// workload expects (an unregistered event's): each may stay in the
	// DLQ, and fail the fault-free reconciler pass once.
	refusedNames map[string]bool
	fires        fireFaults

	qcfg      inproc.QueueConfig
	eventSent map[string]time.Time
	sends     int
	blamed    map[string]int
	// before holds each group's blame count when its batch went to the
	// worker, c0 the injected count when a stream batch went out.
	before map[string]int
	c0     int
}

// newHarness starts a history's harness. The workload builds the engine
// from options, passes its wiring through wiring, wires it, then calls
// wired.
func newHarness(cfg Config, lossInv string) *harness {
	h := &harness{core: newCore(cfg), ctx: context.Background(), lossInv: lossInv,
		eventSent: map[string]time.Time{}, blamed: map[string]int{}, before: map[string]int{}, refusedNames: map[string]bool{},
		qcfg:  inproc.QueueConfig{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: maxReceives, DedupWindow: 5 * time.Minute},
		fires: fireFaults{twice: 0.05, twiceWithin: 2 * time.Minute}}
	h.fires.late = func() time.Duration { return time.Duration(1+h.rng.Intn(180)) * time.Second }
	return h
}

// fireFaults are the timer's faults of a fired schedule's deliveries
// (harness.deliveries): dropped to the dead-letter queue with chance
// drop, late (FaultFiredLate) by late(), twice with chance twice up to
// twiceWithin later; sweep, when set, draws a lazy timer's delay there
// (its stand-in then has none).
type fireFaults struct {
	drop, twice float64
	twiceWithin time.Duration
	late, sweep func() time.Duration
}

// options are the engine's options from begin on the history's timer,
// with 1 to 4 stream shards keyed by shardKey and the faults' hooks.
func (h *harness) options(begin time.Time, shardKey func(changefeed.Change) string) inproc.Options {
	h.epoch = begin
	return inproc.Options{Start: begin, Queue: h.qcfg, Timer: h.cfg.Timer, TTLDelay: h.ttlDelay, Log: discard,
		StreamShards: 1 + h.rng.Intn(4), ShardKey: shardKey, FireAttempts: maxAttempts, Hooks: h.hooks(),
		Reconcile: reconcile.Config{Budget: time.Duration(2+h.rng.Intn(30)) * time.Second, PageSize: 2 + h.rng.Intn(20)}}
}

// wiring wires the timer's and the queue's faults into the engine's
// stand-ins, and returns w with the faulty enqueuer and timer port.
func (h *harness) wiring(e *inproc.Engine, w inproc.Wiring) inproc.Wiring {
	h.e, h.clock, h.sched, h.now = e, e.Clock, e.Timer, e.Clock.Now
	if x, ok := h.sched.(*inmem.Executions); ok {
		x.StopLost = func(contract.Schedule) bool { return h.faultsOn && h.inject(FaultStopRace, 0.5) }
	}
	e.Queue.LoseAck = func(inproc.Received) bool { return h.inject(FaultAckLost, 0.04) }
	h.fsched = inmem.NewRemote(h.sched, nil)
	h.schedulerFaults(h.fsched, func(string) { h.blame("") }, nil)
	w.Enqueuer, w.Timer = enqueuer{h}, h.fsched
	return w
}

// wired builds the fault-free full reconciler pass.
func (h *harness) wired() {
	var err error
	h.check, err = h.e.NewReconciler(reconcile.Config{Budget: 24 * time.Hour, PageSize: 1 + h.rng.Intn(50)})
	must(err)
}

// hooks are the faults between the stages (replayed and redelivered
// stream batches, stalled and crashing workers, firings early, late and
// twice) and the checks that no record or message fails without one.
func (h *harness) hooks() inproc.Hooks {
	return inproc.Hooks{
		StreamBatch: func(pos, waiting int) (int, int) {
			back := 0
			if pos > 0 && h.inject(FaultStreamReplay, 0.05) {
				back = 1 + h.rng.Intn(min(pos, 8))
			}
			h.c0 = h.injected
			return back, 1 + h.rng.Intn(10)
		},
		StreamHandled: func(batch []changefeed.Change, failures []cancel.Failure) bool {
			if len(failures) > 0 && h.injected == h.c0 {
				h.violate(h.lossInv, "the stream processor failed %d records without an injected fault: %v", len(failures), failures[0].Err)
			}
			h.tracef("stream batch of %d: %d failed", len(batch), len(failures))
			return h.inject(FaultStreamRedelivered, 0.04)
		},
		WorkerStall: func() time.Duration {
			if !h.inject(FaultVisibilityTimeout, 0.04) {
				return 0
			}
			return h.qcfg.VisibilityTimeout + time.Duration(1+h.rng.Intn(5))*time.Second
		},
		BeforeWorker: func(batch []inproc.Received) int {
			crash := -1
			if h.inject(FaultWorkerCrash, 0.04) {
				crash = h.rng.Intn(len(batch))
			}
			for _, r := range batch {
				h.before[r.GroupID] = h.blamed[h.blameKey(r.GroupID)]
				if r.ReceiveCount > h.qcfg.MaxReceiveCount {
					h.violate(h.lossInv, "message %s received %d times (bound %d)", r.MessageID, r.ReceiveCount, h.qcfg.MaxReceiveCount)
				}
			}
			h.tracef("worker batch of %d, crash at %d", len(batch), crash)
			return crash
		},
		WorkerHandled: func(batch []inproc.Received, failed map[string]bool) {
			for _, r := range batch {
				if h.onHandle != nil {
					h.onHandle(cancel.Delivery{ID: r.MessageID, GroupID: r.GroupID, Body: r.Body})
				}
				if failed[r.MessageID] && h.blamed[h.blameKey(r.GroupID)] == h.before[r.GroupID] {
					h.violate(h.lossInv, "message %s (item %s) failed without an injected fault: it would loop to the DLQ", r.MessageID, r.GroupID)
				}
			}
		},
		FireEarly:  h.earlyBy,
		Deliveries: h.deliveries,
		RetryDelay: func(attempts int) time.Duration { return time.Duration(attempts) * time.Minute },
	}
}

// deliveries are the invocations of a fired schedule, with the timers'
// documented faults (fires): early (FireEarly made them), dropped, late
// and twice.
func (h *harness) deliveries(s contract.Schedule) []time.Duration {
	if s.At.After(h.clock.Now()) {
		h.count(FaultFiredEarly)
	}
	if h.fires.drop > 0 && h.inject(FaultFireDropped, h.fires.drop) {
		h.tracef("fired %s: dropped to the DLQ", s.Name)
		return nil
	}
	var at time.Duration
	switch lazy := kindOf(h.cfg.Timer).FiresWithin > 0; {
	case lazy && h.fires.sweep != nil:
		at = h.fires.sweep()
	case !lazy && h.inject(FaultFiredLate, 0.05):
		at = h.fires.late()
	}
	out := []time.Duration{at}
	if h.inject(h.duplicateFault(), h.fires.twice) {
		out = append(out, at+time.Duration(h.rng.Intn(int(h.fires.twiceWithin/time.Second)))*time.Second)
	}
	h.tracef("fired %s (due %s)", s.Name, contract.FormatTime(s.Payload.Due))
	return out
}

// checkFiring reports (lossInv) a firing of sc (of item what) that
// failed without a fault injected since c0. Another attempt holding the
// claim is none (the retry takes over once the claim lapses), nor a
// firing before its time (FaultFiredEarly: the retry comes after it).
func (h *harness) checkFiring(c0 int, sc contract.Schedule, what any, err error) {
	early := h.now().Before(sc.At) && errors.Is(err, fire.ErrTooEarly)
	if err != nil && h.injected == c0 && !errors.Is(err, fire.ErrInProgress) && !early {
		h.violate(h.lossInv, "firing of %s failed without an injected fault: %v", what, err)
	}
}

// blame records an injected fault against a key: a failure of its queue
// message in the same batch has a cause.
func (h *harness) blame(key string) { h.blamed[key]++ }

// groupTask is the task id of a message group (the item key
// "userId/taskId", cancel.Message.GroupID).
func groupTask(group string) string { return group[strings.LastIndex(group, "/")+1:] }

// tick moves the clock on by step and runs, in random order, the
// workload's acts and a round of every stage (stream batches of random
// shards, worker batches, the timer, sometimes a reconciler run).
func (h *harness) tick(step time.Duration, acts []func()) {
	h.clock.Set(h.clock.Now().Truncate(time.Second).Add(step))
	for range 1 + h.rng.Intn(3) {
		acts = append(acts, func() { h.e.PumpShard(h.ctx, h.rng.Intn(h.e.Shards())) })
	}
	for range 1 + h.rng.Intn(3) {
		acts = append(acts, func() { h.e.DeliverQueue(h.ctx) })
	}
	acts = append(acts, func() { h.e.FireSchedules(h.ctx) })
	if h.e.Reconciler != nil && h.faultsOn && h.inject(FaultReconcilerInterleaved, 0.03) {
		acts = append(acts, func() {
			res, err := h.e.Reconciler.Run(h.ctx)
			h.tracef("reconciler run: %+v %v", res, err)
		})
	}
	h.rng.Shuffle(len(acts), func(i, j int) { acts[i], acts[j] = acts[j], acts[i] })
	for _, a := range acts {
		a()
	}
}

// skipIdle moves the clock on to a little (up to lead) before what comes
// next, the timer's next schedule, the engine's next waiting invocation
// or until, when the stream and the queue are drained and it is over gap
// away: nothing would happen in between but the interleaved reconciler
// runs (the end's pass stands for them).
func (h *harness) skipIdle(until time.Time, gap, lead time.Duration) {
	if !h.e.StreamDone() || h.e.Queue.Len() > 0 {
		return
	}
	next := until
	if at, ok := h.e.NextAttempt(); ok && at.Before(next) {
		next = at
	}
	for _, sc := range h.sched.All() {
		if sc.At.Before(next) {
			next = sc.At
		}
	}
	if next.Sub(h.clock.Now()) > gap {
		h.clock.Set(next.Add(-time.Duration(1+h.rng.Intn(int(lead/time.Second))) * time.Second))
	}
}

// settle steps the pipeline 5 seconds at a time until nothing is in flight.
func (h *harness) settle() {
	for range 2000 {
		h.clock.Set(h.clock.Now().Truncate(time.Second).Add(5 * time.Second))
		for moved := true; moved; {
			moved = false
			for _, i := range h.rng.Perm(h.e.Shards()) {
				moved = h.e.PumpShard(h.ctx, i).StreamAdvanced > 0 || moved
			}
		}
		for h.e.DeliverQueue(h.ctx).Delivered > 0 {
		}
		h.e.FireSchedules(h.ctx)
		if h.e.Idle() {
			return
		}
	}
	h.violate(h.lossInv, "the pipeline did not settle: %d messages queued", h.e.Queue.Len())
}

// quiesce turns faults off, drains, runs a full reconciler pass and
// drains again; it returns when the pass ended.
func (h *harness) quiesce(inv string) time.Time {
	h.faultsOn = false
	h.settle()
	res, err := h.check.Run(h.ctx)
	end := h.clock.Now()
	if err != nil || !res.Completed || res.Errors > len(h.refusedNames) {
		h.violate(inv, "the fault-free reconciler pass did not complete cleanly: %+v, %v", res, err)
	}
	h.tracef("reconciler pass: %+v", res)
	h.settle()
	return end
}

// finish ends a history: the faults stop and the pipeline drains; past
// the grace period (every claim's lease; on a lazy timer, its latest
// firing) the operator redrives the dead-letter queue and a fault-free
// reconciler pass runs.
func (h *harness) finish(inv string) {
	h.faultsOn = false
	h.settle()
	h.clock.Advance(grace + time.Minute + kindOf(h.cfg.Timer).FiresWithin)
	for _, d := range h.e.Redrive() {
		h.res.Faults[FaultDLQRedriven]++
		if h.onRedrive != nil {
			h.onRedrive(d)
		}
	}
	h.quiesce(inv)
}

// checkQueue checks (lossInv) that the stream was consumed, every message
// acknowledged or dead-lettered, no firing waits and none is dead after
// the redrive but those the target refused.
func (h *harness) checkQueue() {
	if n := h.e.Queue.Len(); n > 0 {
		h.violate(h.lossInv, "%d messages are still queued", n)
	}
	if !h.e.StreamDone() {
		h.violate(h.lossInv, "stream records are left unprocessed")
	}
	if !h.e.Idle() {
		h.violate(h.lossInv, "firings are still waiting")
	}
	for _, inv := range h.e.DeadInvocations() {
		if !h.refusedNames[inv.Schedule.Name] {
			h.violate(h.lossInv, "the firing of %s is dead after the redrive", inv.Schedule.Name)
		}
	}
}

// enqueuer is the SQS adapter's contract over the engine's FIFO queue:
// it stops at the first refused message, and a call may fail after
// sending.
type enqueuer struct{ h *harness }

func (q enqueuer) Enqueue(_ context.Context, msgs []cancel.Message) ([]cancel.Failed, error) {
	h := q.h
	if h.inject(FaultEnqueueUnknown, 0.04) {
		for _, m := range msgs {
			q.send(m)
		}
		return nil, fmt.Errorf("send message batch: %w", errTimeout)
	}
	var failed []cancel.Failed
	for _, m := range msgs {
		if len(failed) > 0 {
			failed = append(failed, cancel.Failed{Message: m, Err: cancel.ErrNotSent})
			continue
		}
		if h.inject(FaultEnqueueRejected, 0.06) {
			failed = append(failed, cancel.Failed{Message: m, Err: errThrottled})
			continue
		}
		q.send(m)
	}
	return failed, nil
}

// send puts one message on the queue and checks that one stream record
// gives at most one message per deduplication window.
func (q enqueuer) send(m cancel.Message) {
	h := q.h
	h.sends++
	dedup := m.DedupID()
	if mut := h.cfg.Mutation.DedupID; mut != nil {
		dedup = mut(m, h.sends)
	}
	id, dup := h.e.Queue.Send(m.GroupID(), dedup, m.Encode())
	if dup {
		return
	}
	now := h.clock.Now()
	if prev, ok := h.eventSent[m.EventID]; ok && now.Sub(prev) < h.qcfg.DedupWindow {
		h.violate(h.lossInv, "stream record %s of item %s gave a second queue message %s within the deduplication window (first %s ago)",
			m.EventID, m.Key(), id, now.Sub(prev))
	}
	h.eventSent[m.EventID] = now
}
