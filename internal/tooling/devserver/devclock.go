package devserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/httpapi"
)

// Routes of the fake clock (Config.FakeClock only; loopback only, as
// cmd/dev refuses -clock fake with -allow-remote).
const (
	RouteClock        = "GET /__dev/clock"
	RouteClockAdvance = "POST /__dev/clock/advance"
)

// MaxClockAdvance bounds one advance: a week is more than any browser test
// waits, and a larger jump is more likely a unit mistake (ms for s).
const MaxClockAdvance = 7 * 24 * time.Hour

// fakeTime drives Config.FakeClock: every reading first moves it by the
// wall time elapsed since the last, and advance jumps it ahead.
type fakeTime struct {
	mu   sync.Mutex
	fake *clock.Fake
	last time.Time // wall reading (monotonic) the clock last followed
}

// now follows the wall clock, then reads the fake clock.
func (f *fakeTime) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	wall := time.Now()
	f.fake.Advance(wall.Sub(f.last))
	f.last = wall
	return f.fake.Now()
}

func (f *fakeTime) advance(d time.Duration) time.Time {
	f.mu.Lock()
	f.fake.Advance(d)
	f.mu.Unlock()
	return f.now()
}

// clockJSON is the answer of both clock routes.
type clockJSON struct {
	Now string `json:"now"`
	// CampaignSends is how many campaign schedules the advance fired.
	CampaignSends int `json:"campaignSends,omitempty"`
}

// readClock is GET /__dev/clock.
func (s *Server) readClock(*http.Request) httpapi.Response {
	return httpapi.JSON(http.StatusOK, clockJSON{Now: s.cfg.Now().UTC().Format(time.RFC3339Nano)})
}

// advanceClock is POST /__dev/clock/advance {"seconds": N}: it moves the
// fake clock N seconds ahead (0 < N <= a week), then takes one step
// (Tick) before answering.
func (s *Server) advanceClock(r *http.Request) httpapi.Response {
	var in struct {
		Seconds *float64 `json:"seconds"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1024))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.Seconds == nil {
		return httpapi.Error(http.StatusBadRequest, "invalid_body", `the body must be {"seconds": N}, N the seconds to move the clock ahead`)
	}
	d := time.Duration(*in.Seconds * float64(time.Second))
	if d <= 0 || d > MaxClockAdvance {
		return httpapi.Error(http.StatusBadRequest, "invalid_seconds", "seconds must be more than 0 and at most 604800 (a week)")
	}
	now := s.fake.advance(d)
	s.log.Info("fake clock advanced", "by", d.String(), "now", now)
	fired, err := s.Tick(r.Context())
	if err != nil && !errors.Is(err, context.Canceled) {
		s.log.Error("pipeline step after a clock advance failed", "error", err.Error())
		return httpapi.Error(http.StatusInternalServerError, "step_failed", "the pipeline step after the advance failed: see the server log")
	}
	return httpapi.JSON(http.StatusOK, clockJSON{Now: now.UTC().Format(time.RFC3339Nano), CampaignSends: fired})
}
