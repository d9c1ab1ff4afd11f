package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/metrics"
)

// handler turns a schedule's input into an Expire call.
type handler struct {
	svc     *task.Service
	log     *slog.Logger
	metrics *metrics.Recorder
}

// Handle expires the task the schedule names. EventBridge Scheduler
// invokes this function asynchronously: once Lambda has accepted the
// event, the schedule's retry policy and dead-letter queue are done with
// it. An error here makes Lambda retry (ExpiryRetryAttempts, by default
// twice, one then two minutes later), then send the event to the expiry
// failure queue (the function's on-failure destination, alarmed), where a
// person can redrive it; the reconciler expires the task meanwhile.
// https://docs.aws.amazon.com/lambda/latest/dg/with-eventbridge-scheduler.html
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
// An error is returned only when a retry can help (a failed read, write or
// publish) or when the input is not ours (so it is kept in the failure
// queue for a person).
func (h *handler) Handle(ctx context.Context, payload json.RawMessage) error {
	defer func() { _ = h.metrics.Flush() }()
	req, err := task.DecodePayload(payload)
	if err != nil {
		h.metrics.Add(metrics.ExpiryBadInput, 1)
		return fmt.Errorf("expiry: %w", err)
	}
	outcome, err := h.svc.Expire(ctx, req)
	if errors.Is(err, task.ErrNotifyInProgress) {
		// Another attempt holds the notification claim: retry later.
		h.metrics.Add(metrics.ExpiryNotifyInProgress, 1)
		return err
	}
	if err != nil {
		h.metrics.Add(metrics.ExpiryErrors, 1)
		h.log.ErrorContext(ctx, "expiry failed; Lambda retries it, then sends it to the failure queue", "taskId", req.TaskID, "error", err.Error())
		return err
	}
	h.log.InfoContext(ctx, "expiry", "taskId", req.TaskID, "dueAt", task.FormatTime(req.DueAt), "outcome", string(outcome))
	switch outcome {
	case task.Expired, task.Renotified:
		h.metrics.Add(metrics.TasksExpired, 1)
		h.metrics.Set(metrics.NotificationLagSeconds, h.svc.Now().Sub(req.DueAt).Seconds(), "Seconds")
	default:
		h.metrics.Add(metrics.ExpirySkipped, 1)
	}
	return nil
}
