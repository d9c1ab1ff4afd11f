package pipeline

import (
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Every timer's stand-in fires a pending task once at (or, for TTL, after)
// its deadline, moves it with its deadline and never fires a completed
// one: the same service code on each timer.
func TestEveryTimerFiresMovesAndCancels(t *testing.T) {
	for _, l := range timerkind.Names() {
		t.Run(string(l), func(t *testing.T) {
			p, err := New(Options{Options: inproc.Options{Start: t0, Timer: l, TTLDelay: func() time.Duration { return 90 * time.Minute },
				Log: slog.New(slog.DiscardHandler)}})
			if err != nil {
				t.Fatal(err)
			}
			h := &harness{Pipeline: p, t: t}
			moved := h.create(t0.Add(10 * time.Minute))
			done := h.create(t0.Add(10 * time.Minute))
			h.drain(t0.Add(time.Minute))
			if _, err := h.Service.Update(ctx, moved.UserID, moved.TaskID, task.Patch{DueAt: ptr(t0.Add(20 * time.Minute))}); err != nil {
				t.Fatal(err)
			}
			complete(h, done)
			h.drain(t0.Add(2 * time.Minute))
			if n := len(h.Timer.All()); n != 1 {
				t.Fatalf("%d schedules, want the moved task's only: %+v", n, h.Timer.All())
			}
			late := time.Duration(0)
			if l == timerspec.TTL {
				late = 90 * time.Minute
			}
			h.drain(t0.Add(20*time.Minute + late - time.Second))
			if len(h.Outbox.Sent()) != 0 {
				t.Fatalf("notified before the deadline (plus the TTL delay): %+v", h.Outbox.Sent())
			}
			h.drain(t0.Add(21*time.Minute + late))
			sent := h.Outbox.Sent()
			if len(sent) != 1 || sent[0].TaskID != moved.TaskID || !sent[0].DueAt.Equal(t0.Add(20*time.Minute)) {
				t.Fatalf("sent %+v, want one notification for the moved task at its new deadline", sent)
			}
			if h.status(done) != task.StatusDone || len(h.Timer.All()) != 0 {
				t.Fatalf("completed task %s, schedules left %+v", h.status(done), h.Timer.All())
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// With SchedulerMinutes, a schedule fires where the Scheduler adapter
// places it (awsscheduler.ScheduleTime, the whole minute at or after its
// time) plus the lateness into that minute, and not a second before:
// the firing horizon agrees with ScheduleTime for due times on and off
// the minute.
func TestSchedulerMinutesFireWhereTheAdapterPlacesSchedules(t *testing.T) {
	for _, tc := range []struct {
		due  time.Duration // after t0, a whole minute
		late time.Duration
	}{
		{10 * time.Minute, 0}, {10*time.Minute + time.Second, 0}, {10*time.Minute + 59*time.Second, 0},
		{10 * time.Minute, 59 * time.Second}, {10*time.Minute + 30*time.Second, 20 * time.Second},
	} {
		due := t0.Add(tc.due)
		fires := awsscheduler.ScheduleTime(due).Add(tc.late)
		t.Run(contract.FormatTime(due)+"+"+tc.late.String(), func(t *testing.T) {
			p, err := New(Options{Options: inproc.Options{Start: t0, SchedulerMinutes: true, SchedulerLateness: tc.late,
				Log: slog.New(slog.DiscardHandler)}})
			if err != nil {
				t.Fatal(err)
			}
			h := &harness{Pipeline: p, t: t}
			h.create(due)
			h.drain(t0)
			for _, step := range []struct {
				now  time.Time
				sent int
			}{{due.Add(-time.Second), 0}, {fires.Add(-time.Second), 0}, {fires, 1}} {
				h.drain(step.now)
				if n := len(h.Outbox.Sent()); n != step.sent {
					t.Fatalf("at %v: %d notifications, want %d (fires at %v)", step.now, n, step.sent, fires)
				}
			}
		})
	}
}
