// Package futureevent is the rule of the future-events handler: the
// state machine hands it an execution's input (futureevents.Input) after
// the Wait; it invokes the target named there, but only a target
// registered with the construct, with the payload unchanged.
package futureevent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// Invoker runs a target function synchronously with payload. It returns
// ErrTargetFailed (wrapped) when the target ran and failed.
type Invoker interface {
	Invoke(ctx context.Context, target string, payload []byte) error
}

// Recorder counts metrics (internal/metrics.Recorder).
type Recorder interface {
	Add(name string, n float64)
}

// Errors; test with errors.Is.
var (
	// ErrRefused: the input names a target that is not registered. The
	// execution fails (no retry can help): register the function with
	// the construct's AddTarget.
	ErrRefused = errors.New("target is not registered with the future-events construct")
	// ErrBadInput: the input is not an execution input.
	ErrBadInput = errors.New("execution input is not a future event")
	// ErrTargetFailed: the target ran and returned an error.
	ErrTargetFailed = errors.New("target function failed")
)

// Handler invokes registered targets.
type Handler struct {
	allowed map[string]bool
	invoker Invoker
	log     *slog.Logger
	metrics Recorder
	// Metric names (internal/metrics) for the outcomes.
	Delivered, Refused, Failed string
}

// New returns a handler that invokes only the targets listed (function
// ARNs; a version or alias ARN "<arn>:<qualifier>" of a listed function
// is allowed too, as the IAM grant allows it).
func New(targets []string, inv Invoker, log *slog.Logger, m Recorder) (*Handler, error) {
	if inv == nil || log == nil || m == nil {
		return nil, errors.New("futureevent: invoker, logger and recorder are required")
	}
	h := &Handler{allowed: map[string]bool{}, invoker: inv, log: log, metrics: m}
	for _, t := range targets {
		if t = strings.TrimSpace(t); t != "" {
			h.allowed[t] = true
		}
	}
	return h, nil
}

// TargetError is a failed invoke of a registered target (the target's
// own error, a throttle, a timeout). Lambda reports it to Step Functions
// with the error type "TargetError" (aws-lambda-go names an error by its
// type), which the state machine retries (RetryErrors); a refused target
// or a bad input is another type, and fails the execution at once.
type TargetError struct {
	Target string
	Err    error
}

// RetryErrors are the error names the state machine's task retries.
var RetryErrors = []string{"TargetError"}

func (e *TargetError) Error() string { return "invoke " + e.Target + ": " + e.Err.Error() }
func (e *TargetError) Unwrap() error { return e.Err }

// Input is the part of futureevents.Input the handler reads.
type Input struct {
	Target  string          `json:"target"`
	Payload json.RawMessage `json:"payload"`
}

// Registered reports whether target (an ARN, perhaps qualified) is one
// of the registered functions.
func (h *Handler) Registered(target string) bool {
	if h.allowed[target] {
		return true
	}
	// arn:aws:lambda:<region>:<account>:function:<name>:<qualifier>
	if parts := strings.Split(target, ":"); len(parts) == 8 {
		return h.allowed[strings.Join(parts[:7], ":")]
	}
	return false
}

// Handle runs one event. Its error fails the state machine's task.
func (h *Handler) Handle(ctx context.Context, raw json.RawMessage) error {
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil || in.Target == "" {
		h.metrics.Add(h.Refused, 1)
		h.log.Error("bad execution input", "error", err)
		return ErrBadInput
	}
	if !h.Registered(in.Target) {
		h.metrics.Add(h.Refused, 1)
		h.log.Error("refused an unregistered target", "target", in.Target)
		return fmt.Errorf("%w: %s: add it with AddTarget", ErrRefused, in.Target)
	}
	payload := []byte(in.Payload)
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	if err := h.invoker.Invoke(ctx, in.Target, payload); err != nil {
		h.metrics.Add(h.Failed, 1)
		h.log.Error("target failed", "target", in.Target, "error", err)
		return &TargetError{Target: in.Target, Err: err}
	}
	h.metrics.Add(h.Delivered, 1)
	h.log.Info("delivered", "target", in.Target)
	return nil
}
