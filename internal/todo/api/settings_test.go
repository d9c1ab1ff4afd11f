package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/memory/snsfake"
)

const notifyTopic = "arn:aws:sns:eu-west-1:111122223333:unschedule-notify-0"

// settingsEnv is the handler with the real notification rules over the
// SNS model and the in-memory settings store.
type settingsEnv struct {
	h   *Handler
	sns *snsfake.SNS
	sub *notify.Subscriber
}

func newSettingsEnv(t *testing.T) *settingsEnv {
	t.Helper()
	e := &settingsEnv{sns: snsfake.New(notifyTopic)}
	subs, err := awssns.NewSubscriptions(e.sns)
	if err != nil {
		t.Fatal(err)
	}
	e.sub, err = notify.NewSubscriber(notify.SubscriberDeps{Subscriptions: subs, Settings: memory.NewSettings(),
		TopicArns: []string{notifyTopic}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := task.NewService(task.Deps{Store: memory.NewStore(), Timer: inmem.NewScheduler()})
	if err != nil {
		t.Fatal(err)
	}
	e.h = NewWithNotifications(svc, pagecursor.NewRandom(), e.sub, []string{"https://app.example.com"}, slog.New(slog.DiscardHandler))
	return e
}

func (e *settingsEnv) do(t *testing.T, user, email, method, body string) (int, map[string]any) {
	t.Helper()
	resp := e.h.Serve(context.Background(), Request{Method: method, Route: RouteNotifications, UserID: user, Email: email, Body: []byte(body)})
	var m map[string]any
	if err := json.Unmarshal(resp.Body, &m); err != nil {
		t.Fatalf("status %d, body not JSON: %q", resp.Status, resp.Body)
	}
	if resp.Headers["Content-Type"] != "application/json" || resp.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" {
		t.Fatalf("headers %v", resp.Headers)
	}
	return resp.Status, m
}

func (e *settingsEnv) want(t *testing.T, user, email, method, body string, status int, fields map[string]any) {
	t.Helper()
	st, m := e.do(t, user, email, method, body)
	if st != status {
		t.Fatalf("%s %s: %d %v, want %d", method, body, st, m, status)
	}
	for k, v := range fields {
		if m[k] != v {
			t.Fatalf("%s %s: %s = %v, want %v (body %v)", method, body, k, m[k], v, m)
		}
	}
}

const (
	ada     = "sub-ada"
	mallo   = "sub-mallory"
	adaMail = "ada@example.com"
)

// The status a user sees through the API as their subscription moves.
func TestNotificationSettingsLifecycle(t *testing.T) {
	e := newSettingsEnv(t)
	e.want(t, ada, adaMail, "GET", "", 200, map[string]any{"enabled": true, "status": "not-subscribed"})
	e.sub.OnSignIn(context.Background(), ada, adaMail)
	e.want(t, ada, adaMail, "GET", "", 200, map[string]any{"enabled": true, "status": "pending-confirmation", "email": adaMail})
	if err := e.sns.Confirm(notifyTopic, adaMail); err != nil {
		t.Fatal(err)
	}
	e.want(t, ada, adaMail, "GET", "", 200, map[string]any{"enabled": true, "status": "confirmed", "email": adaMail})

	e.want(t, ada, adaMail, "PUT", `{"enabled":false}`, 200, map[string]any{"enabled": false, "status": "off"})
	if subs := e.sns.Subscriptions(adaMail); len(subs) != 0 {
		t.Fatalf("turning off left %+v", subs)
	}
	e.sub.OnSignIn(context.Background(), ada, adaMail)
	e.want(t, ada, adaMail, "GET", "", 200, map[string]any{"enabled": false, "status": "off"})
	if subs := e.sns.Subscriptions(adaMail); len(subs) != 0 {
		t.Fatalf("a sign-in after turning off subscribed again: %+v", subs)
	}

	e.want(t, ada, adaMail, "PUT", `{"enabled":true}`, 200, map[string]any{"enabled": true, "status": "pending-confirmation"})
	if n := e.sns.ConfirmationEmails(adaMail); n != 2 {
		t.Fatalf("%d confirmation emails, want 2", n)
	}
	e.want(t, ada, adaMail, "PUT", `{"enabled":true}`, 200, map[string]any{"status": "pending-confirmation"})
	if n := e.sns.ConfirmationEmails(adaMail); n != 2 {
		t.Fatalf("turning on twice sent %d confirmation emails, want 2", n)
	}

	// Unsubscribing through the email's link shows as off, and stays off.
	if err := e.sns.Confirm(notifyTopic, adaMail); err != nil {
		t.Fatal(err)
	}
	if err := e.sns.OptOut(notifyTopic, adaMail); err != nil {
		t.Fatal(err)
	}
	e.want(t, ada, adaMail, "GET", "", 200, map[string]any{"enabled": false, "status": "off"})
	e.sub.OnSignIn(context.Background(), ada, adaMail)
	if subs := e.sns.Subscriptions(adaMail); len(subs) != 0 {
		t.Fatalf("a sign-in after unsubscribing subscribed again: %+v", subs)
	}
}

// PUT {"timeZone"} saves the zone (alone, or with enabled) and GET shows
// it; the zone alone needs no email claim and touches no subscription.
func TestNotificationSettingsTimeZone(t *testing.T) {
	e := newSettingsEnv(t)
	e.sub.OnSignIn(context.Background(), ada, adaMail)
	if err := e.sns.Confirm(notifyTopic, adaMail); err != nil {
		t.Fatal(err)
	}
	e.want(t, ada, adaMail, "GET", "", 200, map[string]any{"status": "confirmed", "timeZone": nil})
	e.want(t, ada, "", "PUT", `{"timeZone":"Europe/Berlin"}`, 200, map[string]any{"enabled": true, "status": "confirmed", "timeZone": "Europe/Berlin"})
	e.want(t, ada, adaMail, "GET", "", 200, map[string]any{"timeZone": "Europe/Berlin"})
	e.want(t, ada, adaMail, "PUT", `{"enabled":false,"timeZone":"America/New_York"}`, 200, map[string]any{"status": "off", "timeZone": "America/New_York"})
	e.want(t, ada, adaMail, "PUT", `{"enabled":true}`, 200, map[string]any{"status": "pending-confirmation", "timeZone": "America/New_York"})
	e.want(t, ada, adaMail, "PUT", `{"timeZone":""}`, 200, map[string]any{"status": "pending-confirmation", "timeZone": nil})
	if n := e.sns.Calls("Subscribe"); n != 2 {
		t.Fatalf("%d Subscribe calls, want 2 (sign-in, turning on)", n)
	}
}

func TestNotificationSettingsForAnotherUsersAddress(t *testing.T) {
	e := newSettingsEnv(t)
	e.sub.OnSignIn(context.Background(), ada, adaMail)
	if err := e.sns.Confirm(notifyTopic, adaMail); err != nil {
		t.Fatal(err)
	}
	e.want(t, mallo, adaMail, "PUT", `{"enabled":true}`, 409, map[string]any{"error": "address_taken"})
	e.want(t, mallo, adaMail, "PUT", `{"enabled":false}`, 200, map[string]any{"status": "off"})
	subs := e.sns.Subscriptions(adaMail)
	if len(subs) != 1 || !subs[0].Confirmed || subs[0].Attributes["FilterPolicy"] != notify.FilterPolicy(ada) {
		t.Fatalf("Ada's subscription changed: %+v", subs)
	}
	e.want(t, ada, adaMail, "GET", "", 200, map[string]any{"status": "confirmed"})
}

func TestNotificationSettingsBadInput(t *testing.T) {
	e := newSettingsEnv(t)
	for _, tc := range []struct {
		name, method, email, body string
		status                    int
		code, msg                 string
	}{
		{"malformed json", "PUT", adaMail, `{"enabled":`, 400, "validation_error", "JSON object"},
		{"empty body", "PUT", adaMail, ``, 400, "validation_error", "JSON object"},
		{"not an object", "PUT", adaMail, `[true]`, 400, "validation_error", "JSON object"},
		{"null", "PUT", adaMail, `null`, 400, "validation_error", "JSON object"},
		{"missing enabled", "PUT", adaMail, `{}`, 400, "validation_error", "enabled is required"},
		{"unknown time zone", "PUT", adaMail, `{"timeZone":"Mars/Base"}`, 400, "validation_error", `IANA time zone name such as "Europe/Berlin"`},
		{"unknown time zone names it", "PUT", adaMail, `{"enabled":true,"timeZone":"Mars/Base"}`, 400, "validation_error", `(given "Mars/Base")`},
		{"server's zone", "PUT", adaMail, `{"timeZone":"Local"}`, 400, "validation_error", "IANA time zone"},
		{"a path is no zone", "PUT", adaMail, `{"timeZone":"../../etc/passwd"}`, 400, "validation_error", "IANA time zone"},
		{"long zone is cut in the message", "PUT", adaMail, `{"timeZone":"` + strings.Repeat("Z", 500) + `"}`, 400, "validation_error", strings.Repeat("Z", 40) + `…"`},
		{"time zone not a string", "PUT", adaMail, `{"timeZone":1}`, 400, "validation_error", "IANA time zone"},
		{"time zone null", "PUT", adaMail, `{"timeZone":null}`, 400, "validation_error", "IANA time zone"},
		{"mis-cased time zone field", "PUT", adaMail, `{"timezone":"UTC"}`, 400, "validation_error", `unknown field "timezone"`},
		{"enabled not a boolean", "PUT", adaMail, `{"enabled":"yes"}`, 400, "validation_error", "true or false"},
		{"enabled null", "PUT", adaMail, `{"enabled":null}`, 400, "validation_error", "true or false"},
		{"unknown field", "PUT", adaMail, `{"enabled":true,"email":"x@y.z"}`, 400, "validation_error", `unknown field "email"`},
		{"mis-cased field", "PUT", adaMail, `{"Enabled":true}`, 400, "validation_error", `unknown field "Enabled"`},
		{"trailing data", "PUT", adaMail, `{"enabled":true} x`, 400, "validation_error", "JSON object"},
		{"too large", "PUT", adaMail, `{"enabled":true,"x":"` + strings.Repeat("x", task.MaxBodyBytes) + `"}`, 413, "too_large", "at most"},
		{"no email claim", "PUT", "", `{"enabled":true}`, 400, "no_email", "no email address"},
		{"POST", "POST", adaMail, `{"enabled":true}`, 405, "method_not_allowed", "POST"},
		{"DELETE", "DELETE", adaMail, ``, 405, "method_not_allowed", "DELETE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m := e.do(t, ada, tc.email, tc.method, tc.body)
			if st != tc.status || m["error"] != tc.code || !strings.Contains(m["message"].(string), tc.msg) {
				t.Fatalf("%d %v, want %d %s %q", st, m, tc.status, tc.code, tc.msg)
			}
		})
	}
	if n := e.sns.Calls("Subscribe"); n != 0 {
		t.Fatalf("bad input reached SNS: %d Subscribe calls", n)
	}
}

