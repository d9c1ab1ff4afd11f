package logfield_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/logfield/logfieldtest"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

// TestOutcomeLinesCarryTheKey: the outcome lines of the cancel worker
// and of the reconciler's repairs name their item in logfield.Key, the
// field unschedule why --logs filters on (an adopter's own lines are its
// tests': the to-do app's failed create is internal/todo/task's).
func TestOutcomeLinesCarryTheKey(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	s := timertest.Schema
	it := contract.Item{Key: contract.Key{Partition: "user-1", Sort: "01JD0000000000000000000041"}, State: "Pending",
		Due: now.Add(time.Hour), Token: "tok"}
	key := it.Key.String()
	// reconciler runs one pass over items and sched, the core's stand-ins
	// (the firing core delivers to a target that does nothing).
	reconciler := func(log *slog.Logger, items *inmem.Items, sched *inmem.Scheduler) error {
		c := clock.NewFake(now)
		core, err := fire.New(fire.Config{Schema: s, Store: items, Now: c.Now, Log: log})
		if err != nil {
			return err
		}
		r, err := reconcile.New(reconcile.Config{}, reconcile.Deps{Schema: s, Items: inmem.Armed{Items: items},
			Scheduler: sched, Schedules: sched, Firer: fire.Firing{Core: core, Target: nothing{}}, Checkpoints: &scratch{},
			Clock: c, Sleep: c.Sleep, Log: log})
		if err != nil {
			return err
		}
		_, err = r.Run(ctx)
		return err
	}
	tests := []struct {
		name string
		want string // an outcome line's message
		run  func(log *slog.Logger) error
	}{
		{"the cancel worker's outcome", "schedule created", func(log *slog.Logger) error {
			w, err := cancel.NewWorker(s, inmem.NewScheduler(), nil, log)
			if err != nil {
				return err
			}
			return w.Handle(ctx, cancel.Message{Action: cancel.ActionSchedule, Partition: it.Key.Partition, Sort: it.Key.Sort,
				DueAt: it.Due, Token: it.Token, EventID: "e1"})
		}},
		{"the reconciler's repair", "missing schedule created", func(log *slog.Logger) error {
			items := inmem.NewItems(s)
			if err := items.Put(map[string]string{s.PartitionKey: it.Key.Partition, s.SortKey: it.Key.Sort,
				s.StateAttr: it.State, s.DueAttr: contract.FormatTime(it.Due), s.TokenAttr: it.Token}); err != nil {
				return err
			}
			return reconciler(log, items, inmem.NewScheduler())
		}},
		{"the reconciler's orphan delete", "orphan schedule deleted", func(log *slog.Logger) error {
			sched := inmem.NewScheduler()
			if err := sched.Arm(ctx, s.ScheduleFor(contract.Item{Key: it.Key, Due: it.Due, Token: it.Token})); err != nil {
				return err
			}
			return reconciler(log, inmem.NewItems(s), sched)
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

// nothing is a target that delivers nowhere.
type nothing struct{}

func (nothing) Deliver(context.Context, contract.Payload) error { return nil }

type scratch struct{}

func (scratch) Load(context.Context) (reconcile.Checkpoint, error) {
	return reconcile.Checkpoint{}, nil
}
func (scratch) Save(context.Context, reconcile.Checkpoint) error { return nil }
