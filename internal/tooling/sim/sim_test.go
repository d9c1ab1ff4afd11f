package sim

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// TestHistories runs a few hundred seeded histories of the real code
// under faults; every invariant must hold (make sim runs 10,000).
func TestHistories(t *testing.T) {
	n := histories(t, 300)
	s := RunMany(Config{}, 1, n, 0)
	for i, r := range s.Failed {
		if i == 5 {
			break
		}
		t.Errorf("seed %d: %s (replay: go run ./cmd/sim -seed %d)", r.Seed, r.Violations[0], r.Seed)
	}
	for _, f := range []Fault{FaultStreamReplay, FaultEnqueueUnknown, FaultAckLost, FaultVisibilityTimeout,
		FaultWorkerCrash, FaultScheduleCreateFailed, FaultScheduleRecordFailed, FaultFiredTwice, FaultFiredLate, FaultFiredEarly, FaultPublishFailed,
		FaultCrashAfterPublish, FaultReconcilerInterleaved, FaultDeadlineRace, FaultWriterFiredState} {
		if s.Faults[f] == 0 {
			t.Errorf("no %s fault was injected in %d histories", f, n)
		}
	}
}

// TestAnyWriterHistories writes a fifth of the tasks with a plain put,
// not through the API: every invariant holds for them too (they are
// scheduled by the stream path, moved, cancelled and expired once).
func TestAnyWriterHistories(t *testing.T) {
	n := histories(t, 200)
	s := RunMany(Config{AnyWriter: true}, 1, n, 0)
	for i, r := range s.Failed {
		if i == 5 {
			break
		}
		t.Errorf("seed %d: %s (replay: go run ./cmd/sim -seed %d -any-writer)", r.Seed, r.Violations[0], r.Seed)
	}
	if s.PutDirect == 0 {
		t.Errorf("no task was put straight into the table in %d histories", n)
	}
	t.Logf("%d of %d tasks put straight into the table", s.PutDirect, s.Tasks)
}

// TestDeterministic: a seed replays the same history, trace included,
// on every timer (the engine's stages, shards and hooks draw from the
// seeded source only).
func TestDeterministic(t *testing.T) {
	for _, tm := range timerkind.Names() {
		for _, seed := range []int64{1, 42, 12345} {
			t.Run(fmt.Sprint(tm, seed), func(t *testing.T) {
				var ta, tb []string
				cfg := Config{Seed: seed, Timer: tm, ConcurrentFires: true, AnyWriter: true}
				cfg.Trace = func(l string) { ta = append(ta, l) }
				a := Run(cfg)
				cfg.Trace = func(l string) { tb = append(tb, l) }
				b := Run(cfg)
				if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(ta, tb) || len(ta) == 0 {
					t.Errorf("seed %d gave two different histories (%d and %d trace lines):\n%+v\n%+v", seed, len(ta), len(tb), a, b)
				}
			})
		}
	}
}

// ignoreDueAt is mutation (a): the conditional expiry write forgets the
// deadline, so an old schedule expires a task whose deadline moved.
type ignoreDueAt struct{ task.Store }

func (s ignoreDueAt) Expire(ctx context.Context, userID, taskID string, _, now time.Time) (task.Task, error) {
	if t, err := s.Get(ctx, userID, taskID); err == nil {
		return s.Store.Expire(ctx, userID, taskID, t.DueAt, now)
	}
	return s.Store.Expire(ctx, userID, taskID, time.Time{}, now)
}

// notFoundFails is mutation (c): the worker's scheduler reports a missing
// schedule as a plain failure.
type notFoundFails struct{ timer.Timer }

func (s notFoundFails) Disarm(ctx context.Context, name string, at time.Time) error {
	return hide(s.Timer.Disarm(ctx, name, at))
}

func (s notFoundFails) Move(ctx context.Context, sc contract.Schedule, from time.Time) error {
	return hide(s.Timer.Move(ctx, sc, from))
}

func hide(err error) error {
	if errors.Is(err, timer.ErrNotFound) {
		return errors.New("schedule not found")
	}
	return err
}

// publishOnSkip is mutation (d): expiry publishes even when its
// conditional write failed.
type publishOnSkip struct {
	e Expirer
	n task.Notifier
	s task.Store
}

func (p publishOnSkip) Expire(ctx context.Context, req task.ExpireRequest) (task.ExpireOutcome, error) {
	out, err := p.e.Expire(ctx, req)
	if err != nil || out != task.Skipped {
		return out, err
	}
	n := task.Notification{UserID: req.UserID, TaskID: req.TaskID, DueAt: req.DueAt}
	if t, err := p.s.Get(ctx, req.UserID, req.TaskID); err == nil {
		n.Title, n.DueAt = t.Title, t.DueAt
	}
	return task.Expired, p.n.Publish(ctx, n)
}

