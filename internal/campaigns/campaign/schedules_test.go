package campaign_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/paced"
)

// TestPacedRetriesEveryTimerCall: through the paced caller, a throttled
// call of each kind is retried until it succeeds; without a caller it is
// returned at once.
func TestPacedRetriesEveryTimerCall(t *testing.T) {
	ctx := context.Background()
	e := newRepairEnv(t, noon, campaign.Active, pending(noon.Add(time.Hour)))
	s := e.task(t, 0).Schedule()
	moved := s
	moved.At = s.At.Add(time.Hour)
	calls := []struct {
		op string
		do func(campaign.Timer) error
	}{
		{"Arm", func(tm campaign.Timer) error { return tm.Arm(ctx, s) }},
		{"Get", func(tm campaign.Timer) error { _, err := tm.Get(ctx, s.Name, s.At); return err }},
		{"List", func(tm campaign.Timer) error { _, err := tm.List(ctx, timer.PageRequest{}); return err }},
		{"Move", func(tm campaign.Timer) error { return tm.Move(ctx, moved, s.At) }},
		{"Disarm", func(tm campaign.Timer) error { return tm.Disarm(ctx, s.Name, moved.At) }},
	}
	caller, err := paced.New(paced.Config{Seed: 1}, e.clock)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		e.sched.Fault = func(op, _ string) (error, bool) {
			if op == c.op {
				e.sched.Fault = nil
				return fmt.Errorf("%s: %w", op, timer.ErrThrottled), false
			}
			return nil, false
		}
		if err := c.do(campaign.Timer(e.sched)); !errors.Is(err, timer.ErrThrottled) {
			t.Fatalf("%s without a caller: %v, want the throttle", c.op, err)
		}
		e.sched.Fault = func(op, _ string) (error, bool) {
			if op == c.op {
				e.sched.Fault = nil
				return fmt.Errorf("%s: %w", op, timer.ErrThrottled), false
			}
			return nil, false
		}
		if err := c.do(campaign.Paced(caller, e.sched)); err != nil {
			t.Fatalf("%s through the caller: %v", c.op, err)
		}
	}
	if st := e.sched.Stats(); st.Throttled != int64(2*len(calls)) || len(e.live()) != 0 {
		t.Fatalf("stats %+v, %d live", st, len(e.live()))
	}
	if campaign.Paced(nil, e.sched) != campaign.Timer(e.sched) {
		t.Fatal("a nil caller wraps")
	}
}

var _ campaign.Timer = (*inmem.Remote)(nil)
