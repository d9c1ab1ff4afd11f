package pipeline

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// countingStore counts the expiry's conditional writes.
type countingStore struct {
	task.Store
	expires *int
}

func (s countingStore) Expire(ctx context.Context, userID, taskID string, dueAt, now time.Time) (task.Task, error) {
	*s.expires++
	return s.Store.Expire(ctx, userID, taskID, dueAt, now)
}

// notes is a notifier that keeps what it is given.
type notes struct{ got []task.Notification }

func (n *notes) Publish(_ context.Context, nt task.Notification) error {
	n.got = append(n.got, nt)
	return nil
}

// countingTimer counts the arms through the harness's timer port.
type countingTimer struct {
	inproc.TimerPort
	arms *int
}

func (c countingTimer) Arm(ctx context.Context, s contract.Schedule) error {
	*c.arms++
	return c.TimerPort.Arm(ctx, s)
}

// A harness's Store, Notifier and Wire reach every stage: the service
// arms through the wired timer port, the expiry writes through the
// wrapped store and publishes through the notifier, and the wired firing
// is what the timer runs.
func TestOptionsReachEveryStage(t *testing.T) {
	expires, arms, fires := 0, 0, 0
	n := &notes{}
	p, err := New(Options{Options: inproc.Options{Start: t0, Log: slog.New(slog.DiscardHandler)}, Notifier: n,
		Store: func(s task.Store) task.Store { return countingStore{Store: s, expires: &expires} },
		Wire: func(p *Pipeline, w inproc.Wiring) inproc.Wiring {
			w.Timer = countingTimer{TimerPort: p.Timer, arms: &arms}
			fire := w.Fire
			w.Fire = func(ctx context.Context, s contract.Schedule) (string, error) {
				fires++
				return fire(ctx, s)
			}
			return w
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Service.Create(ctx, user, task.NewTask{Title: "t", DueAt: t0.Add(time.Minute), Reminder: task.ReminderNone}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Drain(ctx, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if arms == 0 || fires != 1 || expires != 1 || len(n.got) != 1 || len(p.Outbox.Sent()) != 0 {
		t.Errorf("arms %d, fires %d, expiries %d, notified %d (outbox %d); want the wired timer, firing, store and notifier used",
			arms, fires, expires, len(n.got), len(p.Outbox.Sent()))
	}
}
