package awssfn

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// TestRestartChain: a name that a cancel closed is restarted under a name
// that derives from its stopDate, so arming again is idempotent (as many
// Creates as the reconciler makes, at any second, find the one restart),
// Get reads the running link, a cancel stops it, and the next re-arm
// starts the next link. A chain longer than timerspec.MaxRestarts is a
// clear, permanent error.
func TestRestartChain(t *testing.T) {
	due := now.Add(24 * time.Hour)
	s := sched(item, due)
	first := timerspec.ExecutionName(s.Name, due)
	// link is the name of the k-th restart when every stop happened at
	// the given seconds after now (the step's clock: see below).
	link := func(stops ...int) string {
		var prev time.Time
		for _, sec := range stops {
			prev = timerspec.RestartSecond(prev, now.Add(time.Duration(sec)*time.Second))
		}
		return timerspec.RestartName(first, prev)
	}
	for _, tc := range []struct {
		name string
		// steps: one operation per second, from now+1s.
		steps   []op
		want    []string // running executions after
		wantErr error    // of the last step
	}{
		{"armed", []op{arm}, []string{first}, nil},
		{"cancel, then three re-arms (reconciler passes)", []op{arm, disarm, arm, arm, arm},
			[]string{link(2)}, nil},
		{"cancel of the restart, then re-arms: the next link", []op{arm, disarm, arm, disarm, arm, arm},
			[]string{link(2, 4)}, nil},
		{"cancel of the restart stops it", []op{arm, disarm, arm, disarm}, nil, nil},
		{"a cancel retried stops nothing more", []op{arm, disarm, arm, disarm, disarm}, nil, timer.ErrNotFound},
		{"MaxRestarts re-arms: the last link", chain(timerspec.MaxRestarts), []string{link(seconds(timerspec.MaxRestarts)...)}, nil},
		{"one re-arm more: an error", append(chain(timerspec.MaxRestarts), disarm, arm), nil, timerspec.ErrRestartChain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newClient(t)
			clock := now
			c.cfg.Now = func() time.Time { return clock }
			f.clock = func() time.Time { return clock }
			var err error
			for _, o := range tc.steps {
				clock = clock.Add(time.Second)
				if o == arm {
					err = c.Arm(context.Background(), s)
				} else {
					err = c.Disarm(context.Background(), s.Name, due)
				}
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("last step: %v; want %v", err, tc.wantErr)
			}
			r := running(f)
			sort.Strings(r)
			if !reflect.DeepEqual(r, tc.want) {
				t.Fatalf("running %v; want %v", r, tc.want)
			}
			got, gerr := c.Get(context.Background(), s.Name, due)
			switch {
			case tc.wantErr == timerspec.ErrRestartChain:
				var p interface{ Permanent() bool }
				if !errors.As(err, &p) || !p.Permanent() {
					t.Errorf("create: %v does not report Permanent()", err)
				}
				if !errors.Is(gerr, timerspec.ErrRestartChain) || errors.Is(gerr, timer.ErrNotFound) {
					t.Errorf("get: %v; want ErrRestartChain, not ErrNotFound", gerr)
				}
				if derr := c.Disarm(context.Background(), s.Name, due); !errors.Is(derr, timerspec.ErrRestartChain) {
					t.Errorf("delete: %v; want ErrRestartChain", derr)
				}
			case len(tc.want) == 0 && !errors.Is(gerr, timer.ErrNotFound):
				t.Errorf("get: %+v, %v; want ErrNotFound", got, gerr)
			case len(tc.want) == 1 && (gerr != nil || got.Name != s.Name || !got.At.Equal(due) || got.Payload != s.Payload):
				t.Errorf("get: %+v, %v; want the running restart's schedule", got, gerr)
			}
			// List gives the restart under the item's name and due time.
			p, lerr := c.List(context.Background(), timer.PageRequest{})
			if lerr != nil || len(p.Schedules) != len(tc.want) {
				t.Fatalf("list: %+v, %v; want %d entries", p, lerr, len(tc.want))
			}
			for _, l := range p.Schedules {
				if l.Name != s.Name || !l.At.Equal(due) {
					t.Errorf("listed %+v; want %s at %s", l, s.Name, due)
				}
			}
		})
	}
}

// op is one step of a restart chain test.
type op string

const arm, disarm op = "arm", "cancel"

// chain is arm, then n times cancel and arm.
func chain(n int) []op {
	out := []op{arm}
	for range n {
		out = append(out, disarm, arm)
	}
	return out
}

// seconds are the seconds of the n cancels of chain(n): 2, 4, ...
func seconds(n int) []int {
	var out []int
	for i := range n {
		out = append(out, 2*(i+1))
	}
	return out
}

// Stops within one second, or a stopDate that is not later than the
// link's own second, still give every link its own name: each link's
// second is after the one before.
func TestRestartSecondsIncrease(t *testing.T) {
	due := now.Add(24 * time.Hour)
	s := sched(item, due)
	c, f := newClient(t)
	f.clock = func() time.Time { return now } // every stop at the same instant
	seen := map[string]bool{}
	for i := range 4 {
		if err := c.Arm(context.Background(), s); err != nil {
			t.Fatalf("re-arm %d: %v", i, err)
		}
		r := running(f)
		if len(r) != 1 || seen[r[0]] {
			t.Fatalf("re-arm %d: running %v (seen %v); want one new execution", i, r, seen)
		}
		seen[r[0]] = true
		if err := c.Disarm(context.Background(), s.Name, due); err != nil {
			t.Fatalf("cancel %d: %v", i, err)
		}
	}
	if len(f.execs) != 4 {
		t.Fatalf("executions %v; want 4", f.execs)
	}
}
