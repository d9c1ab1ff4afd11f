package futureevent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/unschedule/unschedule/internal/core/logfield"
)

// The dispatcher is the core's Target for future events: the core's
// expiry function invokes it once it claimed an event's item, with the
// core's payload (the item's name and moment, contract.Schema.EncodePayload).
// It reads the item, and invokes the target named there, but only a
// target registered with the construct, with the item's payload unchanged.

// Invoker runs a target function synchronously with payload. It returns
// ErrTargetFailed (wrapped) when the target ran and failed.
type Invoker interface {
	Invoke(ctx context.Context, target string, payload []byte) error
}

// Reader reads an event by name (a consistent read; ErrNotFound when
// there is none). The client (futureevents/client.Client) is one.
type Reader interface {
	Get(ctx context.Context, name string) (Event, string, error)
}

// Recorder counts metrics (internal/core/metrics.Recorder).
type Recorder interface {
	Add(name string, n float64)
}

// Errors of the dispatcher; test with errors.Is.
var (
	// ErrRefused: the item names a target that is not registered. The
	// firing fails; the core retries it (for about an hour), so
	// registering the function with the construct's AddTarget and
	// deploying in that time still delivers it.
	ErrRefused = errors.New("target is not registered with the future-events construct")
	// ErrBadInput: the payload or the item is not a future event.
	ErrBadInput = errors.New("not a future event")
	// ErrTargetFailed: the target ran and returned an error.
	ErrTargetFailed = errors.New("target function failed")
)

// TargetError is a failed invoke of a registered target (the target's
// own error, a throttle, a timeout). The core's expiry function reports
// it as the dispatcher's failure, and its timer retries the firing.
type TargetError struct {
	Target string
	Err    error
}

func (e *TargetError) Error() string { return "invoke " + e.Target + ": " + e.Err.Error() }
func (e *TargetError) Unwrap() error { return e.Err }

// Dispatcher invokes registered targets.
type Dispatcher struct {
	allowed map[string]bool
	events  Reader
	invoker Invoker
	log     *slog.Logger
	metrics Recorder
	// Metric names (internal/core/metrics) for the outcomes.
	Delivered, Refused, Failed string
}

// NewDispatcher returns a dispatcher that invokes only the targets listed
// (function ARNs; a version or alias ARN "<arn>:<qualifier>" of a listed
// function is allowed too, as the IAM grant allows it).
func NewDispatcher(targets []string, events Reader, inv Invoker, log *slog.Logger, m Recorder) (*Dispatcher, error) {
	if events == nil || inv == nil || log == nil || m == nil {
		return nil, errors.New("futureevent: reader, invoker, logger and recorder are required")
	}
	d := &Dispatcher{allowed: map[string]bool{}, events: events, invoker: inv, log: log, metrics: m}
	for _, t := range targets {
		if t = strings.TrimSpace(t); t != "" {
			d.allowed[t] = true
		}
	}
	return d, nil
}

// Registered reports whether target (an ARN, perhaps qualified) is one
// of the registered functions.
func (d *Dispatcher) Registered(target string) bool {
	if d.allowed[target] {
		return true
	}
	// arn:aws:lambda:<region>:<account>:function:<name>:<qualifier>
	if parts := strings.Split(target, ":"); len(parts) == 8 {
		return d.allowed[strings.Join(parts[:7], ":")]
	}
	return false
}

// Handle runs one firing: raw is the core's payload. Its error fails the
// firing, which the core's timer retries; the item then stays claimed
// and undelivered (no deliveredAt).
func (d *Dispatcher) Handle(ctx context.Context, raw json.RawMessage) error {
	p, err := Schema().DecodePayload(raw)
	if err != nil {
		d.metrics.Add(d.Refused, 1)
		d.log.Error("bad payload", "error", err)
		return ErrBadInput
	}
	name := p.Key.Partition
	// The item's key (its name: the table has no sort key), which
	// unschedule why --logs queries in logfield.Key.
	log := d.log.With(logfield.Key, p.Key.String(), "event", name)
	e, status, err := d.events.Get(ctx, name)
	switch {
	case errors.Is(err, ErrNotFound):
		// Only a delete by hand removes a claimed item (the client's
		// Cancel deletes Scheduled ones only): nothing left to run.
		log.Warn("the event's item is gone")
		return nil
	case errors.Is(err, ErrBadInput):
		d.metrics.Add(d.Refused, 1)
		log.Error("the item is not a future event", "error", err)
		return err
	case err != nil:
		log.Error("read the event", "error", err)
		return fmt.Errorf("read event %s: %w", name, err)
	case status != Fired || !e.At.Equal(p.Due):
		// The core claims before it invokes: a claimed item is Fired at
		// the payload's moment. Anything else was not written by the
		// client.
		d.metrics.Add(d.Refused, 1)
		log.Error("the item is not this claimed event", "status", status)
		return fmt.Errorf("%w: item %s is %s at %s", ErrBadInput, name, status, e.At)
	case !d.Registered(e.Target):
		d.metrics.Add(d.Refused, 1)
		log.Error("refused an unregistered target", "target", e.Target)
		return fmt.Errorf("%w: %s: add it with AddTarget", ErrRefused, e.Target)
	}
	if err := d.invoker.Invoke(ctx, e.Target, e.Payload); err != nil {
		d.metrics.Add(d.Failed, 1)
		log.Error("target failed", "target", e.Target, "error", err)
		return &TargetError{Target: e.Target, Err: err}
	}
	d.metrics.Add(d.Delivered, 1)
	log.Info("delivered", "target", e.Target)
	return nil
}
