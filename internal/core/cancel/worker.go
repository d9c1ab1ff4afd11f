package cancel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// Metric names of the worker.
const (
	// MetricCancelled: a cancel deleted the schedule.
	MetricCancelled = metrics.Cancelled
	// MetricRescheduled: a reschedule moved the schedule.
	MetricRescheduled = metrics.Rescheduled
	// MetricRecreated: a reschedule found no schedule (the old one fired
	// and deleted itself) and created it at the new deadline.
	MetricRecreated = metrics.Recreated
	// MetricScheduleCreated: a schedule message created (or moved) the
	// schedule of an item its writer did not schedule.
	MetricScheduleCreated = metrics.ScheduleCreated
	// MetricAlreadyGone: a cancel found no schedule; success.
	MetricAlreadyGone = metrics.AlreadyGone
	// MetricMalformed: a message that can never be handled; it goes on
	// failing until the queue moves it to its dead-letter queue.
	MetricMalformed = metrics.Malformed
	// MetricRetryable: a message failed for a reason that may pass
	// (throttling, a 5xx, anything unknown); it is delivered again.
	MetricRetryable = metrics.RetryableFailures
	// MetricRefused: the timer refused the schedule for good
	// (see permanent); the message is acknowledged.
	MetricRefused = metrics.ScheduleRefused
)

// permanent is an error no retry can change: the timer refuses
// the request itself, such as a due time beyond the Step Functions
// timer's horizon (awssfn). Retrying it would only send the message round
// the queue until its dead-letter queue, holding up the later changes of
// its item (its FIFO group) all that time; so the worker acknowledges it,
// counts it (MetricRefused, alarmed) and logs it with the item's key.
type permanent interface{ Permanent() bool }

func isPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p) && p.Permanent()
}

// Worker applies cancellation messages to the scheduler. Every message may
// arrive twice, or after a later change was already applied; each case
// leaves the scheduler as the message asks without failing.
type Worker struct {
	schema    contract.Schema
	scheduler timer.Timer
	metrics   *metrics.Recorder
	log       *slog.Logger
	now       func() time.Time
}

// NewWorker returns a Worker for the items of schema s. m may be nil (no
// metrics); log nil means slog.Default().
func NewWorker(s contract.Schema, sch timer.Timer, m *metrics.Recorder, log *slog.Logger) (*Worker, error) {
	if sch == nil {
		return nil, errors.New("cancel: NewWorker needs a Scheduler")
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("cancel: NewWorker: %w", err)
	}
	if log == nil {
		log = slog.Default()
	}
	return &Worker{schema: s, scheduler: sch, metrics: m, log: log, now: clock.System{}.Now}, nil
}

// SetClock sets the clock by which the worker tells a reminder time that
// has passed (not scheduled) from one ahead. Default: time.Now.
func (w *Worker) SetClock(now func() time.Time) { w.now = now }

