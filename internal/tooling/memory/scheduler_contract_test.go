package memory_test

import (
	"testing"

	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestSchedulerContract(t *testing.T) {
	testenv.SchedulerContract(t, testenv.SchedulerBackend{
		New: func(*testing.T) testenv.ContractScheduler { return memory.NewScheduler() },
	})
}
