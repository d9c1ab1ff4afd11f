package devserver

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/todo/webheaders"
)

// TestSecurityHeaders: every answer of the dev server (the web app, its
// config, the API, the outbox page and its files, a refused host) carries
// the hosted app's security headers, with connect-src 'self'.
func TestSecurityHeaders(t *testing.T) {
	web := t.TempDir()
	if err := os.WriteFile(filepath.Join(web, "index.html"), []byte("<!doctype html><title>app</title>"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startWith(t, clock.NewFake(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)), Config{DataDir: t.TempDir(), WebDir: web})
	cases := []struct {
		name, path, host string
		status           int
		contentType      string
	}{
		{name: "web app", path: "/", status: 200, contentType: "text/html"},
		{name: "config", path: "/config.json", status: 200, contentType: "application/json"},
		{name: "API without a token", path: "/tasks", status: 401, contentType: "application/json"},
		{name: "outbox page", path: "/outbox", status: 200, contentType: "text/html"},
		{name: "outbox script", path: "/outbox.js", status: 200, contentType: "text/javascript"},
		{name: "outbox style", path: "/outbox.css", status: 200, contentType: "text/css"},
		{name: "refused host", path: "/", host: "evil.example", status: 421, contentType: "application/json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, e.http.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.host != "" {
				req.Host = c.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.contentType) {
				t.Fatalf("GET %s: %d %q, want %d %s", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), c.status, c.contentType)
			}
			for _, h := range webheaders.For(nil) {
				if got := resp.Header.Values(h.Name); len(got) != 1 || got[0] != h.Value {
					t.Errorf("GET %s: %s = %q, want [%q]", c.path, h.Name, got, h.Value)
				}
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self';") {
				t.Errorf("GET %s: connect-src is not 'self' alone: %q", c.path, csp)
			}
		})
	}
}

// TestOutboxPageHasNoInlineCode: the outbox page links its script and
// style, which script-src and style-src 'self' allow; inline ones would be
// blocked.
func TestOutboxPageHasNoInlineCode(t *testing.T) {
	page := string(outboxPage)
	for _, inline := range []string{"<script>", "<style", " style=", " onclick=", " onsubmit=", "javascript:"} {
		if strings.Contains(page, inline) {
			t.Errorf("outbox.html holds inline code %q, which the policy blocks: move it to outbox.js or outbox.css", inline)
		}
	}
}
