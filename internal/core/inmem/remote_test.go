package inmem_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/core/timerkind"
)

// TestRemoteOverEveryTimer: the faults, the rate limit and the counters
// of a Remote work alike over each timer's stand-in, and leave the
// stand-in's own answers as they are.
func TestRemoteOverEveryTimer(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	due := t0.Add(time.Hour)
	k := contract.Key{Partition: "CAMPAIGN#c", Sort: "TASK#c-00001"}
	s := timer.Schedule{Name: "camp-x", At: due, ClientToken: "a", Payload: contract.Payload{Key: k, Due: due}}
	for _, l := range timerkind.Names() {
		t.Run(string(l), func(t *testing.T) {
			ctx := context.Background()
			r := inmem.NewRemote(inmem.NewTimer(l, func() time.Time { return t0 }, nil), nil)
			if err := r.Arm(ctx, s); err != nil {
				t.Fatal(err)
			}
			if err := r.Arm(ctx, s); err != nil {
				t.Fatalf("the same schedule again: %v", err)
			}
			if got, err := r.Get(ctx, s.Name, due); err != nil || !got.Payload.Equal(s.Payload) {
				t.Fatalf("get: %+v %v", got, err)
			}
			if err := r.Disarm(ctx, s.Name, due); err != nil {
				t.Fatal(err)
			}
			if err := r.Disarm(ctx, s.Name, due); !errors.Is(err, timer.ErrNotFound) {
				t.Fatalf("second delete: %v", err)
			}
			r.Fault = func(string, string) (error, bool) { return errors.New("connection reset"), true }
			if _, ok := r.Lookup(s.Name); ok {
				t.Fatal("deleted, still there")
			}
			if err := r.Arm(ctx, s); err == nil {
				t.Fatal("lost answer: no error")
			}
			if _, ok := r.Lookup(s.Name); !ok {
				t.Fatal("lost answer: the create did not take effect")
			}
			r.Fault = func(op, _ string) (error, bool) { return timer.ErrThrottled, false }
			if err := r.Disarm(ctx, s.Name, due); !errors.Is(err, timer.ErrThrottled) {
				t.Fatalf("throttled delete: %v", err)
			}
			if _, ok := r.Lookup(s.Name); !ok {
				t.Fatal("a refused call took effect")
			}
			if st := r.Stats(); st != (inmem.RemoteStats{Calls: 7, Throttled: 1, Creates: 2, MaxInFlight: 1}) {
				t.Fatalf("stats %+v", st)
			}
			lim := inmem.NewRemote(inmem.NewTimer(l, func() time.Time { return t0 }, nil), inmem.NewBucket(clock.NewFake(t0), 1, 1))
			_ = lim.Arm(ctx, s)
			if err := lim.Disarm(ctx, s.Name, due); !errors.Is(err, timer.ErrThrottled) || lim.Stats().Throttled != 1 {
				t.Fatalf("over the bucket: %v", err)
			}
		})
	}
}

// gate is a clock whose Sleep blocks until the gate opens, counting the
// sleepers.
type gate struct {
	clock.Clock
	sleeping chan struct{}
	open     chan struct{}
}

func (g gate) Sleep(ctx context.Context, _ time.Duration) error {
	g.sleeping <- struct{}{}
	<-g.open
	return nil
}

// TestRemoteLatencyHoldsNoLock: every call can be waiting its latency at
// once (none holds a lock while it waits), and the stand-in still counts
// each create once.
func TestRemoteLatencyHoldsNoLock(t *testing.T) {
	const n = 4
	g := gate{Clock: clock.System{}, sleeping: make(chan struct{}, n), open: make(chan struct{})}
	r := inmem.NewRemote(inmem.NewScheduler(), nil)
	r.Clock, r.Latency = g, time.Second
	done := make(chan error, n)
	for i := range n {
		go func() {
			done <- r.Arm(context.Background(), timer.Schedule{Name: "camp-" + string(rune('a'+i)), ClientToken: "t"})
		}()
	}
	for range n {
		<-g.sleeping // all n wait at once, or this blocks forever
	}
	close(g.open)
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if st := r.Stats(); st.Creates != n || st.MaxInFlight != n {
		t.Fatalf("stats %+v", st)
	}
}

// The Remote keeps the timer contract.
func TestRemoteTimerContract(t *testing.T) {
	timertest.TimerContract(t, timertest.TimerBackend{
		New: func(*testing.T) timertest.ContractTimer { return inmem.NewRemote(contractScheduler(), nil) },
	})
}

// TestRemoteLostAfterSuccess: Lost is asked only after a call that
// succeeded and met no Fault; its error replaces the answer of a call
// that took effect, and nil keeps it.
func TestRemoteLostAfterSuccess(t *testing.T) {
	timeout := errors.New("RequestTimeout")
	s := timer.Schedule{Name: "camp-x", ClientToken: "a"}
	for _, tc := range []struct {
		name    string
		armed   bool // the schedule exists before the call
		op      string
		fault   error // Fault's error (not lost), before the call
		lost    error // Lost's answer
		want    error
		asked   int  // times Lost was asked
		present bool // the schedule exists after the call
	}{
		{name: "arm, answer kept", op: "Arm", asked: 1, present: true},
		{name: "arm, answer lost", op: "Arm", lost: timeout, want: timeout, asked: 1, present: true},
		{name: "disarm, answer lost", armed: true, op: "Disarm", lost: timeout, want: timeout, asked: 1},
		{name: "a failed disarm is not asked", op: "Disarm", lost: timeout, want: timer.ErrNotFound},
		{name: "a refused arm is not asked", op: "Arm", fault: timer.ErrThrottled, lost: timeout, want: timer.ErrThrottled},
		{name: "get, answer lost", armed: true, op: "Get", lost: timeout, want: timeout, asked: 1, present: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := inmem.NewRemote(inmem.NewScheduler(), nil)
			if tc.armed {
				if err := r.Arm(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			r.Fault = func(string, string) (error, bool) { return tc.fault, false }
			asked := 0
			r.Lost = func(op, name string) error {
				if op != tc.op || name != s.Name {
					t.Errorf("Lost(%q, %q), want (%q, %q)", op, name, tc.op, s.Name)
				}
				asked++
				return tc.lost
			}
			var err error
			switch tc.op {
			case "Arm":
				err = r.Arm(ctx, s)
			case "Disarm":
				err = r.Disarm(ctx, s.Name, s.At)
			case "Get":
				_, err = r.Get(ctx, s.Name, s.At)
			}
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("%s: %v, want %v", tc.op, err, tc.want)
			}
			if asked != tc.asked {
				t.Errorf("Lost asked %d times, want %d", asked, tc.asked)
			}
			if _, ok := r.Lookup(s.Name); ok != tc.present {
				t.Errorf("present after the call: %v, want %v", ok, tc.present)
			}
		})
	}
}