func TestNotificationSettingsErrors(t *testing.T) {
	t.Run("SNS failure is a 500 that echoes nothing", func(t *testing.T) {
		e := newSettingsEnv(t)
		e.sns.Fail = func(string) error { return errors.New("secret internal detail") }
		st, m := e.do(t, ada, adaMail, "PUT", `{"enabled":true}`)
		if st != 500 || strings.Contains(m["message"].(string), "secret") {
			t.Fatalf("%d %v", st, m)
		}
	})
	t.Run("a full topic is a 503", func(t *testing.T) {
		e := newSettingsEnv(t)
		e.sns.FilterPolicyLimit = 0
		e.want(t, ada, adaMail, "PUT", `{"enabled":true}`, 503, map[string]any{"error": "unavailable"})
	})
	t.Run("no identity is a 401", func(t *testing.T) {
		e := newSettingsEnv(t)
		e.want(t, "", adaMail, "GET", "", 401, map[string]any{"error": "unauthorized"})
	})
	t.Run("a handler without notifications does not serve the route", func(t *testing.T) {
		svc, _ := task.NewService(task.Deps{Store: memory.NewStore(), Timer: inmem.NewScheduler()})
		h := New(svc, pagecursor.NewRandom(), nil, nil)
		if resp := h.Serve(context.Background(), Request{Method: "GET", Route: RouteNotifications, UserID: ada}); resp.Status != http.StatusNotFound {
			t.Fatalf("status %d", resp.Status)
		}
	})
}

