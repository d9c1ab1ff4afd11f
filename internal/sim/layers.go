package sim

import (
	"math"
	"time"

	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/layers"
	"github.com/unschedule/unschedule/internal/memory"
)

// ttlLateAfter is the TTL delay from which a deletion counts as
// FaultTTLDeleteLate.
const ttlLateAfter = 15 * time.Minute

// newLayer is the in-memory stand-in of the history's execution layer,
// with that layer's faults wired in.
func (w *world) newLayer() memory.LayerScheduler {
	l := memory.NewLayer(w.cfg.Layer, w.clock.Now, w.ttlDelay)
	if e, ok := l.(*memory.Executions); ok {
		e.StopLost = func(task.Schedule) bool { return w.faultsOn && w.inject(FaultStopRace, 0.5) }
	}
	return l
}

// ttlDelay picks how long after its due time the TTL sweeper deletes a
// marker: anywhere up to layers.TTLPrecision (48 hours), skewed towards
// short delays (u^4 of the bound) so that most deletions land inside the
// history and the rest after it.
func (w *world) ttlDelay() time.Duration {
	d := time.Duration(math.Pow(w.rng.Float64(), 4) * float64(layers.TTLPrecision)).Truncate(time.Second)
	if d > ttlLateAfter {
		w.res.Faults[FaultTTLDeleteLate]++ // a delay, not a failure: not counted as injected
	}
	return d
}

// duplicateFault is the layer's "invoked twice" fault.
func (w *world) duplicateFault() Fault {
	switch w.cfg.Layer {
	case layers.StepFunctions:
		return FaultDuplicateExecution
	case layers.TTL:
		return FaultStreamRedeliveredTTL
	}
	return FaultFiredTwice
}

// staleTolerated looks, on the Step Functions layer, for the item's
// execution at want's due time among all its running executions. A
// create does not list the item's other executions (that would cost a
// ListExecutions per 1,000 running executions on every create), so a
// create that raced a move may leave a stale execution running beside
// the right one: it fires, and the claim skips it (I1 checks that). I3
// then asks that the right one runs; Result.Faults counts the stale ones
// as FaultStaleExecution.
func (w *world) staleTolerated(want task.Schedule) (task.Schedule, bool) {
	if w.cfg.Layer != layers.StepFunctions {
		return task.Schedule{}, false
	}
	var found task.Schedule
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
