package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// TestPlanReportsWithoutActing: each kind of drift is reported with its
// item, nothing is written, and the plan's counts are what a real pass
// then does.
func TestPlanReportsWithoutActing(t *testing.T) {
	future := t0.Add(time.Hour)
	at := func(s contract.Schedule, when time.Time) *contract.Schedule { s.At = when; return &s }
	tests := []struct {
		name     string
		task     row
		gone     bool
		schedule func(row) *contract.Schedule
		want     reconcile.DriftKind
	}{
		{"a lost schedule", newRow(future), false, nil, reconcile.DriftMissing},
		{"an orphaned schedule", newRow(future, func(t *row) { t.State = "Done" }), false,
			func(tk row) *contract.Schedule { s := schema.ScheduleFor(tk.item()); return &s }, reconcile.DriftOrphaned},
		{"a schedule whose item is gone", newRow(future), true,
			func(tk row) *contract.Schedule { s := schema.ScheduleFor(tk.item()); return &s }, reconcile.DriftOrphaned},
		{"a schedule at the wrong time", newRow(future), false,
			func(tk row) *contract.Schedule { return at(schema.ScheduleFor(tk.item()), future.Add(time.Hour)) }, reconcile.DriftMisplaced},
		{"an overdue item", newRow(t0.Add(-10 * time.Minute)), false, nil, reconcile.DriftOverdue},
		{"a claimed, undelivered item", newRow(t0.Add(-20*time.Minute), firedAt(t0.Add(-10*time.Minute), t0.Add(-10*time.Minute))),
			false, nil, reconcile.DriftUndelivered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			if !tt.gone {
				w.put(tt.task)
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
			if got, err := w.get(tt.task.Key); err == nil && got.State != tt.task.State {
				t.Errorf("the plan changed the item: %s -> %s", tt.task.State, got.State)
			}
			if n := w.target.sent[tt.task.Key]; n != 0 {
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
	a, b := newRow(t0.Add(time.Hour)), newRow(t0.Add(time.Hour))
	w.put(a)
	w.put(b)
	orphan := newRow(t0.Add(time.Hour))
	if err := w.sched.Arm(context.Background(), schema.ScheduleFor(orphan.item())); err != nil {
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
	if _, ok := w.sched.Lookup(schema.ScheduleName(a.Key)); !ok {
		t.Error("the item's schedule was not made")
	}
	if _, ok := w.sched.Lookup(schema.ScheduleName(b.Key)); ok {
		t.Error("another item's schedule was made")
	}
	if _, ok := w.sched.Lookup(schema.ScheduleName(orphan.Key)); !ok {
		t.Error("another item's orphan was deleted")
	}
	if w.cps.saves != 0 {
		t.Errorf("a pass of one item saved the reconciler's checkpoint %d times", w.cps.saves)
	}
}

func key(r row) contract.Key { return r.Key }
