package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/unschedule/unschedule/internal/domain/notify"
	"github.com/unschedule/unschedule/internal/domain/task"
)

// RouteNotifications is the caller's notification setting.
const RouteNotifications = "/me/notifications"

// Notifications is what the handler needs of the notification rules
// (notify.Subscriber).
type Notifications interface {
	Settings(ctx context.Context, sub string) (notify.View, error)
	SetEnabled(ctx context.Context, sub, email string, enabled bool) (notify.View, error)
}

var _ Notifications = (*notify.Subscriber)(nil)

// NewWithNotifications is New, also serving GET and PUT
// RouteNotifications from n.
func NewWithNotifications(tasks Tasks, n Notifications, allowedOrigins []string, log *slog.Logger) *Handler {
	h := New(tasks, allowedOrigins, log)
	h.notifications = n
	return h
}

// settingsJSON is the body of GET and PUT /me/notifications.
type settingsJSON struct {
	Enabled bool   `json:"enabled"`
	Status  string `json:"status"`
	// Email is the address of the subscription, when there is one.
	Email string `json:"email,omitempty"`
}

// serveNotifications answers GET (the setting and the live state of the
// subscription) and PUT {"enabled": bool}.
func (h *Handler) serveNotifications(ctx context.Context, r Request) Response {
	if h.notifications == nil {
		return h.fail(http.StatusNotFound, "not_found", "no such route")
	}
	var (
		v   notify.View
		err error
	)
	switch r.Method {
	case http.MethodGet:
		v, err = h.notifications.Settings(ctx, r.UserID)
	case http.MethodPut:
		enabled, perr := parseEnabled(r.Body)
		if perr != nil {
			return h.mapErr(ctx, perr)
		}
		v, err = h.notifications.SetEnabled(ctx, r.UserID, r.Email, enabled)
	default:
		return h.fail(http.StatusMethodNotAllowed, "method_not_allowed", "method "+r.Method+" is not allowed here")
	}
	if err != nil {
		return h.notificationErr(ctx, err)
	}
	return h.json(http.StatusOK, settingsJSON{Enabled: v.Enabled, Status: string(v.Status), Email: v.Email})
}

// parseEnabled reads {"enabled": true|false}: exactly that field, spelt
// exactly so, a JSON boolean.
func parseEnabled(body []byte) (bool, error) {
	if len(body) > task.MaxBodyBytes {
		return false, &task.TooLargeError{Limit: task.MaxBodyBytes, Size: len(body)}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return false, &task.ValidationError{Msg: `body must be a JSON object such as {"enabled": true}`}
	}
	for name := range fields {
		if name != "enabled" {
			return false, &task.ValidationError{Msg: "unknown field " + strconv.Quote(name) + `: the body is {"enabled": true|false}`}
		}
	}
	raw, ok := fields["enabled"]
	var enabled *bool
	if !ok || json.Unmarshal(raw, &enabled) != nil || enabled == nil {
		return false, &task.ValidationError{Msg: `enabled is required and must be true or false`}
	}
	return *enabled, nil
}

// notificationErr maps the notification rules' errors. None echoes an
// internal error.
func (h *Handler) notificationErr(ctx context.Context, err error) Response {
	switch {
	case errors.Is(err, notify.ErrNoAddress):
		return h.fail(http.StatusBadRequest, "no_email", "your account has no email address to send notifications to")
	case errors.Is(err, notify.ErrAddressTaken):
		return h.fail(http.StatusConflict, "address_taken",
			"notifications cannot be turned on for your email address: it already receives another account's notifications")
	case errors.Is(err, notify.ErrSettingsConflict):
		return h.fail(http.StatusConflict, "conflict", "the setting was changed at the same time elsewhere; reload and try again")
	case errors.Is(err, notify.ErrFilterPolicyLimit):
		h.log.ErrorContext(ctx, "notification topic is full", "error", err.Error())
		return h.fail(http.StatusServiceUnavailable, "unavailable", "notifications are at capacity right now; try again later")
	}
	return h.mapErr(ctx, err)
}
