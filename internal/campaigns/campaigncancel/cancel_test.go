package campaigncancel_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/core/clock"
	// The timer kinds whose stand-ins NewTimerOf picks.
	_ "github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

var now = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

func setup(t *testing.T, states ...campaign.State) (*memory.CampaignStore, *inmem.Remote, *campaigncancel.Canceller) {
	t.Helper()
	return setupOn(t, timerspec.EventBridgeScheduler, states...)
}

func setupOn(t *testing.T, l timerspec.Name, states ...campaign.State) (*memory.CampaignStore, *inmem.Remote, *campaigncancel.Canceller) {
	t.Helper()
	st := memory.NewCampaignStore()
	st.PutCampaign(campaign.Campaign{ID: "c1", Status: campaign.Active})
	sched := inmem.NewRemote(inmem.NewTimerOf(l, campaign.TaskSchema, func() time.Time { return now }, nil), nil)
	for i, s := range states {
		task := campaign.SendTask{CampaignID: "c1", ID: campaign.TaskID("c1", i), Index: i, State: s, SchedulerRequestToken: fmt.Sprint(i), SendAt: now}
		st.PutTasks(task)
		if s == campaign.Pending && i%2 == 0 { // odd ones lost their schedule already
			_ = sched.Arm(context.Background(), task.Schedule())
		}
	}
	c, err := campaigncancel.New(st, st, sched, clock.NewFake(now), 1)
	if err != nil {
		t.Fatal(err)
	}
	c.PageSize = 2
	return st, sched, c
}

func TestCancel(t *testing.T) {
	for _, l := range timerkind.Names() {
		t.Run(string(l), func(t *testing.T) { testCancel(t, l) })
	}
}

func testCancel(t *testing.T, l timerspec.Name) {
	states := []campaign.State{campaign.Pending, campaign.Pending, campaign.Running, campaign.Finished, campaign.Pending, campaign.Failed}
	st, sched, c := setupOn(t, l, states...)
	res, err := c.Cancel(context.Background(), "c1", "user asked", now.Add(time.Hour))
	// Tasks 0 and 4 had schedules; task 1 had lost its own.
	if err != nil || res.Cancelled != 3 || res.SchedulesDeleted != 2 || res.SchedulesAbsent != 1 || res.Skipped != 3 || res.Continue {
		t.Fatalf("%+v %v", res, err)
	}
	if len(sched.All()) != 0 {
		t.Fatalf("schedules left: %v", sched.All())
	}
	want := []campaign.State{campaign.Cancelled, campaign.Cancelled, campaign.Running, campaign.Finished, campaign.Cancelled, campaign.Failed}
	for i, task := range st.All("c1") {
		if task.State != want[i] || (task.State == campaign.Cancelled && task.Reason != "user asked") {
			t.Fatalf("task %d: %+v", i, task)
		}
	}
	if cp, _ := st.Campaign(context.Background(), "c1"); cp.Status != campaign.CampaignCancelled || cp.CancelReason != "user asked" {
		t.Fatalf("campaign %+v", cp)
	}
	// Again: idempotent, nothing left to cancel, deletes find nothing,
	// and the counts say so.
	res, err = c.Cancel(context.Background(), "c1", "user asked", now.Add(time.Hour))
	if err != nil || res.Cancelled != 0 || res.SchedulesDeleted != 0 || res.SchedulesAbsent != 3 {
		t.Fatalf("second cancel %+v %v", res, err)
	}
}

func TestCancelRetriesThrottledDeletes(t *testing.T) {
	_, sched, c := setup(t, campaign.Pending, campaign.Pending, campaign.Pending)
	var n atomic.Int64
	sched.Fault = func(op, _ string) (error, bool) {
		if n.Add(1)%2 == 1 {
			return timer.ErrThrottled, false
		}
		return nil, false
	}
	before := sched.Stats().Calls // the setup's creates
	res, err := c.Cancel(context.Background(), "c1", "r", now.Add(time.Hour))
	if err != nil || res.SchedulesDeleted != 2 || res.SchedulesAbsent != 1 || len(sched.All()) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if st := sched.Stats(); st.Throttled != 3 || st.Calls-before != 6 {
		t.Fatalf("%+v: want each delete throttled once, then tried again", st)
	}
}

// TestCancelBoundsTheTries: a delete throttled every time is tried
// ThrottleTries times, then counted as an error (its fire finds the task
// Cancelled); any other answer ends the tries at once.
func TestCancelBoundsTheTries(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     error
		calls     int64
		res       campaigncancel.Result
		scheduled int
	}{
		{"always throttled", timer.ErrThrottled, 5, campaigncancel.Result{Cancelled: 1, Errors: 1}, 1},
		{"not found after a throttle", nil, 2, campaigncancel.Result{Cancelled: 1, SchedulesAbsent: 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, sched, c := setup(t, campaign.Pending, campaign.Pending)
			c.ThrottleTries = 5
			var n atomic.Int64
			sched.Fault = func(op, name string) (error, bool) {
				if name != campaign.ScheduleName(campaign.Key{CampaignID: "c1", TaskID: campaign.TaskID("c1", 0)}) {
					return errors.New("task 1 is not this test's"), false
				}
				if tc.fault == nil && n.Add(1) > 1 {
					return timer.ErrNotFound, false
				}
				return timer.ErrThrottled, false
			}
			c.PageSize = 1
			before := sched.Stats().Calls // the setup's create
			res, err := c.Cancel(context.Background(), "c1", "r", now.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			// Task 1's delete fails with another error five times: an error.
			res.Errors--
			res.Cancelled--
			if res != tc.res || sched.Stats().Calls-before != tc.calls+5 || len(sched.All()) != tc.scheduled {
				t.Fatalf("%+v, %+v, %d scheduled", res, sched.Stats(), len(sched.All()))
			}
		})
	}
}

// claimFirst claims the task between the canceller's read and its write.
type claimFirst struct {
	*memory.CampaignStore
	done bool
}

func (c *claimFirst) Replace(ctx context.Context, prev, next campaign.SendTask) error {
	if !c.done {
		c.done = true
		if _, err := c.CampaignStore.Claim(ctx, prev.Key(), prev.SendAt, now, time.Minute); err != nil {
			return err
		}
	}
	return c.CampaignStore.Replace(ctx, prev, next)
}

func TestCancelLosesToAClaim(t *testing.T) {
	st, sched, _ := setup(t, campaign.Pending)
	c, _ := campaigncancel.New(&claimFirst{CampaignStore: st}, st, sched, clock.NewFake(now), 1)
	res, err := c.Cancel(context.Background(), "c1", "r", now.Add(time.Hour))
	if err != nil || res.Skipped != 1 || res.Cancelled != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if task := st.All("c1")[0]; task.State != campaign.Running {
		t.Fatalf("task %s", task.State)
	}
}

func TestCancelNeedsAReason(t *testing.T) {
	_, _, c := setup(t, campaign.Pending)
	if _, err := c.Cancel(context.Background(), "c1", "", now); err == nil {
		t.Fatal("no reason accepted")
	}
	if _, err := c.Cancel(context.Background(), "nope", "r", now); !errors.Is(err, campaign.ErrNotFound) {
		t.Fatalf("missing campaign: %v", err)
	}
}