// FuzzNotifications sends arbitrary setting requests as Mallory, whose
// token carries Ada's address: never a panic, never a 5xx, and Ada's
// confirmed subscription stays exactly as it is.
func FuzzNotifications(f *testing.F) {
	for _, b := range []string{`{"enabled":true}`, `{"enabled":false}`, `{"Enabled":true}`, `{"enabled":1}`, ``, `null`, `{"enabled":true,"enabled":false}`,
		`{"timeZone":"Europe/Berlin"}`, `{"enabled":true,"timeZone":"Mars/Base"}`, `{"timeZone":""}`} {
		f.Add(true, []byte(b))
		f.Add(false, []byte(b))
	}
	f.Fuzz(func(t *testing.T, put bool, body []byte) {
		e := newSettingsEnv(t)
		e.sub.OnSignIn(context.Background(), ada, adaMail)
		if err := e.sns.Confirm(notifyTopic, adaMail); err != nil {
			t.Fatal(err)
		}
		method := "GET"
		if put {
			method = "PUT"
		}
		resp := e.h.Serve(context.Background(), Request{Method: method, Route: RouteNotifications, UserID: mallo, Email: adaMail, Body: body})
		if resp.Status >= 500 || resp.Status < 200 {
			t.Fatalf("status %d for client input: %s", resp.Status, resp.Body)
		}
		subs := e.sns.Subscriptions(adaMail)
		if len(subs) != 1 || !subs[0].Confirmed || subs[0].Attributes["FilterPolicy"] != notify.FilterPolicy(ada) {
			t.Fatalf("Ada's subscription changed: %+v", subs)
		}
	})
}