// Handle applies one message.
//
//   - cancel: delete the schedule; "not found" is success (it fired, was
//     cancelled before, or never existed), so it is never retried.
//   - schedule: create the schedule with the contract's ClientToken (a
//     retried create is a success); move one of that name that exists.
//   - reschedule: move the schedule to the new due time, or create it
//     when it is gone (the old one fired and deleted itself).
//
// With a schema that has reminders, each action also applies to the
// item's reminder schedule (contract.Schema.ReminderName), as the cancel
// worker's row of docs/pipeline.md says; a reminder time that has passed
// is left as it is (it may be firing right now).
//
// A returned error fails only this message, which is delivered again;
// errors.Is(err, ErrMalformed) never passes, and the queue's redrive
// policy moves it to the dead-letter queue. A refusal of the execution
// timer that no retry can change (permanent) is not returned: it is
// counted and logged, and the message succeeds.
func (w *Worker) Handle(ctx context.Context, m Message) error {
	if err := m.validate(); err != nil {
		w.metrics.Add(MetricMalformed, 1)
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	log := w.log.With(logfield.Key, m.Key().String(), "eventId", m.EventID, "action", m.Action)
	if err := w.handleMain(ctx, log, m); err != nil {
		return err
	}
	return w.handleReminder(ctx, log, m)
}

// handleMain applies the message to the item's due-time schedule.
func (w *Worker) handleMain(ctx context.Context, log *slog.Logger, m Message) error {
	switch m.Action {
	case ActionCancel:
		err := w.scheduler.Disarm(ctx, w.schema.ScheduleName(m.Key()), m.OldDueAt)
		switch {
		case err == nil:
			w.metrics.Add(MetricCancelled, 1)
			log.InfoContext(ctx, "schedule deleted")
			return nil
		case errors.Is(err, timer.ErrNotFound):
			w.metrics.Add(MetricAlreadyGone, 1)
			log.InfoContext(ctx, "schedule already gone")
			return nil
		}
		return w.failed(ctx, log, fmt.Errorf("delete schedule: %w", err))
	case ActionSchedule:
		s := m.Schedule(w.schema)
		err := w.scheduler.Arm(ctx, s)
		if errors.Is(err, timer.ErrExists) {
			err = w.scheduler.Move(ctx, s, m.OldDueAt)
		}
		if err != nil {
			return w.failed(ctx, log, fmt.Errorf("create schedule: %w", err))
		}
		w.metrics.Add(MetricScheduleCreated, 1)
		log.InfoContext(ctx, "schedule created", "at", contract.FormatTime(s.At))
		return nil
	default: // ActionReschedule; validate allows no other
		s := m.Schedule(w.schema)
		err := w.scheduler.Move(ctx, s, m.OldDueAt)
		if err == nil {
			w.metrics.Add(MetricRescheduled, 1)
			log.InfoContext(ctx, "schedule moved", "at", contract.FormatTime(s.At))
			return nil
		}
		if !errors.Is(err, timer.ErrNotFound) {
			return w.failed(ctx, log, fmt.Errorf("update schedule: %w", err))
		}
		if err := w.scheduler.Arm(ctx, s); err != nil && !errors.Is(err, timer.ErrExists) {
			return w.failed(ctx, log, fmt.Errorf("recreate schedule: %w", err))
		}
		w.metrics.Add(MetricRecreated, 1)
		log.InfoContext(ctx, "schedule recreated", "at", contract.FormatTime(s.At))
		return nil
	}
}

// handleReminder applies the message to the item's reminder schedule.
func (w *Worker) handleReminder(ctx context.Context, log *slog.Logger, m Message) error {
	if !w.schema.Reminds() {
		return nil
	}
	r, ok := m.Reminder(w.schema)
	if ok && !r.At.After(w.now()) {
		// Passed: not made or moved. One left as it is may be firing at
		// this very moment (a due schedule that has not fired yet), and
		// deleting it could lose that reminder; any other fires, its
		// claim fails, and it deletes itself.
		log.InfoContext(ctx, "reminder time passed: reminder schedule left as it is", "remindAt", contract.FormatTime(r.At))
		return nil
	}
	if m.Action == ActionCancel || !ok {
		if m.NoOldReminder {
			return nil // the item had no reminder: no schedule to delete
		}
		err := w.scheduler.Disarm(ctx, w.schema.ReminderName(m.Key()), m.OldRemindAt)
		switch {
		case err == nil:
			log.InfoContext(ctx, "reminder schedule deleted")
		case errors.Is(err, timer.ErrNotFound):
		default:
			return w.failed(ctx, log, fmt.Errorf("delete reminder schedule: %w", err))
		}
		return nil
	}
	err := w.scheduler.Move(ctx, r, m.OldRemindAt)
	if errors.Is(err, timer.ErrNotFound) {
		if err = w.scheduler.Arm(ctx, r); errors.Is(err, timer.ErrExists) {
			err = w.scheduler.Move(ctx, r, m.OldRemindAt) // made meanwhile (the API's create): move it
		}
	}
	if err != nil {
		return w.failed(ctx, log, fmt.Errorf("reminder schedule: %w", err))
	}
	log.InfoContext(ctx, "reminder schedule set", "at", contract.FormatTime(r.At))
	return nil
}

// failed classifies a scheduler error: a permanent refusal is counted,
// logged and acknowledged (nil); anything else is retryable and returned.
func (w *Worker) failed(ctx context.Context, log *slog.Logger, err error) error {
	if isPermanent(err) {
		w.metrics.Add(MetricRefused, 1)
		log.ErrorContext(ctx, "the timer refused the schedule for good; message acknowledged, not retried", "error", err)
		return nil
	}
	w.metrics.Add(MetricRetryable, 1)
	log.WarnContext(ctx, "message failed; it will be retried", "error", err)
	return err
}

// Delivery is one received queue message.
type Delivery struct {
	// ID names the delivery in the failures HandleBatch returns (the SQS
	// MessageId).
	ID string
	// GroupID is the FIFO message group ("" when unknown: then every
	// delivery after a failure is held back).
	GroupID string
	Body    []byte
}

// HandleBatch handles a batch received from the FIFO queue, in order, and
// returns the IDs of the deliveries to report as failed. After a failure
// in a message group, the later messages of that group are not handled
// and are reported as failed too, so they are retried after it and the
// group's order holds (what AWS asks of FIFO batch item failures).
// Deliveries of other groups go on.
func (w *Worker) HandleBatch(ctx context.Context, batch []Delivery) []string {
	var failed []string
	blocked := map[string]bool{}
	for _, d := range batch {
		if blocked[d.GroupID] || blocked[""] {
			failed = append(failed, d.ID)
			continue
		}
		m, err := Parse(d.Body)
		if err == nil {
			err = w.Handle(ctx, m)
		} else {
			w.metrics.Add(MetricMalformed, 1)
		}
		if err != nil {
			if errors.Is(err, ErrMalformed) {
				w.log.ErrorContext(ctx, "malformed message; it will reach the dead-letter queue",
					"messageId", d.ID, "error", err)
			}
			blocked[d.GroupID] = true
			failed = append(failed, d.ID)
		}
	}
	return failed
}
