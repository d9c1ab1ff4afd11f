package inmem_test

import (
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

// Each timer's stand-in gives the reconciler the read view its adapter
// gives (timertest.ReaderContract).
func TestReaderContract(t *testing.T) {
	t0 := time.Date(2029, 12, 1, 0, 0, 0, 0, time.UTC) // before the contract's due times, within a year
	for _, tc := range []struct {
		name     string
		byDue    bool
		newTimer func() timertest.ContractTimer
	}{
		{"EventBridgeScheduler", false, func() timertest.ContractTimer { return contractScheduler() }},
		{"StepFunctions", false, func() timertest.ContractTimer { return inmem.NewExecutions(func() time.Time { return t0 }) }},
		{"TTL", false, func() timertest.ContractTimer { return inmem.NewTTLMarkers(nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			timertest.ReaderContract(t, timertest.ReaderBackend{NamedByDueTime: tc.byDue,
				New: func(*testing.T) timertest.ContractTimer { return tc.newTimer() }})
		})
	}
}
