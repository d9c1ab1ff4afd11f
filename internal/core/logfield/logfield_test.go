package logfield_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/logfield/logfieldtest"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestOutcomeLinesCarryTheKey: the outcome lines of the cancel worker
// and of the reconciler's repairs name their item in logfield.Key, the
// field unschedule why --logs filters on.
func TestOutcomeLinesCarryTheKey(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	tk := task.Task{UserID: "user-1", TaskID: "01JD0000000000000000000041", Status: task.StatusPending,
		DueAt: now.Add(time.Hour), ScheduleToken: "tok"}
	key := contract.Key{Partition: tk.UserID, Sort: tk.TaskID}.String()
	tests := []struct {
		name string
		want string // an outcome line's message
		run  func(log *slog.Logger) error
	}{
		{"the cancel worker's outcome", "schedule created", func(log *slog.Logger) error {
			w, err := cancel.NewWorker(task.Schema, inmem.NewScheduler(), nil, log)
			if err != nil {
				return err
			}
			return w.Handle(ctx, cancel.Message{Action: cancel.ActionSchedule, Partition: tk.UserID, Sort: tk.TaskID,
				DueAt: tk.DueAt, Token: tk.ScheduleToken, EventID: "e1"})
		}},
		{"the reconciler's repair", "missing schedule created", func(log *slog.Logger) error {
			store, sched := memory.NewStore(), inmem.NewScheduler()
			store.Put(tk)
			c := clock.NewFake(now)
			svc, err := task.InProcess(task.InProcessConfig{Store: store, Notifier: &memory.Outbox{}, Clock: c, Log: log})
			if err != nil {
				return err
			}
			r, err := reconcile.New(reconcile.Config{}, reconcile.Deps{Schema: task.Schema, Items: task.NewReconcileView(store, store),
				Scheduler: sched, Schedules: sched, Firer: svc, Checkpoints: &scratch{}, Clock: c, Sleep: c.Sleep, Log: log})
			if err != nil {
				return err
			}
			_, err = r.Run(ctx)
			return err
		}},
		{"the reconciler's orphan delete", "orphan schedule deleted", func(log *slog.Logger) error {
			store, sched := memory.NewStore(), inmem.NewScheduler()
			if err := sched.Arm(ctx, task.Schema.ScheduleFor(contract.Item{Key: contract.Key{Partition: tk.UserID, Sort: tk.TaskID},
				Due: tk.DueAt, Token: tk.ScheduleToken})); err != nil {
				return err
			}
			c := clock.NewFake(now)
			svc, err := task.InProcess(task.InProcessConfig{Store: store, Notifier: &memory.Outbox{}, Clock: c, Log: log})
			if err != nil {
				return err
			}
			r, err := reconcile.New(reconcile.Config{}, reconcile.Deps{Schema: task.Schema, Items: task.NewReconcileView(store, store),
				Scheduler: sched, Schedules: sched, Firer: svc, Checkpoints: &scratch{}, Clock: c, Sleep: c.Sleep, Log: log})
			if err != nil {
				return err
			}
			_, err = r.Run(ctx)
			return err
		}},
		{"the to-do app's failed schedule create", "schedule create failed; task marked for repair", func(log *slog.Logger) error {
			sched := inmem.NewScheduler()
			sched.Fail = func(string, string) error { return errors.New("throttled") }
			svc, err := task.NewService(task.Deps{Store: memory.NewStore(), Timer: sched, Clock: clock.NewFake(now),
				IDs: fixedID(tk.TaskID), Log: log})
			if err != nil {
				return err
			}
			_, err = svc.Create(ctx, tk.UserID, task.NewTask{Title: "t", DueAt: tk.DueAt})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, c := logfieldtest.New()
			if err := tt.run(log); err != nil {
				t.Fatal(err)
			}
			c.RequireKey(t, tt.want, key)
		})
	}
}

// fixedID gives every task the same id.
type fixedID string

func (f fixedID) NewID(time.Time) string { return string(f) }
func (fixedID) NewToken() string         { return "tok" }

type scratch struct{}

func (scratch) Load(context.Context) (reconcile.Checkpoint, error) {
	return reconcile.Checkpoint{}, nil
}
func (scratch) Save(context.Context, reconcile.Checkpoint) error { return nil }
