package reconcile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// policy answers every question with one action, doing the item writes
// a real policy would (move the item an hour on, or back to Pending).
type policy struct {
	action reconcile.Action
	w      *world
	asked  []reconcile.Why
	starts int
}

func (p *policy) StartRun(context.Context) { p.starts++ }

func (p *policy) Decide(ctx context.Context, it reconcile.Item, why reconcile.Why) (reconcile.Decision, error) {
	p.asked = append(p.asked, why)
	if len(p.asked) > 1 {
		return reconcile.Decision{Action: reconcile.Proceed}, nil // the first answer only
	}
	a, ok := p.w.items.Attrs(it.Key)
	if !ok {
		return reconcile.Decision{}, reconcile.ErrItemNotFound
	}
	switch p.action {
	case reconcile.Moved, reconcile.Rearmed:
		a[schema.StateAttr], a[schema.DueAttr] = "Pending", contract.FormatTime(p.w.clock.Now().Add(time.Hour))
		delete(a, schema.FiredAtAttr)
		delete(a, schema.ClaimAtAttr)
		p.w.putAttrs(a)
	case reconcile.Ended, reconcile.Withdrawn:
		a[schema.StateAttr] = "Done"
		p.w.putAttrs(a)
	}
	return reconcile.Decision{Action: p.action, Outcome: "test"}, nil
}

// TestPolicyDecides: each action of a Policy, asked about an overdue
// item, an armed one due later and a stale firing, and what the
// reconciler does after it.
func TestPolicyDecides(t *testing.T) {
	overdue := newRow(t0.Add(-time.Hour))
	ahead := newRow(t0.Add(30 * time.Minute))
	stale := newRow(t0.Add(-time.Hour), firedAt(t0.Add(-time.Hour), t0.Add(-time.Hour)))
	cases := []struct {
		name   string
		task   row
		sched  bool // the task has its schedule
		action reconcile.Action
		why    reconcile.Why
		want   reconcile.Result
		// status after; schedule: whether the task's schedule exists after.
		status   string
		schedule bool
	}{
		{"overdue, proceed: fired", overdue, false, reconcile.Proceed, reconcile.Overdue,
			reconcile.Result{ItemsFired: 1, Completed: true}, "Fired", false},
		{"overdue, leave: untouched", overdue, false, reconcile.Leave, reconcile.Overdue,
			reconcile.Result{Completed: true}, "Pending", false},
		{"overdue, moved: schedule made at the new time", overdue, false, reconcile.Moved, reconcile.Overdue,
			reconcile.Result{SchedulesMoved: 1, ItemsMoved: 1, Completed: true}, "Pending", true},
		{"overdue, ended: no timer work", overdue, false, reconcile.Ended, reconcile.Overdue,
			reconcile.Result{ItemsEnded: 1, Completed: true}, "Done", false},
		{"ahead, withdrawn: schedule deleted", ahead, true, reconcile.Withdrawn, reconcile.Ahead,
			reconcile.Result{SchedulesDeleted: 1, ItemsEnded: 1, Completed: true}, "Done", false},
		{"ahead, leave: schedule not checked", ahead, false, reconcile.Leave, reconcile.Ahead,
			reconcile.Result{Completed: true}, "Pending", false},
		{"ahead, proceed: missing schedule created", ahead, false, reconcile.Proceed, reconcile.Ahead,
			reconcile.Result{SchedulesCreated: 1, Completed: true}, "Pending", true},
		{"stale, rearmed: armed again, its schedule made", stale, false, reconcile.Rearmed, reconcile.Stale,
			reconcile.Result{SchedulesCreated: 1, ItemsRearmed: 1, Completed: true}, "Pending", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.put(c.task)
			if c.sched {
				if err := w.sched.Arm(context.Background(), schema.ScheduleFor(c.task.item())); err != nil {
					t.Fatal(err)
				}
			}
			p := &policy{action: c.action, w: w}
			w.deps.Policy = p
			res := w.run(t, reconcile.Config{})
			got := counts(res)
			got.ItemsMoved, got.ItemsRearmed, got.ItemsEnded = res.ItemsMoved, res.ItemsRearmed, res.ItemsEnded
			if got != c.want || p.starts != 1 || len(p.asked) == 0 || p.asked[0] != c.why {
				t.Fatalf("result %+v (want %+v), asked %v, %d starts", got, c.want, p.asked, p.starts)
			}
			after, err := w.get(c.task.Key)
			if err != nil || after.State != c.status {
				t.Fatalf("task %+v %v: want %s", after, err, c.status)
			}
			_, err = w.sched.Get(context.Background(), schema.ScheduleName(after.Key), after.Due)
			if has := err == nil; has != c.schedule || (err != nil && !errors.Is(err, timer.ErrNotFound)) {
				t.Fatalf("schedule present %v (%v), want %v", has, err, c.schedule)
			}
		})
	}
}
