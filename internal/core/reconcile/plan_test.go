package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// TestPlanReportsWithoutActing: each kind of drift is reported with its
// item, nothing is written, and the plan's counts are what a real pass
// then does.
func TestPlanReportsWithoutActing(t *testing.T) {
	future := t0.Add(time.Hour)
	at := func(s contract.Schedule, when time.Time) *contract.Schedule { s.At = when; return &s }
	tests := []struct {
		name     string
		task     task.Task
		gone     bool
		schedule func(task.Task) *contract.Schedule
		want     reconcile.DriftKind
	}{
		{"a lost schedule", newTask(future), false, nil, reconcile.DriftMissing},
		{"an orphaned schedule", newTask(future, func(t *task.Task) { t.Status = task.StatusDone }), false,
			func(tk task.Task) *contract.Schedule { s := task.ScheduleFor(tk); return &s }, reconcile.DriftOrphaned},
		{"a schedule whose item is gone", newTask(future), true,
			func(tk task.Task) *contract.Schedule { s := task.ScheduleFor(tk); return &s }, reconcile.DriftOrphaned},
		{"a schedule at the wrong time", newTask(future), false,
			func(tk task.Task) *contract.Schedule { return at(task.ScheduleFor(tk), future.Add(time.Hour)) }, reconcile.DriftMisplaced},
		{"an overdue item", newTask(t0.Add(-10 * time.Minute)), false, nil, reconcile.DriftOverdue},
		{"a claimed, undelivered item", newTask(t0.Add(-20*time.Minute), expiredAt(t0.Add(-10*time.Minute), t0.Add(-10*time.Minute))),
			false, nil, reconcile.DriftUndelivered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			if !tt.gone {
				w.store.Put(tt.task)
			}
			if tt.schedule != nil {
				if err := w.sched.Arm(context.Background(), *tt.schedule(tt.task)); err != nil {
					t.Fatal(err)
				}
			}
			before := w.sched.All()
			plan, err := reconcile.Plan(context.Background(), reconcile.Config{}, w.deps)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Findings) != 1 || plan.Findings[0].Kind != tt.want || plan.Findings[0].Key != key(tt.task) {
				t.Fatalf("findings %+v, want one %s of %s", plan.Findings, tt.want, key(tt.task))
			}
			if after := w.sched.All(); len(after) != len(before) || (len(after) == 1 && after[0] != before[0]) {
				t.Errorf("the plan changed the timer: %+v -> %+v", before, after)
			}
			if got, err := w.store.Get(context.Background(), tt.task.UserID, tt.task.TaskID); err == nil && got.Status != tt.task.Status {
				t.Errorf("the plan changed the item: %s -> %s", tt.task.Status, got.Status)
			}
			if n := w.outbox.SentFor(tt.task.TaskID); n != 0 {
				t.Errorf("the plan delivered %d times", n)
			}
			if w.cps.saves != 0 {
				t.Errorf("the plan saved the reconciler's checkpoint %d times", w.cps.saves)
			}
			if res := counts(w.run(t, reconcile.Config{})); res.Repaired() != plan.Result.Repaired() {
				t.Errorf("a pass made %d repairs, the plan said %d", res.Repaired(), plan.Result.Repaired())
			}
		})
	}
}

// TestOnlyNarrowsAPassToOneItem: a pass of Only(k) repairs k and leaves
// the other items' drift for the next whole pass.
func TestOnlyNarrowsAPassToOneItem(t *testing.T) {
	w := newWorld(t)
	a, b := newTask(t0.Add(time.Hour)), newTask(t0.Add(time.Hour))
	w.store.Put(a)
	w.store.Put(b)
	orphan := newTask(t0.Add(time.Hour))
	if err := w.sched.Arm(context.Background(), task.ScheduleFor(orphan)); err != nil {
		t.Fatal(err)
	}
	plan, err := reconcile.Plan(context.Background(), reconcile.Config{}, reconcile.Only(w.deps, key(a)))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Findings) != 1 || plan.Findings[0].Key != key(a) || plan.Findings[0].Kind != reconcile.DriftMissing {
		t.Fatalf("plan of one item = %+v", plan.Findings)
	}
	r, err := reconcile.New(reconcile.Config{}, reconcile.Only(w.deps, key(a)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.sched.Lookup(task.ScheduleName(a.TaskID)); !ok {
		t.Error("the item's schedule was not made")
	}
	if _, ok := w.sched.Lookup(task.ScheduleName(b.TaskID)); ok {
		t.Error("another item's schedule was made")
	}
	if _, ok := w.sched.Lookup(task.ScheduleName(orphan.TaskID)); !ok {
		t.Error("another item's orphan was deleted")
	}
	if w.cps.saves != 0 {
		t.Errorf("a pass of one item saved the reconciler's checkpoint %d times", w.cps.saves)
	}
}

func key(tk task.Task) contract.Key { return contract.Key{Partition: tk.UserID, Sort: tk.TaskID} }
