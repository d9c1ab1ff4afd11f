// Package campaigncancel cancels a campaign: it marks the campaign Cancelled (so
// provisioning stops and the send worker cancels any task it is fired
// for), then moves each Pending task to Cancelled with a conditional
// write and deletes its schedule from the core's timer (any of them,
// through the core's paced caller: throttles backed off and retried a
// bounded number of times); a schedule already gone (never made,
// as for a Draft, or deleted by an earlier cancel) is counted apart, so
// the counts say what this cancel did. Running tasks finish; terminal ones stay as they are. A cancel
// that stops midway (deadline, crash) is finished by running it again or
// by the reconciler. No AWS SDK here.
package campaigncancel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/paced"
)

// Result counts what a cancel did.
type Result struct {
	Cancelled        int // Pending tasks cancelled
	SchedulesDeleted int // deleted by this cancel
	SchedulesAbsent  int // already gone: never made, or deleted before
	Skipped          int // Running or terminal
	Errors           int // schedule deletes that kept failing (the fire is skipped)
	// Continue: stopped at the deadline; run it again.
	Continue bool
}

// Canceller cancels campaigns.
type Canceller struct {
	tasks     campaign.Tasks
	campaigns campaign.Campaigns
	timer     timer.Timer
	clock     campaign.Clock
	caller    *paced.Caller
	// PageSize of the task reads. Default: 100.
	PageSize int
	// Margin: stop this long before the deadline. Default: 30 s.
	Margin time.Duration
	// ThrottleTries bounds the tries of one throttled delete. Default: 8.
	ThrottleTries int
}

// New returns a Canceller of the send tasks' schedules on the timer s;
// seed seeds the back-off's jitter (0: random).
func New(tasks campaign.Tasks, campaigns campaign.Campaigns, s timer.Timer, clock campaign.Clock, seed uint64) (*Canceller, error) {
	if tasks == nil || campaigns == nil || s == nil || clock == nil {
		return nil, errors.New("cancel: tasks, campaigns, timer and clock are required")
	}
	caller, err := paced.New(paced.Config{BaseBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second, Seed: seed}, clock)
	if err != nil {
		return nil, fmt.Errorf("cancel: %w", err)
	}
	return &Canceller{tasks: tasks, campaigns: campaigns, timer: s, clock: clock, caller: caller,
		PageSize: 100, Margin: 30 * time.Second, ThrottleTries: 8}, nil
}

// Cancel cancels the campaign for reason (required).
func (c *Canceller) Cancel(ctx context.Context, campaignID, reason string, deadline time.Time) (Result, error) {
	var res Result
	if err := campaign.CancelCampaign(ctx, c.campaigns, campaignID, reason, c.clock.Now()); err != nil {
		return res, err
	}
	if cur, err := c.campaigns.Campaign(ctx, campaignID); err != nil {
		return res, fmt.Errorf("cancel %s: %w", campaignID, err)
	} else if cur.Status != campaign.CampaignCancelled {
		return res, fmt.Errorf("cancel %s: campaign is %s", campaignID, cur.Status)
	}
	stopAt := deadline.Add(-c.Margin)
	for from := 0; ; {
		page, err := c.tasks.List(ctx, campaignID, from, c.PageSize)
		if err != nil {
			return res, fmt.Errorf("cancel %s: list: %w", campaignID, err)
		}
		for _, t := range page {
			if !c.clock.Now().Before(stopAt) {
				res.Continue = true
				return res, nil
			}
			if err := c.one(ctx, t, reason, &res); err != nil {
				return res, fmt.Errorf("cancel %s: %w", campaignID, err)
			}
		}
		if len(page) < c.PageSize {
			return res, nil
		}
		from += len(page)
	}
}

func (c *Canceller) one(ctx context.Context, t campaign.SendTask, reason string, res *Result) error {
	for try := 0; t.State == campaign.Pending; try++ {
		next, _ := campaign.Cancel(t, reason, c.clock.Now())
		err := c.tasks.Replace(ctx, t, next)
		if err == nil {
			res.Cancelled++
			t = next
			break
		}
		if !errors.Is(err, campaign.ErrConditionFailed) || try >= 3 {
			return err
		}
		if t, err = c.tasks.Get(ctx, t.Key()); err != nil {
			return err
		}
	}
	if t.State != campaign.Cancelled {
		res.Skipped++
		return nil
	}
	// Delete the schedule (again, for a cancelled task of an earlier run:
	// not-found is success), at most ThrottleTries tries.
	tries := 0
	sc := t.Schedule()
	out := c.caller.Do(ctx, func() bool { tries++; return tries > c.ThrottleTries }, func(ctx context.Context) error {
		return c.timer.Disarm(ctx, sc.Name, sc.At)
	})
	switch err := out.Err; {
	case err == nil:
		res.SchedulesDeleted++
	case errors.Is(err, timer.ErrNotFound):
		res.SchedulesAbsent++
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		res.Errors++ // its fire finds the task Cancelled and skips it
	}
	return nil
}