// claimAlwaysFree is mutation (e): the re-notify path publishes without
// the notification claim, so a concurrent invocation publishes while the
// first is still publishing (the gap the claim closes).
type claimAlwaysFree struct{ task.Store }

func (claimAlwaysFree) ClaimNotification(context.Context, string, string, time.Time, time.Time, time.Duration) error {
	return nil
}

// onlyPending is mutation (f): the reconciler lists only Pending tasks, so
// an Expired task whose notification failed is never retried once no
// schedule is left to retry it (the gap the wider pending index closes).
type onlyPending struct{ task.PendingLister }

func (o onlyPending) ListPending(ctx context.Context, page task.PendingRequest) (task.Page, error) {
	p, err := o.PendingLister.ListPending(ctx, page)
	kept := p.Tasks[:0:0]
	for _, x := range p.Tasks {
		if x.Status == task.StatusPending {
			kept = append(kept, x)
		}
	}
	p.Tasks = kept
	return p, err
}

// keepRecord is mutation (i): a deadline change keeps the task's schedule
// recorded as confirmed (for the new deadline), so the reconciler trusts
// a schedule the worker has not moved (yet, or ever: its message may be
// dead-lettered).
type keepRecord struct{ task.Store }

func (s keepRecord) UpdatePending(ctx context.Context, userID, taskID string, p task.Patch, now time.Time) (task.Task, error) {
	t, err := s.Store.UpdatePending(ctx, userID, taskID, p, now)
	if err == nil && p.DueAt != nil && !p.Complete && s.Store.MarkScheduled(ctx, userID, taskID, t.DueAt) == nil {
		t.ScheduledFor = t.DueAt
	}
	return t, err
}

// remindAnyway is mutation (r1): a reminder's claim that fails its
// condition (completed, deleted, moved, reminded already) still reminds.
type remindAnyway struct{ task.Store }

func (s remindAnyway) ClaimReminder(ctx context.Context, userID, taskID string, dueAt, remindAt, now time.Time, lease time.Duration) (task.Task, error) {
	t, err := s.Store.ClaimReminder(ctx, userID, taskID, dueAt, remindAt, now, lease)
	if errors.Is(err, task.ErrConditionFailed) {
		if cur, gerr := s.Get(ctx, userID, taskID); gerr == nil {
			return cur, nil
		}
	}
	return t, err
}

// remindersNotMoved is mutation (r2): the worker leaves reminder schedules
// where they are (it neither makes nor moves them).
type remindersNotMoved struct{ timer.Timer }

func (s remindersNotMoved) Arm(ctx context.Context, sc contract.Schedule) error {
	if _, ok := task.TaskIDFromReminderName(sc.Name); ok {
		return nil
	}
	return s.Timer.Arm(ctx, sc)
}

func (s remindersNotMoved) Move(ctx context.Context, sc contract.Schedule, from time.Time) error {
	if _, ok := task.TaskIDFromReminderName(sc.Name); ok {
		return nil
	}
	return s.Timer.Move(ctx, sc, from)
}

// notifyUnclaimed is mutation (w): the old take-over, which accepted an
// item in the fired state that no firing had claimed, so a task a writer
// completed with the fired state is notified when a firing or the
// reconciler comes for it.
type notifyUnclaimed struct {
	e Expirer
	n task.Notifier
	s task.Store
}

func (p notifyUnclaimed) Expire(ctx context.Context, req task.ExpireRequest) (task.ExpireOutcome, error) {
	out, err := p.e.Expire(ctx, req)
	if err != nil || out != task.Skipped {
		return out, err
	}
	t, err := p.s.Get(ctx, req.UserID, req.TaskID)
	if err != nil || t.Status != task.StatusExpired || !t.NotifyClaimAt.IsZero() || !t.NotifiedAt.IsZero() || !t.DueAt.Equal(req.DueAt) {
		return out, nil
	}
	if err := p.n.Publish(ctx, task.Notification{UserID: t.UserID, TaskID: t.TaskID, Title: t.Title, DueAt: t.DueAt,
		Link: webURL + "/#/tasks/" + t.TaskID}); err != nil {
		return "", err
	}
	_ = p.s.MarkNotified(ctx, t.UserID, t.TaskID, req.DueAt)
	return task.Renotified, nil
}

// earlyIsSuccess is mutation (x), the answer before the fix: a firing
// that came before its time (FaultFiredEarly) succeeds with nothing done,
// so the invocation is not retried. The reminder is never sent (I6);
// a deadline is left to the reconciler, and without one it is lost.
func earlyIsSuccess(out string, err error) (string, error) {
	if errors.Is(err, task.ErrTooEarly) {
		return "too-early", nil
	}
	return out, err
}

