package devserver

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestNotificationSetting: the dev server serves /me/notifications with the
// same rules as the deployed API; turning off deletes the subscription, so
// an expiry emails nobody, and a later sign-in does not subscribe again.
func TestNotificationSetting(t *testing.T) {
	e := newEnv(t)
	tok := e.user("ada@example.com")
	setting := func(method string, body any, want string) {
		t.Helper()
		r := e.do(method, "/me/notifications", tok, body)
		if r.status != http.StatusOK || r.body["status"] != want {
			t.Fatalf("%s /me/notifications: %d %s, want status %s", method, r.status, r.raw, want)
		}
	}
	outbox := func(kind string) int {
		t.Helper()
		n := 0
		for _, m := range e.srv.db.Outbox() {
			if m.Kind == kind && len(m.To) > 0 {
				n++
			}
		}
		return n
	}
	// The local SNS confirms at once (there is no inbox to click in).
	setting("GET", nil, "confirmed")
	setting("PUT", map[string]bool{"enabled": false}, "off")
	if subs := e.srv.db.sns.Subscriptions("ada@example.com"); len(subs) != 0 {
		t.Fatalf("turning off left %+v", subs)
	}
	e.create(tok, "quiet", time.Minute)
	e.tick(2 * time.Minute)
	if n := outbox(KindTaskExpired); n != 0 {
		t.Fatalf("%d expiry emails reached someone while notifications are off", n)
	}
	if r := e.do("POST", "/local-auth/signin", "", map[string]string{"email": "ada@example.com", "password": "Password-one1"}); r.status != http.StatusOK {
		t.Fatalf("sign-in: %d %s", r.status, r.raw)
	}
	setting("GET", nil, "off")
	if subs := e.srv.db.sns.Subscriptions("ada@example.com"); len(subs) != 0 {
		t.Fatalf("a sign-in subscribed again: %+v", subs)
	}
	setting("PUT", map[string]bool{"enabled": true}, "confirmed")
	if n := outbox(KindConfirmation); n != 2 {
		t.Fatalf("%d confirmation emails, want 2", n)
	}
	if r := e.do("PUT", "/me/notifications", tok, map[string]any{"Enabled": true}); r.status != http.StatusBadRequest {
		t.Fatalf("mis-cased field: %d %s", r.status, r.raw)
	}
	if r := e.do("GET", "/me/notifications", "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("no token: %d %s", r.status, r.raw)
	}
}

// TestExpiryEmailInUserTimeZone: the outbox shows the email the expiry
// function sends (the same notify code): the subject in ASCII, the
// description after the title, the deadline in the zone the web app saved.
func TestExpiryEmailInUserTimeZone(t *testing.T) {
	e := newEnv(t)
	tok := e.user("zoe@example.com")
	if r := e.do("PUT", "/me/notifications", tok, map[string]string{"timeZone": "Europe/Berlin"}); r.status != http.StatusOK || r.body["timeZone"] != "Europe/Berlin" {
		t.Fatalf("PUT timeZone: %d %s", r.status, r.raw)
	}
	if r := e.do("PUT", "/me/notifications", tok, map[string]string{"timeZone": "Europe/Atlantis"}); r.status != http.StatusBadRequest {
		t.Fatalf("PUT a bad timeZone: %d %s", r.status, r.raw)
	}
	r := e.do("POST", "/tasks", tok, map[string]string{"title": "Kuchen für Zoë backen", "description": "Die Form zurückgeben.",
		"dueAt": e.clock.Now().Add(time.Minute).UTC().Format(time.RFC3339)})
	id, _ := r.body["id"].(string)
	if r.status != http.StatusCreated || id == "" {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	e.tick(2 * time.Minute)
	mails := e.emails(tok, KindTaskExpired, id)
	if len(mails) != 1 {
		t.Fatalf("%d expiry emails, want 1", len(mails))
	}
	m := mails[0]
	if m.Subject != "Task expired: Kuchen fur Zoe backen" {
		t.Errorf("subject %q", m.Subject)
	}
	for _, want := range []string{"\"Kuchen für Zoë backen\"", "expired.\n\nDie Form zurückgeben.\n\nDue: Tuesday, 1 January 2030 at 13:01 CET (12:01 UTC)\n"} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("body lacks %q:\n%s", want, m.Body)
		}
	}
}
