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
		now   time.Time
		want  string
	}{
		{timerspec.EventBridgeScheduler, at, "schedule at(2030-01-01T13:00:00)"},
		{timerspec.StepFunctions, at, "a running execution of stepfunctions:machine"},
		{timerspec.TTL, at.Add(-time.Second), "a TTL marker, deleted by DynamoDB after 2030-01-01T13:00:00Z"},
		{timerspec.TTL, at, "a TTL marker past its time (2030-01-01T13:00:00Z), not deleted yet: DynamoDB deletes expired items best effort, typically within two days"},
	} {
		tb := Table{TimerName: "stepfunctions:machine", Timer: timers.Config{Timer: tt.timer}}
		if got := entryDetail(tb, at, tt.now); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.timer, got, tt.want)
		}
	}
}
