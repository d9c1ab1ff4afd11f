package timers_test

import (
	"slices"
	"strings"
	"testing"

	_ "github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// TestParse: the built-in kinds are registered under their names and the
// dev flags' spellings, "" is the default kind, and an unknown name is an
// error that lists the kinds.
func TestParse(t *testing.T) {
	for in, want := range map[string]timerspec.Name{"": timerspec.EventBridgeScheduler, "scheduler": timerspec.EventBridgeScheduler,
		"stepfunctions": timerspec.StepFunctions, "StepFunctions": timerspec.StepFunctions, "sfn": timerspec.StepFunctions,
		"ttl": timerspec.TTL, "TTL": timerspec.TTL} {
		if got, err := timerkind.Parse(in); err != nil || got != want {
			t.Fatalf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := timerkind.Parse("cron"); err == nil || !strings.Contains(err.Error(), "StepFunctions") {
		t.Fatalf("Parse(cron): %v; want an error naming the timers", err)
	}
	want := []timerspec.Name{timerspec.EventBridgeScheduler, timerspec.StepFunctions, timerspec.TTL}
	if got := timerkind.Names(); !slices.Equal(got[:min(3, len(got))], want) {
		t.Fatalf("Names() = %v, want %v first", got, want)
	}
}
