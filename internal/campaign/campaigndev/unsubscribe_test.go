package campaigndev

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaign/suppress"
)

var link = regexp.MustCompile(`/unsubscribe\?token=[A-Za-z0-9_.%-]+`)

// TestOutboxLinkUnsubscribes: a make dev campaign email shows its
// unsubscribe link; the link's page (GET) suppresses nothing, its button
// (POST) suppresses the address; a forged link is a 400.
func TestOutboxLinkUnsubscribes(t *testing.T) {
	ob := &outbox{}
	rt, clock, _ := provisioned(t, ob)
	ctx := context.Background()
	clock.Set(start.Add(90 * time.Second))
	rt.FireDue(ctx)
	rt.Wait()
	if ob.count() != 1 {
		t.Fatalf("%d emails", ob.count())
	}
	m := ob.got[0]
	path := link.FindString(m.Body)
	if path == "" || m.UnsubscribeURL != path || !strings.HasPrefix(m.Body, "Hi") {
		t.Fatalf("body %q, UnsubscribeURL %q: want the body, then the link", m.Body, m.UnsubscribeURL)
	}
	srv := httptest.NewServer(http.HandlerFunc(rt.ServeUnsubscribe))
	defer srv.Close()
	do := func(method, p string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+p, strings.NewReader("List-Unsubscribe=One-Click"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	suppressed := func() bool {
		_, ok, _ := rt.Suppressions.Get(ctx, DevSender, m.To)
		return ok
	}
	if code, body := do("GET", path); code != 200 || !strings.Contains(body, `<form method="post"`) || suppressed() {
		t.Fatalf("GET = %d %q, suppressed %v: want the page, nothing suppressed", code, body, suppressed())
	}
	if code, body := do("GET", path+"x"); code != 400 || !strings.Contains(body, "link does not work") {
		t.Errorf("forged GET = %d %q", code, body)
	}
	if code, _ := do("POST", path); code != 200 || !suppressed() {
		t.Fatalf("POST = %d, suppressed %v", code, suppressed())
	}
	if e, _, _ := rt.Suppressions.Get(ctx, DevSender, m.To); e.Reason != suppress.Unsubscribe {
		t.Errorf("entry %+v", e)
	}
}
