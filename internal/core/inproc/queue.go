package inproc

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/clock"
)

// QueueConfig sets the FIFO queue's behaviour.
type QueueConfig struct {
	// VisibilityTimeout hides a received message until it is acknowledged
	// or this long has passed. Default: 30 seconds.
	VisibilityTimeout time.Duration
	// MaxReceiveCount moves a message to the dead-letter queue when it
	// would be received more often. Default: 5.
	MaxReceiveCount int
	// DedupWindow is how long a deduplication id suppresses a resend.
	// Default: 5 minutes, as SQS.
	DedupWindow time.Duration
}

func (c QueueConfig) withDefaults() QueueConfig {
	if c.VisibilityTimeout <= 0 {
		c.VisibilityTimeout = 30 * time.Second
	}
	if c.MaxReceiveCount <= 0 {
		c.MaxReceiveCount = 5
	}
	if c.DedupWindow <= 0 {
		c.DedupWindow = 5 * time.Minute
	}
	return c
}

// Received is one delivery of a message.
type Received struct {
	MessageID     string
	ReceiptHandle string
	GroupID       string
	Body          []byte
	// ReceiveCount counts deliveries of the message, this one included.
	ReceiveCount int
}

type queued struct {
	id, group      string
	body           []byte
	receives       int
	invisibleUntil time.Time
	receipt        string
}

// Queue is an SQS FIFO queue in memory, with the semantics the pipeline
// relies on: a deduplication id seen within the window is accepted and
// dropped; messages of one group are delivered in order and never while
// an earlier one of the group is in flight; a message not acknowledged
// within the visibility timeout is delivered again; one received more than
// MaxReceiveCount times moves to the dead-letter queue.
type Queue struct {
	mu    sync.Mutex
	clock clock.Reader
	cfg   QueueConfig
	seq   int
	msgs  []*queued
	dedup map[string]time.Time
	dlq   []Received
	// Fail, when set, is called for each message sent through Enqueue; a
	// non-nil error rejects that message (fault injection).
	Fail func(m cancel.Message) error
	// LoseAck, when set, is called on each Ack; true drops the ack, as if
	// the worker crashed after its work (fault injection).
	LoseAck func(r Received) bool
}

var _ cancel.Enqueuer = (*Queue)(nil)

// NewQueue returns an empty queue on the clock.
func NewQueue(c clock.Reader, cfg QueueConfig) *Queue {
	return &Queue{clock: c, cfg: cfg.withDefaults(), dedup: map[string]time.Time{}}
}

// Send adds a message unless its deduplication id was sent within the
// window. It returns the message id (the first one's, for a duplicate).
func (q *Queue) Send(groupID, dedupID string, body []byte) (messageID string, duplicate bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	key := dedupID
	if at, ok := q.dedup[key]; ok && now.Sub(at) < q.cfg.DedupWindow {
		return "dup-of-" + dedupID, true
	}
	q.dedup[key] = now
	q.seq++
	id := fmt.Sprintf("msg-%06d", q.seq)
	q.msgs = append(q.msgs, &queued{id: id, group: groupID, body: append([]byte(nil), body...)})
	return id, false
}

// Enqueue implements cancel.Enqueuer. Like the SQS adapter, it stops at
// the first rejected message and reports the rest as not sent.
func (q *Queue) Enqueue(_ context.Context, msgs []cancel.Message) ([]cancel.Failed, error) {
	var failed []cancel.Failed
	for _, m := range msgs {
		if len(failed) > 0 {
			failed = append(failed, cancel.Failed{Message: m, Err: cancel.ErrNotSent})
			continue
		}
		if q.Fail != nil {
			if err := q.Fail(m); err != nil {
				failed = append(failed, cancel.Failed{Message: m, Err: err})
				continue
			}
		}
		q.Send(m.GroupID(), m.DedupID(), m.Encode())
	}
	return failed, nil
}

// Receive returns up to max visible messages, in order. A group with a
// message in flight yields nothing; otherwise its messages come in send
// order.
func (q *Queue) Receive(max int) []Received {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	blocked := map[string]bool{}
	for _, m := range q.msgs {
		if m.invisibleUntil.After(now) {
			blocked[m.group] = true
		}
	}
	var out []Received
	kept := q.msgs[:0]
	for _, m := range q.msgs {
		switch {
		case len(out) >= max || blocked[m.group]:
		case m.receives >= q.cfg.MaxReceiveCount:
			q.dlq = append(q.dlq, Received{MessageID: m.id, GroupID: m.group, Body: m.body, ReceiveCount: m.receives})
			continue
		default:
			m.receives++
			m.invisibleUntil = now.Add(q.cfg.VisibilityTimeout)
			m.receipt = fmt.Sprintf("%s#%d", m.id, m.receives)
			out = append(out, Received{MessageID: m.id, ReceiptHandle: m.receipt, GroupID: m.group,
				Body: m.body, ReceiveCount: m.receives})
		}
		kept = append(kept, m)
	}
	q.msgs = kept
	return out
}

// Ack deletes a received message; false when the receipt is stale (the
// message was delivered again since) or the ack was lost.
func (q *Queue) Ack(r Received) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.LoseAck != nil && q.LoseAck(r) {
		return false
	}
	for i, m := range q.msgs {
		if m.receipt == r.ReceiptHandle {
			q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
			return true
		}
	}
	return false
}

// Len counts the messages not yet acknowledged or dead-lettered.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs)
}

// DLQ returns the dead-lettered messages.
func (q *Queue) DLQ() []Received {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]Received(nil), q.dlq...)
}
