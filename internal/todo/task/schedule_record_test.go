package task_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestCreateRecordsTheSchedule pins when the reconciler may trust a
// task's schedule without reading it back (Task.ScheduleConfirmed): only
// after Create saw the schedule made, and until the deadline changes. A
// failed record leaves the task unconfirmed, which costs the reconciler a
// read, never a lost expiry.
func TestCreateRecordsTheSchedule(t *testing.T) {
	ctx := context.Background()
	due := expireDue
	for _, tc := range []struct {
		name          string
		schedFail     error
		storeFail     string // the store operation that fails
		wantConfirmed bool
		wantRepair    bool
	}{
		{"schedule created: recorded", nil, "", true, false},
		{"schedule create failed: marked for repair", errDB, "", false, true},
		{"schedule exists under another token: left unconfirmed", task.ErrScheduleExists, "", false, false},
		{"record write failed: left unconfirmed", nil, "MarkScheduled", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, sched := memory.NewStore(), inmem.NewScheduler()
			sched.Fail = func(op, _ string) error {
				if op == "Arm" {
					return tc.schedFail
				}
				return nil
			}
			store.Fail = func(op string) error {
				if op == tc.storeFail {
					return errDB
				}
				return nil
			}
			svc, err := task.NewService(task.Deps{Store: store, Timer: sched, Clock: &expireClock{t: due.Add(-time.Hour)},
				Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			created, err := svc.Create(ctx, "u1", task.NewTask{Title: "t", DueAt: due})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			store.Fail = nil
			stored, err := store.Get(ctx, "u1", created.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.ScheduleConfirmed() != tc.wantConfirmed || stored.ScheduleRepair != tc.wantRepair {
				t.Fatalf("stored %+v: confirmed %v, repair %v; want %v, %v", stored, stored.ScheduleConfirmed(),
					stored.ScheduleRepair, tc.wantConfirmed, tc.wantRepair)
			}
			if created.ScheduledFor != stored.ScheduledFor {
				t.Errorf("Create returned ScheduledFor %v, stored %v", created.ScheduledFor, stored.ScheduledFor)
			}
			if !tc.wantConfirmed {
				return
			}
			// Any deadline change voids the record, even back to the same
			// deadline: the worker moves the schedule and records nothing.
			for _, d := range []time.Time{due.Add(time.Hour), due} {
				moved, err := svc.Update(ctx, "u1", created.TaskID, task.Patch{DueAt: &d})
				if err != nil {
					t.Fatal(err)
				}
				if moved.ScheduleConfirmed() || !moved.ScheduledFor.IsZero() {
					t.Fatalf("after a deadline change to %v: %+v is still confirmed", d, moved)
				}
			}
		})
	}
}

func TestIDTime(t *testing.T) {
	at := time.Date(2031, 2, 3, 4, 5, 6, 789_000_000, time.UTC)
	id := task.RandomIDs{}.NewID(at)
	if got, ok := task.IDTime(id); !ok || !got.Equal(at) {
		t.Fatalf("IDTime(%s) = %v, %v; want %v", id, got, ok, at)
	}
	if _, ok := task.IDTime("not-an-id"); ok {
		t.Fatal("IDTime accepted a non-id")
	}
}
