package inmem_test

import (
	"testing"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

func TestTimerContract(t *testing.T) {
	timertest.TimerContract(t, timertest.TimerBackend{
		New: func(*testing.T) timertest.ContractTimer { return contractScheduler() },
	})
}

// contractScheduler is a Scheduler that lists the contract suite's
// schedules (timertest.ContractSchedule's names start with timertest.Schema.ScheduleNamePrefix), as the
// adapter's NamePrefix would.
func contractScheduler() *inmem.Scheduler {
	s := inmem.NewScheduler()
	s.ListPrefix = timertest.Schema.ScheduleNamePrefix
	return s
}
