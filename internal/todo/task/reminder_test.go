package task_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

func TestParseReminder(t *testing.T) {
	now := expireDue.Add(-48 * time.Hour)
	due := `"dueAt":"2030-05-06T07:08:09Z"`
	for _, tc := range []struct {
		body, want, err string
	}{
		{`{"title":"a",` + due + `}`, "1h", ""},
		{`{"title":"a",` + due + `,"reminder":"none"}`, "none", ""},
		{`{"title":"a",` + due + `,"reminder":"15m"}`, "15m", ""},
		{`{"title":"a",` + due + `,"reminder":"1d"}`, "1d", ""},
		{`{"title":"a",` + due + `,"reminder":"2h"}`, "", `reminder must be one of none, 15m, 1h, 1d (given "2h")`},
		{`{"title":"a",` + due + `,"reminder":""}`, "", `reminder must be one of none, 15m, 1h, 1d (given "")`},
	} {
		in, err := task.ParseNewTask([]byte(tc.body), now)
		if tc.err != "" {
			var ve *task.ValidationError
			if !errors.As(err, &ve) || ve.Msg != tc.err {
				t.Errorf("%s: err %v, want %q", tc.body, err, tc.err)
			}
			continue
		}
		if err != nil || string(in.Reminder) != tc.want {
			t.Errorf("%s: %+v, %v; want reminder %s", tc.body, in, err, tc.want)
		}
	}
	p, err := task.ParsePatch([]byte(`{"reminder":"15m"}`), now)
	if err != nil || p.Reminder == nil || *p.Reminder != task.Reminder15m || p.Empty() {
		t.Fatalf("ParsePatch reminder: %+v, %v", p, err)
	}
	if _, err := task.ParsePatch([]byte(`{"reminder":"soon"}`), now); err == nil ||
		err.Error() != `reminder must be one of none, 15m, 1h, 1d (given "soon")` {
		t.Fatalf("ParsePatch bad reminder: %v", err)
	}
}

