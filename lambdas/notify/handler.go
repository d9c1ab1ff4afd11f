package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// notifier is task.NotifyTarget as the handler uses it.
type notifier interface {
	Notify(ctx context.Context, p contract.Payload) (task.NotifyOutcome, error)
}

// handler turns the expiry function's invocation into a notification.
type handler struct {
	schema contract.Schema
	target notifier
	log    *slog.Logger
}

// Handle notifies for one payload. An error makes the invocation fail
// (a FunctionError for the expiry function's RequestResponse invoke), so
// the expiry function records no delivery and its firing is retried:
// https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
func (h *handler) Handle(ctx context.Context, raw json.RawMessage) error {
	p, err := h.schema.DecodePayload(raw)
	if err == nil && !task.ValidID(p.Key.Sort) {
		err = fmt.Errorf("payload lacks a task id: %s", raw)
	}
	if err != nil {
		h.log.ErrorContext(ctx, "not a schedule payload", "error", err.Error())
		return fmt.Errorf("notify: %w", err)
	}
	out, err := h.target.Notify(ctx, p)
	if err != nil {
		h.log.ErrorContext(ctx, "notification failed; the expiry function retries it", logfield.Key, p.Key.String(),
			"reminder", p.IsReminder(), "error", err.Error())
		return fmt.Errorf("notify %s: %w", p.Key, err)
	}
	h.log.InfoContext(ctx, "notification", logfield.Key, p.Key.String(), "dueAt", contract.FormatTime(p.Due),
		"reminder", p.IsReminder(), "outcome", string(out))
	return nil
}
