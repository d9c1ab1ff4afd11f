package pipeline

import (
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/todo/task"
)

// TestReminderLifecycle runs the whole pipeline: a reminder arrives
// before the deadline, once; not after completion or deletion; a moved
// deadline or reminder moves it (the old time sends nothing), and none
// means none.
func TestReminderLifecycle(t *testing.T) {
	due := t0.Add(2 * time.Hour)
	later := due.Add(time.Hour)
	fifteen, none := task.Reminder15m, task.ReminderNone
	for _, tc := range []struct {
		name   string
		change func(h *harness, tk task.Task)
		// want is the reminder time whose reminder arrives (zero: none).
		want time.Time
	}{
		{"pending: reminded an hour before", nil, due.Add(-time.Hour)},
		{"completed: none", func(h *harness, tk task.Task) { complete(h, tk) }, time.Time{}},
		{"deleted: none", func(h *harness, tk task.Task) {
			if err := h.Service.Delete(ctx, user, tk.TaskID); err != nil {
				h.t.Fatal(err)
			}
		}, time.Time{}},
		{"deadline moved: at the new time", func(h *harness, tk task.Task) { h.patch(tk, task.Patch{DueAt: &later}) }, later.Add(-time.Hour)},
		{"reminder moved: at the new time", func(h *harness, tk task.Task) { h.patch(tk, task.Patch{Reminder: &fifteen}) }, due.Add(-15 * time.Minute)},
		{"reminder removed: none", func(h *harness, tk task.Task) { h.patch(tk, task.Patch{Reminder: &none}) }, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tk := h.createWith(due, task.Reminder1h)
			if _, ok := h.Scheduler.Lookup(task.ReminderName(tk.TaskID)); !ok {
				t.Fatal("create made no reminder schedule")
			}
			h.drain(t0)
			if tc.change != nil {
				tc.change(h, tk)
			}
			h.drain(t0.Add(time.Minute))
			for at := t0.Add(5 * time.Minute); at.Before(later.Add(-time.Minute)); at = at.Add(5 * time.Minute) {
				h.drain(at)
			}
			var got []task.Notification
			for _, n := range h.Outbox.Sent() {
				if n.Reminder != "" {
					got = append(got, n)
				}
			}
			if tc.want.IsZero() {
				if len(got) != 0 {
					t.Fatalf("reminders %+v, want none", got)
				}
			} else if len(got) != 1 || !task.RemindAt(got[0].DueAt, got[0].Reminder).Equal(tc.want) {
				t.Fatalf("reminders %+v, want one for %v", got, tc.want)
			}
			if _, ok := h.Scheduler.Lookup(task.ReminderName(tk.TaskID)); ok {
				t.Error("a reminder schedule is left")
			}
			h.quiet()
		})
	}
}

func (h *harness) patch(tk task.Task, p task.Patch) {
	h.t.Helper()
	if _, err := h.Service.Update(ctx, user, tk.TaskID, p); err != nil {
		h.t.Fatal(err)
	}
}
