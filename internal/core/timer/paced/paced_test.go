package paced_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/paced"
)

var t0 = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// script answers the calls in order, then nil.
func script(errs ...error) (func(context.Context) error, *int) {
	n := 0
	return func(context.Context) error {
		n++
		if n <= len(errs) {
			return errs[n-1]
		}
		return nil
	}, &n
}

func TestDo(t *testing.T) {
	boom := errors.New("boom")
	throttled := fmt.Errorf("create: %w", timer.ErrThrottled)
	cases := []struct {
		name             string
		answers          []error
		stopAfter        int // stop() turns true after this many checks (0: never)
		wantErr          error
		calls, throttles int
	}{
		{"success at once", nil, 0, nil, 1, 0},
		{"throttles are retried until done", []error{throttled, throttled, throttled, throttled, throttled, throttled, throttled}, 0, nil, 8, 7},
		{"other errors are tried MaxErrorAttempts times", []error{boom, boom, boom}, 0, boom, 3, 0},
		{"throttles do not count as errors", []error{boom, throttled, boom, throttled}, 0, nil, 5, 2},
		{"an existing schedule is final", []error{fmt.Errorf("x: %w", timer.ErrExists)}, 0, timer.ErrExists, 1, 0},
		{"a missing schedule is final", []error{fmt.Errorf("x: %w", timer.ErrNotFound)}, 0, timer.ErrNotFound, 1, 0},
		{"stop ends a throttled call", []error{throttled, throttled, throttled, throttled}, 3, paced.ErrStopped, 2, 2},
		{"stop before the first try", nil, 1, paced.ErrStopped, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := paced.New(paced.Config{MaxErrorAttempts: 3, Seed: 1}, clock.NewFake(t0))
			if err != nil {
				t.Fatal(err)
			}
			call, n := script(tc.answers...)
			checks := 0
			var stop func() bool
			if tc.stopAfter > 0 {
				stop = func() bool { checks++; return checks >= tc.stopAfter }
			}
			o := c.Do(context.Background(), stop, call)
			if (tc.wantErr == nil) != (o.Err == nil) || (tc.wantErr != nil && !errors.Is(o.Err, tc.wantErr)) {
				t.Fatalf("err = %v, want %v", o.Err, tc.wantErr)
			}
			if o.Calls != tc.calls || *n != tc.calls || o.Throttles != tc.throttles {
				t.Fatalf("calls %d (made %d), throttles %d; want %d, %d", o.Calls, *n, o.Throttles, tc.calls, tc.throttles)
			}
			if o.Stopped() != errors.Is(tc.wantErr, paced.ErrStopped) {
				t.Fatalf("Stopped() = %v", o.Stopped())
			}
		})
	}
}

// TestPaceAndBound: N calls from many goroutines start at most
// CallsPerSecond apart on the virtual clock, and never more than
// Concurrency are in flight.
func TestPaceAndBound(t *testing.T) {
	for _, tc := range []struct {
		conc int
		rate float64
	}{{1, 10}, {3, 50}, {10, 1000}} {
		t.Run(fmt.Sprintf("conc=%d rate=%v", tc.conc, tc.rate), func(t *testing.T) {
			clk := clock.NewFake(t0)
			c, _ := paced.New(paced.Config{Concurrency: tc.conc, CallsPerSecond: tc.rate, Seed: 1}, clk)
			var inFlight, most atomic.Int32
			var wg sync.WaitGroup
			const n = 100
			for range 4 * tc.conc {
				wg.Go(func() {
					for range n / (4 * tc.conc) {
						c.Do(context.Background(), nil, func(context.Context) error {
							v := inFlight.Add(1)
							for m := most.Load(); v > m && !most.CompareAndSwap(m, v); m = most.Load() {
							}
							inFlight.Add(-1)
							return nil
						})
					}
				})
			}
			wg.Wait()
			if int(most.Load()) > tc.conc {
				t.Fatalf("%d calls in flight, bound %d", most.Load(), tc.conc)
			}
			made := n / (4 * tc.conc) * 4 * tc.conc
			// The limiter puts call k at k/rate after the first: the clock
			// moved at least (made-1)/rate.
			if min := time.Duration(float64(made-1) / tc.rate * float64(time.Second)); clk.Now().Sub(t0) < min {
				t.Fatalf("%d calls took %v of virtual time, want at least %v", made, clk.Now().Sub(t0), min)
			}
		})
	}
}

func TestBackoffIsFullJitterWithinBounds(t *testing.T) {
	b := paced.NewBackoff(50*time.Millisecond, 5*time.Second, 7)
	for attempt := range 40 {
		ceil := 5 * time.Second
		if attempt < 30 {
			ceil = min(ceil, 50*time.Millisecond<<attempt)
		}
		for range 50 {
			if d := b.Delay(attempt); d <= 0 || d > ceil {
				t.Fatalf("Delay(%d) = %v, want in (0, %v]", attempt, d, ceil)
			}
		}
	}
}

// flaky is a timer.Timer that throttles every call once.
type flaky struct{ calls map[string]int }

func (f *flaky) answer(op string) error {
	f.calls[op]++
	if f.calls[op] == 1 {
		return timer.ErrThrottled
	}
	return nil
}
func (f *flaky) Arm(context.Context, timer.Schedule) error { return f.answer("create") }
func (f *flaky) Move(context.Context, timer.Schedule, time.Time) error {
	return f.answer("update")
}
func (f *flaky) Disarm(context.Context, string, time.Time) error { return f.answer("delete") }

func TestSchedulerRetriesEveryOperation(t *testing.T) {
	c, _ := paced.New(paced.Config{Seed: 1}, clock.NewFake(t0))
	f := &flaky{calls: map[string]int{}}
	s, err := paced.NewTimer(c, f)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Arm(ctx, timer.Schedule{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Move(ctx, timer.Schedule{Name: "a"}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Disarm(ctx, "a", time.Time{}); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"create", "update", "delete"} {
		if f.calls[op] != 2 {
			t.Errorf("%s called %d times, want 2 (one throttle, one success)", op, f.calls[op])
		}
	}
	if _, err := paced.NewTimer(nil, f); err == nil {
		t.Error("NewTimer(nil, …) accepted a nil caller")
	}
}

// TestIsThrottleKnowsEveryTimersThrottle: the core's sentinel, and the
// AWS error codes the Step Functions and TTL adapters pass on unwrapped.
func TestIsThrottleKnowsEveryTimersThrottle(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"sentinel", fmt.Errorf("create: %w", timer.ErrThrottled), true},
		{"step functions", fmt.Errorf("awssfn: start x: %w", &smithy.GenericAPIError{Code: "ThrottlingException"}), true},
		{"dynamodb", fmt.Errorf("ttlmarker: put: %w", &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}), true},
		{"another API error", &smithy.GenericAPIError{Code: "ValidationException"}, false},
		{"not found", timer.ErrNotFound, false},
		{"plain", errors.New("connection reset"), false},
	} {
		if got := paced.IsThrottle(tc.err); got != tc.want {
			t.Errorf("%s: IsThrottle = %v, want %v", tc.name, got, tc.want)
		}
	}
}
