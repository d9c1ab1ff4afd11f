package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/reconcile"

	"github.com/unschedule/unschedule/internal/todo/task"
)

// TestRunRepairsReminderSchedules: a checked (unconfirmed) Pending task
// gets its missing or misplaced reminder schedule when the reminder is
// still ahead; a passed reminder is not scheduled; a reminder schedule is
// never listed as an orphan (its prefix is not the deadline schedules').
func TestRunRepairsReminderSchedules(t *testing.T) {
	ctx := context.Background()
	due := t0.Add(3 * time.Hour)
	withReminder := func(r task.Reminder) func(*task.Task) {
		return func(t *task.Task) { t.Reminder, t.RemindAt = r, task.RemindAt(t.DueAt, r) }
	}
	w := newWorld(t)
	missing := newTask(due, withReminder(task.Reminder1h), func(t *task.Task) { t.ScheduleRepair = true })
	misplaced := newTask(due, withReminder(task.Reminder15m))
	passed := newTask(t0.Add(30*time.Minute), withReminder(task.Reminder1h), func(t *task.Task) { t.ScheduleRepair = true })
	gone := newTask(due, withReminder(task.Reminder1h))
	for _, tk := range []task.Task{missing, misplaced, passed} {
		w.store.Put(tk)
	}
	for _, tk := range []task.Task{misplaced, gone} {
		if err := w.sched.Arm(ctx, task.ScheduleFor(tk)); err != nil {
			t.Fatal(err)
		}
	}
	wrong := misplaced
	wrong.RemindAt = due.Add(-time.Hour)
	for _, tk := range []task.Task{wrong, gone} { // gone's task was deleted: its reminder fires and finds nothing
		r, _ := task.ReminderFor(tk, t0)
		if err := w.sched.Arm(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	res := w.run(t, reconcile.Config{})
	if res.Errors != 0 || !res.Completed {
		t.Fatalf("Result %+v", res)
	}
	for _, tk := range []task.Task{missing, misplaced} {
		want, _ := task.ReminderFor(tk, t0)
		if got, ok := w.sched.Lookup(want.Name); !ok || got != want {
			t.Errorf("reminder schedule of %s: %+v (%v), want %+v", tk.TaskID, got, ok, want)
		}
	}
	if _, ok := w.sched.Lookup(task.ReminderName(passed.TaskID)); ok {
		t.Error("a passed reminder was scheduled")
	}
	if _, ok := w.sched.Lookup(task.ReminderName(gone.TaskID)); !ok {
		t.Error("a reminder schedule was taken for an orphan deadline schedule")
	}
}
