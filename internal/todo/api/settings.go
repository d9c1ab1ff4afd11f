package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/unschedule/unschedule/internal/core/httpapi"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// RouteNotifications is the caller's notification setting.
const RouteNotifications = "/me/notifications"

// Notifications is what the handler needs of the notification rules
// (notify.Subscriber).
type Notifications interface {
	Settings(ctx context.Context, sub string) (notify.View, error)
	Update(ctx context.Context, sub, email string, c notify.Change) (notify.View, error)
}

var _ Notifications = (*notify.Subscriber)(nil)

// NewWithNotifications is New, also serving GET and PUT
// RouteNotifications from n.
func NewWithNotifications(tasks Tasks, cursors *pagecursor.Sealer, n Notifications, allowedOrigins []string, log *slog.Logger) *Handler {
	h := New(tasks, cursors, allowedOrigins, log)
	h.notifications = n
	return h
}

// settingsJSON is the body of GET and PUT /me/notifications.
type settingsJSON struct {
	Enabled bool   `json:"enabled"`
	Status  string `json:"status"`
	// Email is the address of the subscription, when there is one.
	Email string `json:"email,omitempty"`
	// TimeZone is the IANA time zone the emails show times in, when set.
	TimeZone string `json:"timeZone,omitempty"`
}

// serveNotifications answers GET (the setting and the live state of the
// subscription) and PUT {"enabled"?: bool, "timeZone"?: string}.
func (h *Handler) serveNotifications(ctx context.Context, r Request) Response {
	if h.notifications == nil {
		return httpapi.Error(http.StatusNotFound, "not_found", "no such route")
	}
	var (
		v   notify.View
		err error
	)
	switch r.Method {
	case http.MethodGet:
		v, err = h.notifications.Settings(ctx, r.UserID)
	case http.MethodPut:
		c, perr := parseChange(r.Body)
		if perr != nil {
			return h.mapErr(ctx, perr)
		}
		v, err = h.notifications.Update(ctx, r.UserID, r.Email, c)
	default:
		return httpapi.Error(http.StatusMethodNotAllowed, "method_not_allowed", "method "+r.Method+" is not allowed here")
	}
	if err != nil {
		return h.notificationErr(ctx, err)
	}
	return httpapi.JSON(http.StatusOK, settingsJSON{Enabled: v.Enabled, Status: string(v.Status), Email: v.Email, TimeZone: v.TimeZone})
}

// parseChange reads {"enabled"?: true|false, "timeZone"?: "<IANA name>"}:
// at least one of them, spelt exactly so; enabled a JSON boolean,
// timeZone a JSON string that notify.CheckTimeZone accepts ("" for none:
// UTC).
func parseChange(body []byte) (notify.Change, error) {
	const shape = `{"enabled": true|false, "timeZone": "Europe/Berlin"} (either or both)`
	var c notify.Change
	if len(body) > task.MaxBodyBytes {
		return c, &task.TooLargeError{Limit: task.MaxBodyBytes, Size: len(body)}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return c, &task.ValidationError{Msg: `body must be a JSON object such as {"enabled": true}`}
	}
	for name := range fields {
		if name != "enabled" && name != "timeZone" {
			return c, &task.ValidationError{Msg: "unknown field " + strconv.Quote(name) + ": the body is " + shape}
		}
	}
	if len(fields) == 0 {
		return c, &task.ValidationError{Msg: "enabled is required (or timeZone): the body is " + shape}
	}
	if raw, ok := fields["enabled"]; ok {
		if json.Unmarshal(raw, &c.Enabled) != nil || c.Enabled == nil {
			return c, &task.ValidationError{Msg: `enabled is required and must be true or false`}
		}
	}
	if raw, ok := fields["timeZone"]; ok {
		if json.Unmarshal(raw, &c.TimeZone) != nil || c.TimeZone == nil {
			return c, &task.ValidationError{Msg: timeZoneExpected}
		}
		if notify.CheckTimeZone(*c.TimeZone) != nil {
			given := []rune(*c.TimeZone)
			if len(given) > 40 {
				given = append(given[:40], '…')
			}
			return c, &task.ValidationError{Msg: timeZoneExpected + " (given " + strconv.Quote(string(given)) + ")"}
		}
	}
	return c, nil
}

// timeZoneExpected says what a timeZone must be.
const timeZoneExpected = `timeZone must be an IANA time zone name such as "Europe/Berlin" or "America/New_York" ` +
	`(what the browser's Intl.DateTimeFormat().resolvedOptions().timeZone gives), or "" for UTC`

// notificationErr maps the notification rules' errors. None echoes an
// internal error.
func (h *Handler) notificationErr(ctx context.Context, err error) Response {
	switch {
	case errors.Is(err, notify.ErrBadTimeZone):
		return httpapi.Error(http.StatusBadRequest, "validation_error", timeZoneExpected)
	case errors.Is(err, notify.ErrNoAddress):
		return httpapi.Error(http.StatusBadRequest, "no_email", "your account has no email address to send notifications to")
	case errors.Is(err, notify.ErrAddressTaken):
		return httpapi.Error(http.StatusConflict, "address_taken",
			"notifications cannot be turned on for your email address: it already receives another account's notifications")
	case errors.Is(err, notify.ErrSettingsConflict):
		return httpapi.Error(http.StatusConflict, "conflict", "the setting was changed at the same time elsewhere; reload and try again")
	case errors.Is(err, notify.ErrFilterPolicyLimit):
		h.log.ErrorContext(ctx, "notification topic is full", "error", err.Error())
		return httpapi.Error(http.StatusServiceUnavailable, "unavailable", "notifications are at capacity right now; try again later")
	}
	return h.mapErr(ctx, err)
}
