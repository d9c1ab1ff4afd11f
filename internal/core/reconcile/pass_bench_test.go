package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// BenchmarkPass100k is one full reconciler pass over 100,000 armed
// items whose schedules are all right, on the memory scheduler, with no
// rate limit and a fixed clock: "confirmed" when every item records its
// schedule (reconcile.Item.ScheduledFor, the steady state after a
// writer's create), "unconfirmed" when none does (each costs a
// GetSchedule). The memory stand-ins sort everything on every List page,
// so the pass lists from snapshots sorted once (snapshotItems,
// snapshotSchedules): the time is the reconciler's, not the fakes'
// sorting. `make bench` runs
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
	sched := inmem.NewScheduler()
	ctx := context.Background()
	items := snapshotItems{byKey: map[contract.Key]reconcile.Item{}}
	var schedules []contract.Schedule
	for i := range n {
		it := reconcile.Item{Item: contract.Item{Key: contract.Key{Partition: "user-" + strconv.Itoa(i%1000),
			Sort: fmt.Sprintf("01JBQ1R8ZK3W4X5Y6Z7%07d", i)}, State: "Pending",
			Due: now.Add(time.Duration(1+i%1000) * time.Hour), Token: "tok-" + strconv.Itoa(i)}, Updated: now}
		if confirmed {
			it.ScheduledFor = it.Due
		}
		s := schema.ScheduleFor(it.Item)
		if err := sched.Arm(ctx, s); err != nil {
			b.Fatal(err)
		}
		items.all, items.byKey[it.Key], schedules = append(items.all, it), it, append(schedules, s)
	}
	r, err := reconcile.New(reconcile.Config{RatePerSec: 1e9, Budget: 24 * time.Hour},
		reconcile.Deps{Schema: schema, Items: items, Scheduler: sched,
			Schedules: snapshotSchedules{Scheduler: sched, all: schedules}, Firer: noFirer{}, Checkpoints: &checkpoints{},
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
	b.ReportMetric(n, "items/op")
}

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

type checkpoints struct{ cp reconcile.Checkpoint }

func (c *checkpoints) Load(context.Context) (reconcile.Checkpoint, error)    { return c.cp, nil }
func (c *checkpoints) Save(_ context.Context, cp reconcile.Checkpoint) error { c.cp = cp; return nil }

// snapshotItems pages through items in the order given (the cursor is
// the next index) and reads one by key.
type snapshotItems struct {
	all   []reconcile.Item
	byKey map[contract.Key]reconcile.Item
}

func (s snapshotItems) List(_ context.Context, p reconcile.ListRequest) (reconcile.ItemPage, error) {
	if !p.DueBy.IsZero() {
		// The overdue sweep: every item here is due later.
		for _, it := range s.all {
			if !it.Due.After(p.DueBy) {
				panic("benchmark items must all be due after the sweep's deadline")
			}
		}
		return reconcile.ItemPage{}, nil
	}
	from, end := page(timer.PageRequest{Cursor: p.Cursor, Limit: p.Limit}, len(s.all))
	out := reconcile.ItemPage{Items: s.all[from:end]}
	if end < len(s.all) {
		out.Cursor = strconv.Itoa(end)
	}
	return out, nil
}

func (s snapshotItems) Get(_ context.Context, k contract.Key) (reconcile.Item, error) {
	it, ok := s.byKey[k]
	if !ok {
		return reconcile.Item{}, reconcile.ErrItemNotFound
	}
	return it, nil
}

// noFirer fires nothing: no item of the benchmark is overdue.
type noFirer struct{}

func (noFirer) Fire(context.Context, contract.Payload) (fire.Outcome, error) {
	return "", errors.New("no item of the benchmark is overdue")
}

// snapshotSchedules reads single schedules from the memory scheduler and
// pages through a fixed list.
type snapshotSchedules struct {
	*inmem.Scheduler
	all []contract.Schedule
}

func (s snapshotSchedules) List(_ context.Context, p timer.PageRequest) (timer.Page, error) {
	from, end := page(p, len(s.all))
	out := timer.Page{Schedules: s.all[from:end]}
	if end < len(s.all) {
		out.Cursor = strconv.Itoa(end)
	}
	return out, nil
}

func page(p timer.PageRequest, n int) (from, end int) {
	from, _ = strconv.Atoi(p.Cursor)
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	return from, min(from+limit, n)
}
