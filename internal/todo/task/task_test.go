package task_test

import (
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/todo/task"
)

// TestAwaitsExpiry pins which tasks the reconciler lists and the pending
// index holds: Pending ones, and Expired ones whose notification is not
// recorded (a failed publish must stay visible until it is retried).
func TestAwaitsExpiry(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		t    task.Task
		want bool
	}{
		{"pending", task.Task{Status: task.StatusPending}, true},
		{"pending with a repair mark", task.Task{Status: task.StatusPending, ScheduleRepair: true}, true},
		{"expired, not notified", task.Task{Status: task.StatusExpired, ExpiredAt: at, NotifyClaimAt: at}, true},
		{"expired and notified", task.Task{Status: task.StatusExpired, ExpiredAt: at, NotifyClaimAt: at, NotifiedAt: at}, false},
		{"done", task.Task{Status: task.StatusDone, CompletedAt: at}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.t.AwaitsExpiry(); got != tc.want {
				t.Fatalf("AwaitsExpiry() = %v, want %v", got, tc.want)
			}
		})
	}
}
