package memory

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/todo/task"
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
	return inmem.CountWhere(&o.mu, o.sent, func(n task.Notification) bool { return n.TaskID == taskID })
}

// CampaignSender is campaign.Sender in memory: an outbox with an
// idempotency record, one message per key.
type CampaignSender struct {
	mu    sync.Mutex
	clock campaign.Clock
	sent  map[string]campaign.Receipt
	// Outbox holds every message actually sent, in order.
	Outbox []campaign.Message
	// Fault, when set, is asked before each send; a non-nil error is
	// returned and nothing is sent.
	Fault func(m campaign.Message) error
}

var _ campaign.Sender = (*CampaignSender)(nil)

// NewCampaignSender returns an empty outbox.
func NewCampaignSender(clock campaign.Clock) *CampaignSender {
	return &CampaignSender{clock: clock, sent: map[string]campaign.Receipt{}}
}

// Send implements campaign.Sender.
func (s *CampaignSender) Send(_ context.Context, m campaign.Message) (campaign.Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.sent[m.IdempotencyKey]; ok {
		return r, nil
	}
	if s.Fault != nil {
		if err := s.Fault(m); err != nil {
			return campaign.Receipt{}, err
		}
	}
	r := campaign.Receipt{MessageID: fmt.Sprintf("msg-%d", len(s.Outbox)+1), SentAt: s.clock.Now()}
	s.sent[m.IdempotencyKey] = r
	s.Outbox = append(s.Outbox, m)
	return r, nil
}

// Sent implements campaign.Sender.
func (s *CampaignSender) Sent(_ context.Context, key string) (campaign.Receipt, error) {
	r, ok := inmem.Lookup(&s.mu, s.sent, key)
	if !ok {
		return campaign.Receipt{}, fmt.Errorf("%s: %w", key, campaign.ErrNotSent)
	}
	return r, nil
}

// Count returns how many messages were sent with key.
func (s *CampaignSender) Count(key string) int {
	return inmem.CountWhere(&s.mu, s.Outbox, func(m campaign.Message) bool { return m.IdempotencyKey == key })
}