// TestCreateMakesReminderSchedule: Create makes the reminder schedule
// beside the deadline's when its time is ahead, stores a passed one
// without scheduling it, and marks the task for repair when the reminder
// schedule fails.
func TestCreateMakesReminderSchedule(t *testing.T) {
	ctx := context.Background()
	now := expireDue.Add(-90 * time.Minute)
	for _, tc := range []struct {
		name       string
		reminder   task.Reminder
		failRemind bool
		wantAt     time.Time // zero: no reminder schedule
		wantStored time.Time
		wantRepair bool
	}{
		{"default 1h, ahead", "", false, expireDue.Add(-time.Hour), expireDue.Add(-time.Hour), false},
		{"15m", task.Reminder15m, false, expireDue.Add(-15 * time.Minute), expireDue.Add(-15 * time.Minute), false},
		{"1d: passed, stored, not scheduled", task.Reminder1d, false, time.Time{}, expireDue.Add(-24 * time.Hour), false},
		{"none", task.ReminderNone, false, time.Time{}, time.Time{}, false},
		{"reminder schedule fails: repair", task.Reminder1h, true, time.Time{}, expireDue.Add(-time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, sched := memory.NewStore(), inmem.NewScheduler()
			sched.Fail = func(op, name string) error {
				if tc.failRemind && strings.HasPrefix(name, "remind-") {
					return errDB
				}
				return nil
			}
			svc, err := task.NewService(task.Deps{Store: store, Timer: sched, Clock: &expireClock{t: now},
				Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			created, err := svc.Create(ctx, "u1", task.NewTask{Title: "t", DueAt: expireDue, Reminder: tc.reminder})
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := store.Get(ctx, "u1", created.TaskID)
			if !stored.RemindAt.Equal(tc.wantStored) || stored.ScheduleRepair != tc.wantRepair {
				t.Fatalf("stored RemindAt %v repair %v; want %v %v", stored.RemindAt, stored.ScheduleRepair, tc.wantStored, tc.wantRepair)
			}
			// A reminder passed when written is done at once; no other.
			var wantDone time.Time
			if tc.wantAt.IsZero() && !tc.wantRepair {
				wantDone = tc.wantStored
			}
			if !stored.RemindedFor.Equal(wantDone) {
				t.Fatalf("RemindedFor %v, want %v", stored.RemindedFor, wantDone)
			}
			if tc.wantRepair && stored.ScheduleConfirmed() {
				t.Fatal("a task without its reminder schedule is confirmed")
			}
			r, ok := sched.Lookup(task.ReminderName(created.TaskID))
			if ok != !tc.wantAt.IsZero() || ok && (!r.At.Equal(tc.wantAt) || !r.Payload.Remind.Equal(tc.wantAt) || !r.Payload.Due.Equal(expireDue)) {
				t.Fatalf("reminder schedule %+v (%v), want at %v", r, ok, tc.wantAt)
			}
			if _, ok := sched.Lookup(task.ScheduleName(created.TaskID)); !ok {
				t.Fatal("the deadline's schedule is missing")
			}
		})
	}
}

// TestRemind: a reminder is published only while the task is Pending with
// the deadline and reminder time it was made for, once per reminder time.
func TestRemind(t *testing.T) {
	ctx := context.Background()
	remAt := expireDue.Add(-time.Hour)
	moveDue := expireDue.Add(time.Hour)
	fifteen := task.Reminder15m
	none := task.ReminderNone
	for _, tc := range []struct {
		name   string
		change *task.Patch // applied before the reminder fires
		del    bool
		want   task.RemindOutcome
	}{
		{"pending: reminded", nil, false, task.Reminded},
		{"completed before: skipped", &task.Patch{Complete: true}, false, task.RemindSkipped},
		{"deleted before: skipped", nil, true, task.RemindSkipped},
		{"deadline moved: skipped", &task.Patch{DueAt: &moveDue}, false, task.RemindSkipped},
		{"reminder changed: skipped", &task.Patch{Reminder: &fifteen}, false, task.RemindSkipped},
		{"reminder removed: skipped", &task.Patch{Reminder: &none}, false, task.RemindSkipped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, out := memory.NewStore(), &memory.Outbox{}
			clock := &expireClock{t: expireDue.Add(-2 * time.Hour)}
			svc, err := newTodo(task.Deps{Store: store, Timer: inmem.NewScheduler(), Clock: clock, Log: slog.New(slog.DiscardHandler)},
				task.InProcessConfig{Notifier: out, WebURL: "https://app.example"})
			if err != nil {
				t.Fatal(err)
			}
			created, err := svc.Create(ctx, "u1", task.NewTask{Title: "Pay rent", Description: "flat 3", DueAt: expireDue})
			if err != nil {
				t.Fatal(err)
			}
			req := task.RemindRequest{UserID: "u1", TaskID: created.TaskID, DueAt: expireDue, RemindAt: remAt}
			clock.t = remAt.Add(-time.Second)
			if got, err := svc.Remind(ctx, req); !errors.Is(err, task.ErrTooEarly) {
				t.Fatalf("before its time: %s, %v; want an error wrapping ErrTooEarly (retried)", got, err)
			}
			if tc.change != nil {
				if _, err := svc.Update(ctx, "u1", created.TaskID, *tc.change); err != nil {
					t.Fatal(err)
				}
			}
			if tc.del {
				if err := svc.Delete(ctx, "u1", created.TaskID); err != nil {
					t.Fatal(err)
				}
			}
			clock.t = remAt.Add(time.Second)
			got, err := svc.Remind(ctx, req)
			if err != nil || got != tc.want {
				t.Fatalf("Remind = %s, %v; want %s", got, err, tc.want)
			}
			// A second firing (a retry, a duplicate) never reminds again.
			if again, err := svc.Remind(ctx, req); again != task.RemindSkipped || err != nil {
				t.Fatalf("second Remind = %s, %v", again, err)
			}
			sent := out.Sent()
			if tc.want != task.Reminded {
				if len(sent) != 0 {
					t.Fatalf("sent %+v", sent)
				}
				return
			}
			if len(sent) != 1 || sent[0].Reminder != task.Reminder1h || sent[0].Title != "Pay rent" ||
				sent[0].Description != "flat 3" || !sent[0].DueAt.Equal(expireDue) ||
				sent[0].Link != "https://app.example/#/tasks/"+created.TaskID {
				t.Fatalf("sent %+v", sent)
			}
			if st, _ := store.Get(ctx, "u1", created.TaskID); st.Status != task.StatusPending || !st.RemindedFor.Equal(remAt) {
				t.Fatalf("after the reminder: %+v", st)
			}
		})
	}
}

// TestRemindRetry: a failed publish leaves the claim; a retry within the
// lease is told another attempt holds it, and one after takes over.
func TestRemindRetry(t *testing.T) {
	ctx := context.Background()
	store, out := memory.NewStore(), &memory.Outbox{}
	clock := &expireClock{t: expireDue.Add(-2 * time.Hour)}
	svc, err := newTodo(task.Deps{Store: store, Timer: inmem.NewScheduler(), Clock: clock, Log: slog.New(slog.DiscardHandler)},
		task.InProcessConfig{Notifier: out})
	if err != nil {
		t.Fatal(err)
	}
	created, _ := svc.Create(ctx, "u1", task.NewTask{Title: "t", DueAt: expireDue})
	req := task.RemindRequest{UserID: "u1", TaskID: created.TaskID, DueAt: expireDue, RemindAt: created.RemindAt}
	clock.t = created.RemindAt
	out.Fail = func(task.Notification) error { return errSNS }
	if _, err := svc.Remind(ctx, req); !errors.Is(err, errSNS) {
		t.Fatalf("failed publish: %v", err)
	}
	out.Fail = nil
	clock.t = clock.t.Add(lease / 2)
	if _, err := svc.Remind(ctx, req); !errors.Is(err, task.ErrNotifyInProgress) {
		t.Fatalf("retry within the lease: %v", err)
	}
	clock.t = clock.t.Add(lease)
	if got, err := svc.Remind(ctx, req); got != task.Reminded || err != nil || len(out.Sent()) != 1 {
		t.Fatalf("retry after the lease: %s, %v, sent %d", got, err, len(out.Sent()))
	}
}

// TestRemindAfterMovingAwayAndBack: a firing retried after the task's
// deadline moved away and back, once the reminder time had passed, sends
// nothing: the time was written when already passed, which makes it done.
func TestRemindAfterMovingAwayAndBack(t *testing.T) {
	ctx := context.Background()
	store, out := memory.NewStore(), &memory.Outbox{}
	clock := &expireClock{t: expireDue.Add(-2 * time.Hour)}
	svc, err := newTodo(task.Deps{Store: store, Timer: inmem.NewScheduler(), Clock: clock, Log: slog.New(slog.DiscardHandler)},
		task.InProcessConfig{Notifier: out})
	if err != nil {
		t.Fatal(err)
	}
	created, _ := svc.Create(ctx, "u1", task.NewTask{Title: "t", DueAt: expireDue})
	req := task.RemindRequest{UserID: "u1", TaskID: created.TaskID, DueAt: expireDue, RemindAt: created.RemindAt}
	clock.t = created.RemindAt.Add(time.Minute)
	away, back := expireDue.Add(time.Hour), expireDue
	for _, d := range []*time.Time{&away, &back} {
		if _, err := svc.Update(ctx, "u1", created.TaskID, task.Patch{DueAt: d}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := svc.Remind(ctx, req); got != task.RemindSkipped || err != nil || len(out.Sent()) != 0 {
		t.Fatalf("Remind = %s, %v, sent %d; want skipped, none", got, err, len(out.Sent()))
	}
}

// racingStore changes the task's reminder between Update's read and its
// write, once.
type racingStore struct {
	*memory.Store
	raced bool
}

func (s *racingStore) UpdatePending(ctx context.Context, userID, taskID string, p task.Patch, now time.Time) (task.Task, error) {
	if !s.raced {
		s.raced = true
		r := task.Reminder1d
		if _, err := s.Store.UpdatePending(ctx, userID, taskID, task.Patch{Reminder: &r,
			Basis: &task.ReminderBasis{DueAt: p.Basis.DueAt, Reminder: p.Basis.Reminder, RemindAt: expireDue.Add(-24 * time.Hour)}}, now); err != nil {
			return task.Task{}, err
		}
	}
	return s.Store.UpdatePending(ctx, userID, taskID, p, now)
}

// TestUpdateKeepsRemindAtInStep: a deadline or reminder change sets the
// reminder time from the task as it is when written, even when another
// change came between Update's read and its write.
func TestUpdateKeepsRemindAtInStep(t *testing.T) {
	ctx := context.Background()
	store := &racingStore{Store: memory.NewStore()}
	svc, err := task.NewService(task.Deps{Store: store, Timer: inmem.NewScheduler(),
		Clock: &expireClock{t: expireDue.Add(-48 * time.Hour)}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	created, _ := svc.Create(ctx, "u1", task.NewTask{Title: "t", DueAt: expireDue})
	later := expireDue.Add(2 * time.Hour)
	got, err := svc.Update(ctx, "u1", created.TaskID, task.Patch{DueAt: &later})
	if err != nil {
		t.Fatal(err)
	}
	if got.Reminder != task.Reminder1d || !got.RemindAt.Equal(later.Add(-24*time.Hour)) {
		t.Fatalf("after a racing reminder change: reminder %s at %v, want 1d at %v", got.Reminder, got.RemindAt, later.Add(-24*time.Hour))
	}
	none := task.ReminderNone
	if got, err = svc.Update(ctx, "u1", created.TaskID, task.Patch{Reminder: &none}); err != nil || !got.RemindAt.IsZero() || !got.DueAt.Equal(later) {
		t.Fatalf("reminder none: %+v, %v", got, err)
	}
}
