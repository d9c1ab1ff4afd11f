package devserver

import (
	"net/http"
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
		all, err := e.srv.db.Outbox()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range all {
			if m.Kind == kind && len(m.To) > 0 {
				n++
			}
		}
		return n
	}
	// The local SNS confirms at once (there is no inbox to click in).
	setting("GET", nil, "confirmed")
	setting("PUT", map[string]bool{"enabled": false}, "off")
	if subs, _ := e.srv.db.Subscriptions(); len(subs) != 0 {
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
	if subs, _ := e.srv.db.Subscriptions(); len(subs) != 0 {
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
