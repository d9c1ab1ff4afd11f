package smoke

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// schedulePoll is how often a schedule is read while waiting for the
// cancellation pipeline to delete or move it.
const schedulePoll = 2 * time.Second

// smokeTask is one of the run's three tasks.
type smokeTask struct {
	title string
	id    string
	due   time.Time
	// oldDue is the deadline before a move.
	oldDue time.Time
}

// lifecycle drives the three tasks at once, so the run takes about
// Lead + moveBy + MaxLag at most, not three times that:
//   - expire: due in Lead, expires, its notification reaches the queue;
//   - complete: completed at once, sends nothing and leaves no schedule;
//   - move: its deadline moved moveBy later, fires only at the new time.
func lifecycle(ctx context.Context, r *run) {
	expire := &smokeTask{title: "smoke " + r.cfg.RunID + " expires"}
	complete := &smokeTask{title: "smoke " + r.cfg.RunID + " completed"}
	move := &smokeTask{title: "smoke " + r.cfg.RunID + " moved"}
	lead := r.cfg.Lead.Round(time.Second)
	for _, t := range []*smokeTask{expire, complete, move} {
		r.step(ctx, fmt.Sprintf("create task %q due in %s", t.title, lead), func(ctx context.Context) (string, error) {
			return r.create(ctx, t)
		})
	}
	r.step(ctx, "complete a task before its deadline", func(ctx context.Context) (string, error) {
		got, err := r.tasks.Update(ctx, complete.id, map[string]string{"status": "done"})
		if err != nil {
			return "", err
		}
		if got.Status != string(task.StatusDone) {
			return "", fmt.Errorf("the API answered status %q, want %s", got.Status, task.StatusDone)
		}
		return "Done", nil
	})
	r.step(ctx, "its schedule is deleted before the deadline", func(ctx context.Context) (string, error) {
		return r.waitSchedule(ctx, complete, time.Time{})
	})
	r.step(ctx, "move a deadline "+moveBy.Round(time.Second).String()+" later", func(ctx context.Context) (string, error) {
		move.oldDue = move.due
		newDue := move.due.Add(moveBy)
		got, err := r.tasks.Update(ctx, move.id, map[string]string{"dueAt": task.FormatTime(newDue)})
		if err != nil {
			return "", err
		}
		if move.due, err = got.Due(); err != nil || !move.due.Equal(newDue) {
			return "", fmt.Errorf("the API answered dueAt %q, want %s", got.DueAt, task.FormatTime(newDue))
		}
		return "", nil
	})
	r.step(ctx, "its schedule moves to the new time", func(ctx context.Context) (string, error) {
		return r.waitSchedule(ctx, move, move.due)
	})
	r.step(ctx, "the task expires; its notification reaches the queue", func(ctx context.Context) (string, error) {
		return r.expires(ctx, expire)
	})
	r.step(ctx, "the completed task: no notification, no schedule", func(ctx context.Context) (string, error) {
		if err := r.pollUntil(ctx, complete.due.Add(grace), nil); err != nil {
			return "", err
		}
		if n := r.received(complete.title); len(n) > 0 {
			return "", fmt.Errorf("%d notification(s) for a task completed before its deadline", len(n))
		}
		if err := r.status(ctx, complete, task.StatusDone); err != nil {
			return "", err
		}
		if _, err := r.timer.Get(ctx, task.ScheduleName(complete.id), time.Time{}); !errors.Is(err, timer.ErrNotFound) {
			return "", fmt.Errorf("its schedule: %v, want none", errOr(err, "still there"))
		}
		return fmt.Sprintf("nothing %s past its deadline", grace), nil
	})
	r.step(ctx, "the moved task: nothing at the old deadline", func(ctx context.Context) (string, error) {
		if err := r.pollUntil(ctx, move.oldDue.Add(grace), nil); err != nil {
			return "", err
		}
		if n := r.received(move.title); len(n) > 0 {
			return "", fmt.Errorf("notified at %s, for the old deadline %s", task.FormatTime(n[0].Published), task.FormatTime(move.oldDue))
		}
		if err := r.status(ctx, move, task.StatusPending); err != nil {
			return "", err
		}
		return fmt.Sprintf("still Pending %s past the old deadline", grace), nil
	})
	r.step(ctx, "the moved task expires at the new deadline", func(ctx context.Context) (string, error) {
		return r.expires(ctx, move)
	})
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// create makes the task through the API and checks its schedule is set
// for its deadline.
func (r *run) create(ctx context.Context, t *smokeTask) (string, error) {
	due := r.d.Clock.Now().Add(r.cfg.Lead).Truncate(time.Second)
	got, err := r.tasks.Create(ctx, t.title, due)
	if err != nil {
		return "", err
	}
	t.id = got.ID
	r.onCleanup("delete task "+t.id, func(ctx context.Context) error { return r.tasks.Delete(ctx, t.id) })
	if t.due, err = got.Due(); err != nil || !t.due.Equal(due) || got.Status != string(task.StatusPending) {
		return "", fmt.Errorf("the API answered status %q dueAt %q, want Pending at %s", got.Status, got.DueAt, task.FormatTime(due))
	}
	sch, err := r.timer.Get(ctx, task.ScheduleName(t.id), time.Time{})
	if err != nil {
		return "", fmt.Errorf("its schedule: %w", err)
	}
	if !sch.At.Equal(t.due) {
		return "", fmt.Errorf("its schedule is at %s, want %s", task.FormatTime(sch.At), task.FormatTime(t.due))
	}
	return fmt.Sprintf("%s, schedule at %s", t.id, task.FormatTime(sch.At)), nil
}

// waitSchedule polls the task's schedule until it is gone (want zero) or
// at want, and fails if that has not happened by the task's deadline: a
// schedule that fires deletes itself, which would hide a cancellation that
// never came.
func (r *run) waitSchedule(ctx context.Context, t *smokeTask, want time.Time) (string, error) {
	start := r.d.Clock.Now()
	limit := t.due
	if !t.oldDue.IsZero() {
		limit = t.oldDue
	}
	for {
		sch, err := r.timer.Get(ctx, task.ScheduleName(t.id), time.Time{})
		switch {
		case want.IsZero() && errors.Is(err, timer.ErrNotFound):
			return fmt.Sprintf("deleted %s after the change", r.d.Clock.Now().Sub(start).Round(100*time.Millisecond)), nil
		case err != nil && !errors.Is(err, timer.ErrNotFound):
			return "", fmt.Errorf("read its schedule: %w", err)
		case !want.IsZero() && err == nil && sch.At.Equal(want):
			return fmt.Sprintf("moved to %s, %s after the change", task.FormatTime(sch.At), r.d.Clock.Now().Sub(start).Round(100*time.Millisecond)), nil
		}
		if !r.d.Clock.Now().Add(schedulePoll).Before(limit) {
			if want.IsZero() {
				return "", fmt.Errorf("the schedule is still there at the deadline %s: the cancellation pipeline did not delete it", task.FormatTime(limit))
			}
			return "", fmt.Errorf("the schedule is not at %s by the old deadline %s: the cancellation pipeline did not move it", task.FormatTime(want), task.FormatTime(limit))
		}
		if err := r.d.Clock.Sleep(ctx, schedulePoll); err != nil {
			return "", err
		}
	}
}

// expires waits for the task's notification, at most MaxLag past its
// deadline, and checks it: published no earlier than the deadline, once,
// for this user, and the task is Expired.
func (r *run) expires(ctx context.Context, t *smokeTask) (string, error) {
	if err := r.pollUntil(ctx, t.due.Add(r.cfg.MaxLag), func() bool { return len(r.received(t.title)) > 0 }); err != nil {
		return "", err
	}
	got := r.received(t.title)
	if len(got) == 0 {
		return "", fmt.Errorf("no notification within %s of the deadline %s", r.cfg.MaxLag, task.FormatTime(t.due))
	}
	n := got[0]
	if n.Published.Before(t.due) {
		return "", fmt.Errorf("notified at %s, before the deadline %s", n.Published.UTC().Format(time.RFC3339Nano), task.FormatTime(t.due))
	}
	if n.UserID != r.sub {
		return "", fmt.Errorf("the notification's %s attribute is %q, want %q", UserIDAttribute, n.UserID, r.sub)
	}
	if err := r.status(ctx, t, task.StatusExpired); err != nil {
		return "", err
	}
	return fmt.Sprintf("published %s after the deadline, read %s after it", n.Published.Sub(t.due).Round(100*time.Millisecond),
		n.Received.Sub(t.due).Round(100*time.Millisecond)), nil
}

func (r *run) status(ctx context.Context, t *smokeTask, want task.Status) error {
	got, err := r.tasks.Get(ctx, t.id)
	if err != nil {
		return err
	}
	if got.Status != string(want) {
		return fmt.Errorf("task %s is %s, want %s", t.id, got.Status, want)
	}
	return nil
}
