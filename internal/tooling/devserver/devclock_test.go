package devserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
)

// TestClockEndpointsOnlyWithFakeClock: a server on the wall clock (make
// dev) has no clock endpoint, and its time does not move on a request.
func TestClockEndpointsOnlyWithFakeClock(t *testing.T) {
	e := newEnv(t) // Config.Now only: the wall clock's place
	before := e.clock.Now()
	for _, r := range []struct{ method, path string }{{"GET", "/__dev/clock"}, {"POST", "/__dev/clock/advance"}} {
		if got := e.do(r.method, r.path, "", map[string]any{"seconds": 3600}); got.status != http.StatusNotFound {
			t.Errorf("%s %s: %d %s, want 404", r.method, r.path, got.status, got.raw)
		}
	}
	if now := e.clock.Now(); !now.Equal(before) {
		t.Errorf("the clock moved from %v to %v", before, now)
	}
}

// TestFakeClockAdvanceRunsWhatBecameDue: with Config.FakeClock, an advance
// moves the server's time and runs the pipeline before it answers: a task
// expires, with its email, the moment the clock passes its deadline.
func TestFakeClockAdvanceRunsWhatBecameDue(t *testing.T) {
	start := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	fake := clock.NewFake(start)
	e := startWith(t, fake, Config{DataDir: t.TempDir(), FakeClock: fake})
	tok := e.user("ada@example.com")
	id := e.create(tok, "water the plants", 10*time.Minute)

	advance := func(seconds any) reply {
		t.Helper()
		return e.do("POST", "/__dev/clock/advance", "", map[string]any{"seconds": seconds})
	}
	if r := advance(9 * 60); r.status != http.StatusOK {
		t.Fatalf("advance: %d %s", r.status, r.raw)
	}
	if s := e.status(tok, id); s != "Pending" {
		t.Fatalf("before the deadline: %s", s)
	}
	r := advance(61.5)
	if r.status != http.StatusOK {
		t.Fatalf("advance: %d %s", r.status, r.raw)
	}
	now, err := time.Parse(time.RFC3339Nano, r.body["now"].(string))
	if err != nil || now.Before(start.Add(10*time.Minute+time.Second)) {
		t.Fatalf("now %v (%v), want at least 10 min 1 s after %v", r.body["now"], err, start)
	}
	// No further step: the advance ran it.
	if s := e.status(tok, id); s != "Expired" {
		t.Fatalf("past the deadline: %s", s)
	}
	if m := e.emails(tok, "task-expired", id); len(m) != 1 {
		t.Fatalf("%d expiry emails, want 1", len(m))
	}
	got := e.do("GET", "/__dev/clock", "", nil)
	read, err := time.Parse(time.RFC3339Nano, got.body["now"].(string))
	if got.status != http.StatusOK || err != nil || read.Before(now) {
		t.Fatalf("GET /__dev/clock: %d %s, want at least %v", got.status, got.raw, now)
	}

	for _, tc := range []struct {
		name, body, code string
	}{
		{"no seconds", `{}`, "invalid_body"},
		{"seconds as text", `{"seconds":"60"}`, "invalid_body"},
		{"unknown field", `{"seconds":1,"minutes":1}`, "invalid_body"},
		{"zero", `{"seconds":0}`, "invalid_seconds"},
		{"backwards", `{"seconds":-60}`, "invalid_seconds"},
		{"more than a week", `{"seconds":604801}`, "invalid_seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(e.http.URL+"/__dev/clock/advance", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out map[string]string
			_ = json.NewDecoder(resp.Body).Decode(&out)
			if resp.StatusCode != http.StatusBadRequest || out["error"] != tc.code {
				t.Errorf("%d %v, want 400 %s", resp.StatusCode, out, tc.code)
			}
		})
	}
}