// TestMutantsAreCaught breaks one guarantee at a time and asserts that the
// simulation catches it within its seed budget, with the invariant that
// guards it.
func TestMutantsAreCaught(t *testing.T) {
	skipUnderRace(t)
	for _, tc := range []struct {
		m    Mutation
		want string
		// concurrent runs the histories with Config.ConcurrentFires.
		concurrent bool
		// budget is how many seeds the mutant may survive (default 50).
		budget int
	}{
		{Mutation{Name: "(a) the conditional expiry ignores dueAt",
			Store: func(s task.Store) task.Store { return ignoreDueAt{s} }}, "I1", false, 0},
		{Mutation{Name: "(b) dedup by SQS send instead of the stream event id",
			DedupID: func(_ cancel.Message, n int) string { return fmt.Sprintf("send-%d", n) }}, "I4", false, 0},
		{Mutation{Name: "(c) the worker treats a missing schedule as a failure",
			WorkerScheduler: func(s timer.Timer) timer.Timer { return notFoundFails{s} }}, "I4", false, 0},
		{Mutation{Name: "(d) expiry publishes when its condition failed",
			Expirer: func(e Expirer, n task.Notifier, s task.Store) Expirer { return publishOnSkip{e, n, s} }}, "I1", false, 0},
		{Mutation{Name: "(e) a retried expiry publishes without the notification claim",
			Store: func(s task.Store) task.Store { return claimAlwaysFree{s} }}, "I2", true, 0},
		{Mutation{Name: "(f) the reconciler lists only Pending tasks",
			Pending: func(p task.PendingLister) task.PendingLister { return onlyPending{p} }}, "I2", false, 400},
		{Mutation{Name: "(i) a deadline change keeps the schedule's record",
			Store: func(s task.Store) task.Store { return keepRecord{s} }}, "I3", false, 400},
		{Mutation{Name: "(w) the take-over runs a task a writer completed with the fired state",
			Expirer: func(e Expirer, n task.Notifier, s task.Store) Expirer { return notifyUnclaimed{e, n, s} }}, "I1", false, 0},
		{Mutation{Name: "(r1) a reminder whose claim failed is sent anyway",
			Store: func(s task.Store) task.Store { return remindAnyway{s} }}, "I6", false, 0},
		{Mutation{Name: "(r2) the worker neither makes nor moves reminder schedules",
			WorkerScheduler: func(s timer.Timer) timer.Timer { return remindersNotMoved{s} }}, "I6", false, 400},
		{Mutation{Name: "(x) an early firing answers success (its schedule, deleted, never fires again)",
			Outcome: earlyIsSuccess}, "I6", false, 0},
	} {
		t.Run(tc.m.Name, func(t *testing.T) {
			budget := tc.budget
			if budget == 0 {
				budget = 50
			}
			s := RunMany(Config{Mutation: tc.m, ConcurrentFires: tc.concurrent}, 1, budget, 0)
			if len(s.Failed) == 0 {
				t.Fatalf("mutant survived %d histories", budget)
			}
			first := s.Failed[0]
			found := false
			for _, v := range first.Violations {
				found = found || v.Invariant == tc.want
			}
			if !found {
				t.Errorf("seed %d caught it, but not by %s: %v", first.Seed, tc.want, first.Violations)
			}
			t.Logf("caught in %d of %d histories; first seed %d: %s", len(s.Failed), budget, first.Seed, first.Violations[0])
		})
	}
}

// TestConcurrentFires injects concurrent duplicate invocations too: every
// invariant holds, with no allowance for them (the notification claim
// keeps the second invocation from publishing).
func TestConcurrentFires(t *testing.T) {
	n := histories(t, 300)
	s := RunMany(Config{ConcurrentFires: true}, 1, n, 0)
	for i, r := range s.Failed {
		if i == 5 {
			break
		}
		t.Errorf("seed %d: %s (replay: go run ./cmd/sim -seed %d -concurrent-fires)", r.Seed, r.Violations[0], r.Seed)
	}
	if s.Faults[FaultConcurrentFire] == 0 {
		t.Error("no concurrent invocation was injected")
	}
}

// An edit's reminder is owed (I6) only when the worker handled a message
// carrying its time between the edit and that time: one handled before
// the edit is a stale message, one at or after the time makes nothing.
func TestHandledBefore(t *testing.T) {
	edit := start.Add(10 * time.Minute)
	at := edit.Add(3 * time.Minute)
	for _, tc := range []struct {
		name    string
		handled []time.Time
		want    bool
	}{
		{"never handled", nil, false},
		{"handled before the edit only", []time.Time{edit.Add(-time.Second)}, false},
		{"handled at the edit", []time.Time{edit}, true},
		{"handled between", []time.Time{edit.Add(-time.Minute), edit.Add(time.Minute)}, true},
		{"handled at the reminder time", []time.Time{at}, false},
		{"handled after it", []time.Time{at.Add(41 * time.Second)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := &taskState{remHandled: map[string][]time.Time{task.FormatTime(at): tc.handled}}
			if got := handledBefore(ts, edit, at); got != tc.want {
				t.Errorf("handledBefore = %v, want %v", got, tc.want)
			}
		})
	}
}
