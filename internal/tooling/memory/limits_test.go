package memory_test

import (
	"context"
	"testing"

	"github.com/unschedule/unschedule/internal/campaigns/campaigntest"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestSenderLimitsContract: the in-memory counters admit exactly the
// limit under concurrent adds and the limiter's refusal on them names the
// limit and the use (limitsdynamo's test holds the table to them).
func TestSenderLimitsContract(t *testing.T) {
	newLimits := func() campaigntest.LimitsReference { return memory.NewSenderLimits() }
	campaigntest.LimitsContract(t, newLimits, func(t *testing.T) campaigntest.LimitsBackend {
		l := memory.NewSenderLimits()
		return campaigntest.LimitsBackend{Counters: l, Counts: func(_ context.Context, k limits.Key) (map[string]int64, error) { return l.Counts(k), nil }}
	})
}
