package ops

import (
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

func TestEntryDetailPerTimer(t *testing.T) {
	at := time.Date(2030, 1, 1, 13, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		timer timerspec.Name
		want  string
	}{
		{timerspec.EventBridgeScheduler, "schedule at(2030-01-01T13:00:00)"},
		{timerspec.StepFunctions, "a running execution of stepfunctions:machine"},
		{timerspec.TTL, "a TTL marker, deleted by DynamoDB after 2030-01-01T13:00:00Z"},
	} {
		tb := Table{TimerName: "stepfunctions:machine", Timer: timers.Config{Timer: tt.timer}}
		if got := entryDetail(tb, at); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.timer, got, tt.want)
		}
	}
}
