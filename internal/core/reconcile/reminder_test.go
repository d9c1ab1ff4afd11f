package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// TestRunRepairsReminderSchedules: a checked (unconfirmed) armed item
// gets its missing or misplaced reminder schedule when the reminder is
// still ahead; a passed reminder is not scheduled; a reminder schedule is
// never listed as an orphan (its prefix is not the due-time schedules').
func TestRunRepairsReminderSchedules(t *testing.T) {
	ctx := context.Background()
	due := t0.Add(3 * time.Hour)
	withReminder := func(before time.Duration) func(*row) {
		return func(t *row) { t.Remind = t.Due.Add(-before) }
	}
	w := newWorld(t)
	missing := newRow(due, withReminder(time.Hour), func(t *row) { t.Repair = true })
	misplaced := newRow(due, withReminder(15*time.Minute))
	passed := newRow(t0.Add(30*time.Minute), withReminder(time.Hour), func(t *row) { t.Repair = true })
	gone := newRow(due, withReminder(time.Hour))
	for _, tk := range []row{missing, misplaced, passed} {
		w.put(tk)
	}
	for _, tk := range []row{misplaced, gone} {
		if err := w.sched.Arm(ctx, schema.ScheduleFor(tk.item())); err != nil {
			t.Fatal(err)
		}
	}
	wrong := misplaced
	wrong.Remind = due.Add(-time.Hour)
	for _, tk := range []row{wrong, gone} { // gone's task was deleted: its reminder fires and finds nothing
		r, _ := schema.ReminderFor(tk.item())
		if err := w.sched.Arm(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	res := w.run(t, reconcile.Config{})
	if res.Errors != 0 || !res.Completed {
		t.Fatalf("Result %+v", res)
	}
	for _, tk := range []row{missing, misplaced} {
		want, _ := schema.ReminderFor(tk.item())
		if got, ok := w.sched.Lookup(want.Name); !ok || got != want {
			t.Errorf("reminder schedule of %s: %+v (%v), want %+v", tk.Key, got, ok, want)
		}
	}
	if _, ok := w.sched.Lookup(schema.ReminderName(passed.Key)); ok {
		t.Error("a passed reminder was scheduled")
	}
	if _, ok := w.sched.Lookup(schema.ReminderName(gone.Key)); !ok {
		t.Error("a reminder schedule was taken for an orphan deadline schedule")
	}
}
