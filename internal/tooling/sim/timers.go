package sim

import (
	"math"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// ttlLateAfter is the TTL delay from which a deletion counts as
// FaultTTLDeleteLate.
const ttlLateAfter = 15 * time.Minute

// ttlDelay picks how long after its due time the TTL sweeper deletes a
// marker: up to timerspec.TTLPrecision, skewed (u^4) towards short delays
// so that most deletions land inside the history.
func (w *core) ttlDelay() time.Duration {
	d := time.Duration(math.Pow(w.rng.Float64(), 4) * float64(kindOf(w.cfg.Timer).FiresWithin)).Truncate(time.Second)
	if d > ttlLateAfter {
		w.res.Faults[FaultTTLDeleteLate]++ // a delay, not a failure: not counted as injected
	}
	return d
}

// duplicateFault is the timer's "invoked twice" fault
// (timerkind.Kind.DuplicateFault), FaultFiredTwice by default.
func (w *core) duplicateFault() Fault {
	if f := kindOf(w.cfg.Timer).DuplicateFault; f != "" {
		return Fault(f)
	}
	return FaultFiredTwice
}

// kindOf is the registered timer kind t ("" is the default kind).
func kindOf(t timerspec.Name) timerkind.Kind { return timerkind.Must(t) }

// staleTolerated looks, on the Step Functions timer, for the item's
// execution at want's due time among all its running executions. Nothing
// lists an item's executions (a move stops only the one its old due time
// names), so a create that raced a move, or a replayed reschedule, may
// leave a stale execution running beside the right one: it fires, and
// the claim skips it (I1 checks that). I3 then asks that the right one
// runs; Result.Faults counts the stale ones as FaultStaleExecution.
func (w *world) staleTolerated(want contract.Schedule) (contract.Schedule, bool) {
	if !kindOf(w.cfg.Timer).KeepsStale {
		return contract.Schedule{}, false
	}
	var found contract.Schedule
	ok, others := false, 0
	for _, sc := range w.sched.All() {
		if sc.Name != want.Name {
			continue
		}
		if sc.At.Equal(want.At) && sc.Payload.Equal(want.Payload) {
			found, ok = sc, true
		} else {
			others++
		}
	}
	if ok && others > 0 {
		w.res.Faults[FaultStaleExecution] += others
	}
	return found, ok
}

// staleAfterCancel reports, on the Step Functions timer, whether every
// running execution of the task's schedule name is one that its cancel
// could not name: a restart, or the execution of another due time than
// due (the task's last, zero if unknown). Those fire, and the claim skips
// them (I1 checks that); Result.Faults counts them as FaultStaleExecution.
// The execution named for due must not run: the cancel knew that name.
func (w *world) staleAfterCancel(name string, due time.Time) bool {
	e, ok := w.sched.(*inmem.Executions)
	if !ok {
		return false
	}
	execs := e.Running(name)
	if !due.IsZero() {
		if _, named := execs[timerspec.ExecutionName(name, due)]; named {
			return false
		}
	}
	w.res.Faults[FaultStaleExecution] += len(execs)
	return true
}
