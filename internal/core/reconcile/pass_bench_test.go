package reconcile_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// BenchmarkPass100k is one full reconciler pass over 100,000 pending
// tasks whose schedules are all right, on the memory store and scheduler,
// with no rate limit and a fixed clock: "confirmed" when every task
// records its schedule (Task.ScheduledFor, the steady state after the
// API's create), "unconfirmed" when none does (each costs a GetSchedule).
// The memory adapters sort everything on every List page, so the pass
// lists from snapshots sorted once (snapshotPending, snapshotSchedules):
// the time is the reconciler's, not the fakes' sorting. `make bench` runs
// it.
func BenchmarkPass100k(b *testing.B) {
	for _, confirmed := range []bool{true, false} {
		name := "unconfirmed"
		if confirmed {
			name = "confirmed"
		}
		b.Run(name, func(b *testing.B) { benchPass(b, confirmed) })
	}
}

func benchPass(b *testing.B, confirmed bool) {
	const n = 100_000
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	store, sched := memory.NewStore(), inmem.NewScheduler()
	ctx := context.Background()
	var pending []task.Task
	var schedules []contract.Schedule
	for i := range n {
		t := task.Task{UserID: "user-" + strconv.Itoa(i%1000), TaskID: fmt.Sprintf("01JBQ1R8ZK3W4X5Y6Z7%07d", i),
			Title: "t", Status: task.StatusPending, DueAt: now.Add(time.Duration(1+i%1000) * time.Hour),
			CreatedAt: now, UpdatedAt: now, ScheduleToken: "tok-" + strconv.Itoa(i)}
		if confirmed {
			t.ScheduledFor = t.DueAt
		}
		store.Put(t)
		s := task.ScheduleFor(t)
		if err := sched.Arm(ctx, s); err != nil {
			b.Fatal(err)
		}
		pending, schedules = append(pending, t), append(schedules, s)
	}
	svc, err := task.InProcess(task.InProcessConfig{Store: store, Notifier: &memory.Outbox{}, Clock: fixedClock(now)})
	if err != nil {
		b.Fatal(err)
	}
	r, err := reconcile.New(reconcile.Config{RatePerSec: 1e9, Budget: 24 * time.Hour},
		reconcile.Deps{Schema: task.Schema, Items: task.NewReconcileView(store, snapshotPending(pending)), Scheduler: sched,
			Schedules: snapshotSchedules{Scheduler: sched, all: schedules}, Firer: svc, Checkpoints: &checkpoints{},
			Clock: fixedClock(now), Sleep: func(context.Context, time.Duration) error { return nil },
			Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := r.Run(ctx)
		if err != nil || !res.Completed || res.Errors > 0 || res.SchedulesCreated+res.SchedulesMoved+res.SchedulesDeleted > 0 {
			b.Fatalf("pass: %+v, %v", res, err)
		}
	}
	b.ReportMetric(n, "tasks/op")
}

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

type checkpoints struct{ cp reconcile.Checkpoint }

func (c *checkpoints) Load(context.Context) (reconcile.Checkpoint, error)    { return c.cp, nil }
func (c *checkpoints) Save(_ context.Context, cp reconcile.Checkpoint) error { c.cp = cp; return nil }

// snapshotPending pages through tasks in the order given; the cursor is
// the next index.
type snapshotPending []task.Task

func (s snapshotPending) ListPending(_ context.Context, p task.PendingRequest) (task.Page, error) {
	if !p.DueBy.IsZero() {
		// The overdue sweep: every task here is due later.
		for _, t := range s {
			if !t.DueAt.After(p.DueBy) {
				panic("benchmark tasks must all be due after the sweep's deadline")
			}
		}
		return task.Page{}, nil
	}
	from, end := page(task.PageRequest{Cursor: p.Cursor, Limit: p.Limit}, len(s))
	out := task.Page{Tasks: s[from:end]}
	if end < len(s) {
		out.Cursor = strconv.Itoa(end)
	}
	return out, nil
}

// snapshotSchedules reads single schedules from the memory scheduler and
// pages through a fixed list.
type snapshotSchedules struct {
	*inmem.Scheduler
	all []contract.Schedule
}

func (s snapshotSchedules) List(_ context.Context, p task.PageRequest) (timer.Page, error) {
	from, end := page(p, len(s.all))
	out := timer.Page{Schedules: s.all[from:end]}
	if end < len(s.all) {
		out.Cursor = strconv.Itoa(end)
	}
	return out, nil
}

func page(p task.PageRequest, n int) (from, end int) {
	from, _ = strconv.Atoi(p.Cursor)
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	return from, min(from+limit, n)
}
