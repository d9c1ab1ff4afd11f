package reconcile_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// policy answers every question with one action, doing the item writes
// a real policy would (move the task an hour on, or back to Pending).
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
	tk, err := p.w.store.Get(ctx, "user-1", it.Key.Sort)
	if err != nil {
		return reconcile.Decision{}, err
	}
	switch p.action {
	case reconcile.Moved, reconcile.Rearmed:
		tk.Status, tk.DueAt, tk.ExpiredAt, tk.NotifyClaimAt = task.StatusPending, p.w.clock.Now().Add(time.Hour), time.Time{}, time.Time{}
		p.w.store.Put(tk)
	case reconcile.Ended, reconcile.Withdrawn:
		tk.Status = task.StatusDone
		p.w.store.Put(tk)
	}
	return reconcile.Decision{Action: p.action, Outcome: "test"}, nil
}

// TestPolicyDecides: each action of a Policy, asked about an overdue
// item, an armed one due later and a stale firing, and what the
// reconciler does after it.
func TestPolicyDecides(t *testing.T) {
	overdue := newTask(t0.Add(-time.Hour))
	ahead := newTask(t0.Add(30 * time.Minute))
	stale := newTask(t0.Add(-time.Hour), expiredAt(t0.Add(-time.Hour), t0.Add(-time.Hour)))
	cases := []struct {
		name   string
		task   task.Task
		sched  bool // the task has its schedule
		action reconcile.Action
		why    reconcile.Why
		want   reconcile.Result
		// status after; schedule: whether the task's schedule exists after.
		status   task.Status
		schedule bool
	}{
		{"overdue, proceed: fired", overdue, false, reconcile.Proceed, reconcile.Overdue,
			reconcile.Result{ItemsFired: 1, Completed: true}, task.StatusExpired, false},
		{"overdue, leave: untouched", overdue, false, reconcile.Leave, reconcile.Overdue,
			reconcile.Result{Completed: true}, task.StatusPending, false},
		{"overdue, moved: schedule made at the new time", overdue, false, reconcile.Moved, reconcile.Overdue,
			reconcile.Result{SchedulesMoved: 1, ItemsMoved: 1, Completed: true}, task.StatusPending, true},
		{"overdue, ended: no timer work", overdue, false, reconcile.Ended, reconcile.Overdue,
			reconcile.Result{ItemsEnded: 1, Completed: true}, task.StatusDone, false},
		{"ahead, withdrawn: schedule deleted", ahead, true, reconcile.Withdrawn, reconcile.Ahead,
			reconcile.Result{SchedulesDeleted: 1, ItemsEnded: 1, Completed: true}, task.StatusDone, false},
		{"ahead, leave: schedule not checked", ahead, false, reconcile.Leave, reconcile.Ahead,
			reconcile.Result{Completed: true}, task.StatusPending, false},
		{"ahead, proceed: missing schedule created", ahead, false, reconcile.Proceed, reconcile.Ahead,
			reconcile.Result{SchedulesCreated: 1, Completed: true}, task.StatusPending, true},
		{"stale, rearmed: armed again, its schedule made", stale, false, reconcile.Rearmed, reconcile.Stale,
			reconcile.Result{SchedulesCreated: 1, ItemsRearmed: 1, Completed: true}, task.StatusPending, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.store.Put(c.task)
			if c.sched {
				if err := w.sched.Arm(context.Background(), task.ScheduleFor(c.task)); err != nil {
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
			after, err := w.store.Get(context.Background(), c.task.UserID, c.task.TaskID)
			if err != nil || after.Status != c.status {
				t.Fatalf("task %+v %v: want %s", after, err, c.status)
			}
			_, err = w.sched.Get(context.Background(), task.ScheduleName(after.TaskID), after.DueAt)
			if has := err == nil; has != c.schedule || (err != nil && !errors.Is(err, timer.ErrNotFound)) {
				t.Fatalf("schedule present %v (%v), want %v", has, err, c.schedule)
			}
		})
	}
}
