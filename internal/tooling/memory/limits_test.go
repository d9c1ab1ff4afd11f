package memory_test

import (
	"context"
	"testing"

	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// TestSenderLimitsContract: the in-memory counters admit exactly the
// limit under concurrent adds and the limiter's refusal on them names the
// limit and the use (limitsdynamo's test holds the table to them).
func TestSenderLimitsContract(t *testing.T) {
	newLimits := func() testenv.LimitsReference { return memory.NewSenderLimits() }
	testenv.LimitsContract(t, newLimits, func(t *testing.T) testenv.LimitsBackend {
		l := memory.NewSenderLimits()
		return testenv.LimitsBackend{Counters: l, Counts: func(_ context.Context, k limits.Key) (map[string]int64, error) { return l.Counts(k), nil }}
	})
}
