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
