package memory

import (
	"context"
	"errors"
	"sync"

	"github.com/unschedule/unschedule/internal/domain/task"
)

// Outbox is a task.Notifier that keeps what it was asked to send.
type Outbox struct {
	mu   sync.Mutex
	sent []task.Notification
	// Fail, when set, is called before each publish; a non-nil error is
	// returned instead of sending (fault injection).
	Fail func(n task.Notification) error
}

var _ task.Notifier = (*Outbox)(nil)

// Publish implements task.Notifier. Like the SNS publisher, it refuses a
// notification without a user id: SNS routes by the userId message
// attribute, so such a notification could reach no one.
func (o *Outbox) Publish(_ context.Context, n task.Notification) error {
	if n.UserID == "" {
		return errors.New("memory outbox: a notification needs a user id")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.Fail != nil {
		if err := o.Fail(n); err != nil {
			return err
		}
	}
	o.sent = append(o.sent, n)
	return nil
}

// Sent returns a copy of every notification sent so far.
func (o *Outbox) Sent() []task.Notification {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]task.Notification(nil), o.sent...)
}

// SentFor counts the notifications sent for one task.
func (o *Outbox) SentFor(taskID string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, s := range o.sent {
		if s.TaskID == taskID {
			n++
		}
	}
	return n
}
