package sim

import (
	"testing"

	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// TestTimerHistories runs the invariants I1-I6 with each timer firing
// the tasks, under that timer's own faults (make sim runs 10,000 seeds per
// timer: go run ./cmd/sim -timer all).
func TestTimerHistories(t *testing.T) {
	n := histories(t, 200)
	for _, tc := range []struct {
		timer  timerspec.Name
		faults []Fault
	}{
		{timerspec.StepFunctions, []Fault{FaultDuplicateExecution, FaultStopRace, FaultFiredLate, FaultDeadlineRace, FaultWriterFiredState}},
		{timerspec.TTL, []Fault{FaultTTLDeleteLate, FaultStreamRedeliveredTTL, FaultDeadlineRace, FaultWriterFiredState}},
	} {
		t.Run(string(tc.timer), func(t *testing.T) {
			s := RunMany(Config{Timer: tc.timer, ConcurrentFires: true, AnyWriter: true}, 1, n, 0)
			for i, r := range s.Failed {
				if i == 5 {
					break
				}
				t.Errorf("seed %d: %s (replay: go run ./cmd/sim -timer %s -any-writer -seed %d)", r.Seed, r.Violations[0], tc.timer, r.Seed)
			}
			for _, f := range tc.faults {
				if s.Faults[f] == 0 {
					t.Errorf("no %s fault was injected in %d histories", f, n)
				}
			}
			t.Logf("%s: %d histories, %d tasks, %d notifications, faults %v", tc.timer, s.Histories, s.Tasks, s.Notifications, s.Faults)
		})
	}
}
