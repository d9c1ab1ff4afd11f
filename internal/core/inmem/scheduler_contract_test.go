package inmem_test

import (
	"testing"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestTimerContract(t *testing.T) {
	testenv.TimerContract(t, testenv.TimerBackend{
		New: func(*testing.T) testenv.ContractTimer { return contractScheduler() },
	})
}

// contractScheduler is a Scheduler that lists the contract suite's
// schedules (testenv.ContractSchedule's names start "task-"), as the
// adapter's NamePrefix would.
func contractScheduler() *inmem.Scheduler {
	s := inmem.NewScheduler()
	s.ListPrefix = "task-"
	return s
}
