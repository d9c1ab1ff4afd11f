package firefn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/contract"
	// The kinds whose events Invoke decodes: a kind without a decoder
	// (Scheduler, Step Functions) hands over the payload itself, and is
	// not linked, so the function links no SDK client it never calls.
	_ "github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerkind"
)

// settings are what the function reads from its environment.
type settings struct {
	// Table is TABLE_NAME, the item table.
	Table string
	// Schema is the table's item schema (contract.EnvVar).
	Schema contract.Schema
	// Target is TARGET_FUNCTION_ARN: the function that runs at each
	// item's due time; empty when the target runs in process.
	Target string
	// Lease is FIRE_LEASE_SECONDS: how long an attempt holds the right to
	// run the target (default fire.DefaultLease).
	Lease time.Duration
}

// loadConfig reads the environment through getenv. Without an in-process
// target the target function is required (the function has nothing else
// to run); with one, a target function is a configuration error, as the
// two would both claim to be the item's one target.
func loadConfig(getenv func(string) string, inProcess bool) (settings, error) {
	e := lambdaenv.New(getenv)
	c := settings{Table: e.Require(envvars.Table), Schema: e.Schema(), Target: e.Optional(envvars.TargetFunctionArn, ""),
		Lease: time.Duration(e.Int(envvars.FireLeaseSeconds, int(fire.DefaultLease/time.Second), 1, 3600)) * time.Second}
	if err := e.Err(); err != nil {
		return c, err
	}
	switch {
	case inProcess && c.Target != "":
		return c, fmt.Errorf("configuration: %s is set, but this firing function runs its target in process: "+
			"unset it (ScheduleOnWriteProps takes Target or FireEntry, not both)", envvars.TargetFunctionArn)
	case !inProcess && c.Target == "":
		return c, fmt.Errorf("configuration: %s is not set: set it to the ARN of the function to run at each item's due time, "+
			"or run the target in process (firefn.Start with a Target)", envvars.TargetFunctionArn)
	}
	return c, nil
}

// errBadInput marks a payload that is not a schedule's.
var errBadInput = errors.New("not a schedule payload")

// itemFirer fires the item a schedule's payload names.
type itemFirer interface {
	Fire(ctx context.Context, payload []byte) (contract.Payload, fire.Outcome, error)
}

// targetFirer is the firing core on the item table, and the target
// function as the deliverer, so the target runs only after a successful
// claim.
type targetFirer struct {
	core      *fire.Core
	reminders fire.ReminderStore
	target    fire.Deliverer
}

func (e targetFirer) Fire(ctx context.Context, payload []byte) (contract.Payload, fire.Outcome, error) {
	p, err := e.core.Schema().DecodePayload(payload)
	if err != nil {
		return contract.Payload{}, "", fmt.Errorf("%w: %w", errBadInput, err)
	}
	if p.IsReminder() {
		// A reminder schedule's: the target runs with the reminder's
		// payload (it names the reminder attribute), after its claim.
		out, err := e.core.Remind(ctx, p, e.reminders, e.target)
		return p, out, err
	}
	out, err := e.core.Fire(ctx, p, e.target)
	return p, out, err
}

// handler turns a schedule's input into a firing.
type handler struct {
	firer   itemFirer
	now     func() time.Time
	log     *slog.Logger
	metrics *metrics.Recorder
}

// Handle fires the item the schedule names. EventBridge Scheduler
// invokes this function asynchronously: once Lambda has accepted the
// event, the schedule's retry policy and dead-letter queue are done with
// it. An error here makes Lambda retry (FireRetryAttempts, by default
// twice, one then two minutes later), then send the event to the firing
// failure queue (the function's on-failure destination, alarmed), where a
// person can redrive it; the reconciler fires the item meanwhile, once it
// is overdue by its grace period.
// https://docs.aws.amazon.com/lambda/latest/dg/with-eventbridge-scheduler.html
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
// An error is returned only when a retry can help (a failed read, write,
// or target) or when the input is not ours (so it is kept in the
// failure queue for a person).
func (h *handler) Handle(ctx context.Context, payload json.RawMessage) error {
	defer func() { _ = h.metrics.Flush() }()
	p, outcome, err := h.firer.Fire(ctx, payload)
	switch {
	case errors.Is(err, errBadInput):
		h.metrics.Add(metrics.FireBadInput, 1)
		return fmt.Errorf("expiry: %w", err)
	case errors.Is(err, fire.ErrInProgress):
		// Another attempt holds the delivery claim: retry later.
		h.metrics.Add(metrics.FireInProgress, 1)
		return err
	case errors.Is(err, fire.ErrTooEarly):
		// EventBridge Scheduler fires within the minute of its schedule
		// (schedules are placed at or after the due time, so this is a
		// defence): failing brings the event back with Lambda's retry, a
		// minute later, after the due time. Success would lose the item,
		// as its one-off schedule deletes itself.
		// https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
		h.metrics.Add(metrics.EarlyFirings, 1)
		h.log.WarnContext(ctx, "fired before its time; Lambda retries it", logfield.Key, p.Key.String(), "error", err.Error())
		return err
	case err != nil:
		h.metrics.Add(metrics.FireErrors, 1)
		h.log.ErrorContext(ctx, "expiry failed; Lambda retries it, then sends it to the failure queue", logfield.Key, p.Key.String(), "error", err.Error())
		return err
	}
	if p.IsReminder() {
		h.log.InfoContext(ctx, "reminder", logfield.Key, p.Key.String(), "dueAt", contract.FormatTime(p.Due),
			"remindAt", contract.FormatTime(p.Remind), "outcome", string(outcome))
		if outcome == fire.Fired {
			h.metrics.Add(metrics.RemindersSent, 1)
		} else {
			h.metrics.Add(metrics.RemindersSkipped, 1)
		}
		return nil
	}
	h.log.InfoContext(ctx, "expiry", logfield.Key, p.Key.String(), "dueAt", contract.FormatTime(p.Due), "outcome", string(outcome))
	switch outcome {
	case fire.Fired, fire.Redelivered:
		h.metrics.Add(metrics.ItemsFired, 1)
		h.metrics.Set(metrics.DeliveryLagSeconds, h.now().Sub(p.Due).Seconds(), "Seconds")
	default:
		h.metrics.Add(metrics.FireSkipped, 1)
	}
	return nil
}

// Invoke is the function's entry point for every timer. The
// EventBridge Scheduler and Step Functions timers hand it the payload
// itself (Handle). The TTL timer's event source mapping hands it a batch
// of stream records, filtered to TTL deletions of markers: each marker's
// payload goes through the same Handle, so the firing core and the target
// see the same payload whatever the timer. A failed firing is reported as
// a batch item failure (the mapping has ReportBatchItemFailures): the
// stream retries from that record.
func (h *handler) Invoke(ctx context.Context, raw json.RawMessage) (any, error) {
	return timerkind.Invoke(ctx, raw, h.Handle, func(delivered bool) {
		if delivered {
			h.metrics.Add(metrics.TTLDispatched, 1)
		} else {
			h.metrics.Add(metrics.TTLDispatchFailed, 1)
		}
		_ = h.metrics.Flush()
	})
}
