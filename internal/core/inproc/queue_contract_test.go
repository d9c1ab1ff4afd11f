package inproc_test

import (
	"context"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/cancel/queuetest"
	"github.com/unschedule/unschedule/internal/core/inproc"
)

// memQueue is the memory FIFO queue under the queue contract, on a
// virtual clock.
type memQueue struct {
	*inproc.Queue
	clock *inproc.Clock
	cfg   inproc.QueueConfig
}

func (q memQueue) Enqueue(ctx context.Context, msgs []cancel.Message) ([]cancel.Failed, error) {
	return q.Queue.Enqueue(ctx, msgs)
}

func (q memQueue) Receive(_ *testing.T, max int) []queuetest.QueueDelivery {
	var out []queuetest.QueueDelivery
	for _, r := range q.Queue.Receive(max) {
		out = append(out, queuetest.QueueDelivery{Body: r.Body, GroupID: r.GroupID, ReceiveCount: r.ReceiveCount, Handle: r.ReceiptHandle})
	}
	return out
}

func (q memQueue) Ack(t *testing.T, d queuetest.QueueDelivery) {
	t.Helper()
	if !q.Queue.Ack(inproc.Received{ReceiptHandle: d.Handle}) {
		t.Fatalf("ack %s: the receipt is stale", d.Handle)
	}
}

func (q memQueue) LapseVisibility(*testing.T) { q.clock.Advance(q.cfg.VisibilityTimeout) }

func (q memQueue) DeadLetters(*testing.T) [][]byte {
	var out [][]byte
	for _, r := range q.DLQ() {
		out = append(out, r.Body)
	}
	return out
}

func TestQueueContract(t *testing.T) {
	queuetest.QueueContract(t, queuetest.QueueBackend{
		Advance: func(q queuetest.ContractQueue, d time.Duration) { q.(memQueue).clock.Advance(d) },
		New: func(*testing.T) queuetest.ContractQueue {
			clock := inproc.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
			cfg := inproc.QueueConfig{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: queuetest.ContractMaxReceiveCount}
			return memQueue{Queue: inproc.NewQueue(clock, cfg), clock: clock, cfg: cfg}
		}})
}
