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
// execution at want's due time among all its running executions, and
// counts the others (docs/simulation.md#stale-executions-at-rest).
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

// staleAfterCancel reports, on the Step Functions timer, whether no running
// execution of the schedule name is the one named for due (the task's
// last, zero if unknown), and counts them (docs/simulation.md#stale-executions-at-rest).
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
