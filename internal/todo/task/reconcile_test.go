package task_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// reconcileClock is a clock the reconciler's pacing moves.
type reconcileClock struct{ t time.Time }

func (c *reconcileClock) Now() time.Time { return c.t }
func (c *reconcileClock) sleep(_ context.Context, d time.Duration) error {
	c.t = c.t.Add(d)
	return nil
}

// TestReconcilerRepairsTheTodoApp: the core's reconciler over the to-do
// app's view of its table (task.NewReconcileView) and its firing (the
// in-process service): the task missing its schedule gets the to-do
// app's schedule, its repair flag is cleared, the overdue task is expired
// and its owner notified once, and the run's counts are the reconciler's
// metrics.
func TestReconcilerRepairsTheTodoApp(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	c := &reconcileClock{t: now}
	quiet := slog.New(slog.DiscardHandler)
	store, sched, outbox := memory.NewStore(), inmem.NewScheduler(), &memory.Outbox{}
	missing := task.Task{UserID: "u1", TaskID: "01JD00000000000000000000AA", Status: task.StatusPending,
		DueAt: now.Add(time.Hour), ScheduleToken: "tok", ScheduleRepair: true}
	overdue := task.Task{UserID: "u1", TaskID: "01JD00000000000000000000BB", Status: task.StatusPending,
		DueAt: now.Add(-time.Hour), ScheduleToken: "tok"}
	store.Put(missing)
	store.Put(overdue)
	svc, err := task.InProcess(task.InProcessConfig{Store: store, Notifier: outbox, Clock: c, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rec := metrics.New(metrics.FunctionReconciler, &out)
	r, err := reconcile.New(reconcile.Config{}, reconcile.Deps{Schema: task.Schema,
		Items: task.NewReconcileView(store, store), Scheduler: sched, Schedules: sched, Firer: svc, Checkpoints: &inmem.Checkpoints{},
		Clock: c, Sleep: c.sleep, Metrics: rec, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	if sc, ok := sched.Lookup(task.ScheduleName(missing.TaskID)); !ok || sc != task.ScheduleFor(missing) {
		t.Errorf("schedule %+v (present %v), want %+v", sc, ok, task.ScheduleFor(missing))
	}
	if n := outbox.SentFor(overdue.TaskID); n != 1 {
		t.Errorf("%d notifications for the overdue task, want 1", n)
	}
	for id, want := range map[string]task.Status{missing.TaskID: task.StatusPending, overdue.TaskID: task.StatusExpired} {
		if got, err := store.Get(context.Background(), "u1", id); err != nil || got.Status != want || got.ScheduleRepair {
			t.Errorf("task %s: %s (repair flag %v, %v), want %s with no repair flag", id, got.Status, got.ScheduleRepair, err, want)
		}
	}
	for _, want := range []string{`"SchedulesCreated":1`, `"ItemsFired":1`, `"RepairFlagsCleared":1`, `"PassesCompleted":1`,
		`"ItemsChecked":2`, `"Repaired":2`, `"LeftOver":0`,
		`"Function":"reconciler"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("metrics %s lack %s", out.String(), want)
		}
	}
}
