package cancel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

// Enqueuer puts messages on the FIFO queue, with GroupID and DedupID as
// the message group and deduplication ids, in the order given.
type Enqueuer interface {
	// Enqueue returns the messages the queue did not accept, each with its
	// reason. A non-nil error means the outcome of the whole call is
	// unknown: every message is to be treated as not sent.
	Enqueue(ctx context.Context, msgs []Message) ([]Failed, error)
}

// Failed is a message the queue did not accept.
type Failed struct {
	Message Message
	Err     error
}

// Failure is a change-feed record whose message was not enqueued. The
// record must be delivered again (the Lambda reports it as a batch item
// failure, and the stream resumes from the lowest one).
type Failure struct {
	EventID string
	Err     error
}

// ErrNotSent is the reason given for a message that was not sent because
// an earlier one failed.
var ErrNotSent = errors.New("not sent: an earlier message failed")

// Metric names of the stream processor.
const (
	MetricEnqueued      = metrics.Enqueued
	MetricIgnored       = metrics.Ignored
	MetricEnqueueFailed = metrics.EnqueueFailed
	// MetricUndeliverable: a record whose message could never be handled
	// (it lacks its key), skipped rather than sent to fail forever; or an
	// armed item whose due time does not parse, which is never scheduled.
	MetricUndeliverable = metrics.Undeliverable
)

// Processor is the stream processor: it decides and enqueues, nothing
// more.
type Processor struct {
	schema  contract.Schema
	queue   Enqueuer
	metrics *metrics.Recorder
	log     *slog.Logger
}

// NewProcessor returns a Processor of the items of schema s. m may be nil
// (no metrics); log nil means slog.Default().
func NewProcessor(s contract.Schema, q Enqueuer, m *metrics.Recorder, log *slog.Logger) (*Processor, error) {
	if q == nil {
		return nil, errors.New("cancel: NewProcessor needs an Enqueuer")
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("cancel: NewProcessor: %w", err)
	}
	if log == nil {
		log = slog.Default()
	}
	return &Processor{schema: s, queue: q, metrics: m, log: log}, nil
}

// Process decides every change and enqueues the messages in one call, in
// feed order. It returns the records whose message was not enqueued. A
// record with nothing to do never fails.
func (p *Processor) Process(ctx context.Context, changes []changefeed.Change) []Failure {
	msgs := make([]Message, 0, len(changes))
	ignored := 0
	for _, c := range changes {
		if it := c.New; it != nil && slices.Contains(p.schema.ArmedStates, it.State) && it.Due.IsZero() && it.DueText != "" {
			// An armed state with a due time that is no RFC 3339 date-time
			// (a leap second, another format): it cannot be scheduled, so
			// say so rather than drop it without a word.
			p.metrics.Add(MetricUndeliverable, 1)
			p.log.ErrorContext(ctx, "armed item's due time is not an RFC 3339 date-time; not scheduled",
				logfield.Key, c.Key.String(), "eventId", c.EventID, "due", it.DueText)
		}
		m, ok := Decide(p.schema, c)
		if !ok {
			ignored++
			continue
		}
		if err := m.validate(); err != nil {
			// Retrying cannot mend a record without its key, and a message
			// that the worker can never parse would only reach its DLQ.
			p.metrics.Add(MetricUndeliverable, 1)
			p.log.ErrorContext(ctx, "record cannot give a valid message; skipped", "eventId", c.EventID, "error", err)
			continue
		}
		msgs = append(msgs, m)
	}
	p.metrics.Add(MetricIgnored, float64(ignored))
	if len(msgs) == 0 {
		return nil
	}
	for _, m := range msgs {
		p.log.InfoContext(ctx, "enqueueing", logfield.Key, m.Key().String(), "eventId", m.EventID, "action", m.Action)
	}
	failed, err := p.queue.Enqueue(ctx, msgs)
	if err != nil {
		failed = make([]Failed, len(msgs))
		for i, m := range msgs {
			failed[i] = Failed{Message: m, Err: fmt.Errorf("enqueue: %w", err)}
		}
	}
	out := make([]Failure, 0, len(failed))
	for _, f := range failed {
		p.log.WarnContext(ctx, "enqueue failed; the record will be retried",
			logfield.Key, f.Message.Key().String(), "eventId", f.Message.EventID, "action", f.Message.Action, "error", f.Err)
		out = append(out, Failure{EventID: f.Message.EventID, Err: f.Err})
	}
	p.metrics.Add(MetricEnqueued, float64(len(msgs)-len(out)))
	p.metrics.Add(MetricEnqueueFailed, float64(len(out)))
	return out
}
