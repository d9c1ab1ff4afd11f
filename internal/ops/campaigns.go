package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntimer"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
)

// CampaignReason is the reason an operator's cancel records.
const CampaignReason = "cancelled by an operator (unschedule campaigns cancel)"

// CampaignCancel is what a cancel did (or would do) to one campaign.
type CampaignCancel struct {
	Campaign string `json:"campaign"`
	Status   string `json:"status"`
	// Action: "cancelled", "would cancel", or "left" (already Completed or
	// Cancelled).
	Action string                 `json:"action"`
	Result *campaigncancel.Result `json:"result,omitempty"`
}

// campaignCancelBudget bounds one campaign's cancel; a longer one goes on
// in further calls of the same code (Result.Continue).
const campaignCancelBudget = 10 * time.Minute

// CancelCampaigns cancels every campaign of owner that is not finished,
// one by one, with the campaign API's own code
// (campaigncancel.Canceller: the campaign marked Cancelled, each Pending
// task cancelled and its schedule deleted); a dry run only lists them.
// The campaign table and its timer come from the stack's function that
// carries both (the campaign API, as the construct wires it).
func (w *World) CancelCampaigns(ctx context.Context, owner string, dryRun bool) ([]CampaignCancel, error) {
	if owner == "" {
		return nil, fmt.Errorf("%w: --owner is required: the campaigns' owner (the sender's sub)", ErrUsage)
	}
	var fn *Function
	for i, f := range w.Stack.Functions {
		if f.Env[campaignenv.CampaignTable] != "" && hasTimer(f.Env) {
			fn = &w.Stack.Functions[i]
			break
		}
	}
	if fn == nil {
		return nil, errors.New("no function of the stack carries the campaign table and its timer: is it the campaigns stack?")
	}
	get := func(k string) string { return fn.Env[k] }
	e := lambdaenv.New(get)
	tc, err := campaigntimer.Load(e, get)
	if err == nil {
		err = e.Err()
	}
	if err != nil {
		return nil, err
	}
	store, err := campaigntable.NewCampaignStore(w.DDB, fn.Env[campaignenv.CampaignTable])
	if err != nil {
		return nil, err
	}
	tm, err := campaigntimer.New(w.AWS, tc)
	if err != nil {
		return nil, err
	}
	c, err := campaigncancel.New(store, store, tm, sleeper{w.now}, 0)
	if err != nil {
		return nil, err
	}
	var out []CampaignCancel
	for cursor, first := "", true; first || cursor != ""; first = false {
		page, next, err := store.Owned(ctx, owner, cursor, 100)
		if err != nil {
			return out, fmt.Errorf("list the campaigns of %s: %w", owner, err)
		}
		for _, cp := range page {
			r := CampaignCancel{Campaign: cp.ID, Status: string(cp.Status)}
			switch {
			case !slices.Contains([]campaign.Status{campaign.Draft, campaign.Provisioning, campaign.Active}, cp.Status):
				r.Action = "left"
			case dryRun:
				r.Action = "would cancel"
			default:
				res, err := cancelAll(ctx, c, cp.ID, w.now)
				r.Action, r.Result = "cancelled", &res
				if err != nil {
					return append(out, r), err
				}
			}
			out = append(out, r)
			w.progress(len(out), 0, fmt.Sprintf("%d campaign(s) of %s", len(out), owner))
		}
		cursor = next
	}
	return out, nil
}

// cancelAll runs the cancel until it has gone through every task.
func cancelAll(ctx context.Context, c *campaigncancel.Canceller, id string, now func() time.Time) (campaigncancel.Result, error) {
	var total campaigncancel.Result
	for {
		res, err := c.Cancel(ctx, id, CampaignReason, now().Add(campaignCancelBudget))
		total.Cancelled += res.Cancelled
		total.SchedulesDeleted += res.SchedulesDeleted
		total.SchedulesAbsent += res.SchedulesAbsent
		total.Skipped += res.Skipped
		total.Errors += res.Errors
		if err != nil || !res.Continue {
			return total, err
		}
	}
}

// sleeper is the world's clock, sleeping in real time.
type sleeper struct{ now func() time.Time }

func (s sleeper) Now() time.Time { return s.now() }

func (sleeper) Sleep(ctx context.Context, d time.Duration) error { return clock.System{}.Sleep(ctx, d) }
