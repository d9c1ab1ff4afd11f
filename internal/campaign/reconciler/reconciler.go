// Package reconciler repairs the drift between the task table and the
// scheduler, on a timer (every 30 minutes). One pass reads every open
// (Pending or Running) task and:
//
//   - Pending, campaign cancelled: cancels it and deletes its schedule
//     (finishing a cancel that stopped midway);
//   - Pending, due within CheckAhead, no schedule: recreates the
//     schedule with the task's stored token as ClientToken;
//   - Pending, more than Grace past its send time (its fire was lost or
//     came outside the window): hands it to the send function now if the
//     campaign's windows allow a send now, else moves it to the next
//     usable minute of the windows and creates its schedule there (a new
//     ClientToken: see SendTask.ClientToken); after MaxAttempts claims or
//     MaxRetimes moves it is Failed;
//   - Running with its lease passed (its attempt died): Finished with the
//     recorded receipt if the sender's idempotency record says it was
//     sent; otherwise back to Pending (re-queued as above), or Failed
//     after MaxAttempts.
//
// No AWS SDK here: the Lambda main wires the adapters and a Dispatcher
// that invokes the send function asynchronously.
package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/domain/reconcile"
)

// Defaults of Config.
const (
	DefaultGrace          = 15 * time.Minute
	DefaultMaxAttempts    = 3
	DefaultPageSize       = 100
	DefaultCallsPerSecond = 50
	DefaultMargin         = 60 * time.Second
	DefaultThrottleTries  = 8
	DefaultCheckAhead     = time.Hour
	DefaultMaxRetimes     = 5
)

// Config tunes a Reconciler. Zero fields take their defaults.
type Config struct {
	Target campaign.Target
	// Grace is how long past its send time a Pending task may still be
	// waiting for its fire (the scheduler's retries included).
	// Default: 15 minutes.
	Grace time.Duration
	// MaxAttempts is how many claims a task gets before it is Failed.
	// Default: 3.
	MaxAttempts int
	// MaxRetimes is how many times an overdue task is moved to a later
	// window before it is Failed.
	// Default: 5.
	MaxRetimes int
	// PageSize of the open-task reads.
	// Default: 100.
	PageSize int
	// CallsPerSecond paces Scheduler calls.
	// Default: 50.
	CallsPerSecond float64
	// Margin: a pass stops this long before its deadline (LeftOver).
	// Default: 60 s.
	Margin time.Duration
	// CheckAhead: only Pending tasks due within this much are checked
	// for a missing schedule, so a pass makes Scheduler calls for the
	// tasks due soon, not for every future task (each task is checked
	// about CheckAhead / period times; a later miss is caught as overdue).
	// Default: 1 hour (two passes).
	CheckAhead time.Duration
	// ThrottleTries bounds the tries of one throttled call.
	// Default: 8.
	ThrottleTries int
	// Seed seeds the back-off jitter (0: random).
	Seed uint64
}

// Dispatcher hands a task to the send function at once (an asynchronous
// invoke in AWS).
type Dispatcher interface {
	Dispatch(ctx context.Context, e campaign.FireEvent) error
}

// Result counts what a pass did.
type Result struct {
	Checked    int
	Recreated  int // missing schedules created again
	Dispatched int // overdue tasks handed to the send function
	Retimed    int // overdue, outside the windows now: moved to the next usable minute
	Finished   int // stale Running tasks that had been sent
	Requeued   int // stale Running tasks that had not
	Failed     int // given up after MaxAttempts
	Cancelled  int // Pending tasks of cancelled campaigns
	Errors     int // tasks left for the next pass
	// FirstErrors holds the first few errors, for the log.
	FirstErrors []string
	// LeftOver: the pass stopped at its deadline before the end.
	LeftOver bool
}

// Reconciler runs passes.
type Reconciler struct {
	cfg        Config
	tasks      campaign.Tasks
	campaigns  campaign.Campaigns
	scheduler  campaign.Scheduler
	sender     campaign.Sender
	dispatcher Dispatcher
	clock      campaign.Clock
	limiter    *reconcile.Limiter
	backoff    *campaign.Backoff
}

// New returns a Reconciler.
func New(cfg Config, tasks campaign.Tasks, campaigns campaign.Campaigns, s campaign.Scheduler, sender campaign.Sender, d Dispatcher, clock campaign.Clock) (*Reconciler, error) {
	if tasks == nil || campaigns == nil || s == nil || sender == nil || d == nil || clock == nil {
		return nil, errors.New("reconciler: tasks, campaigns, scheduler, sender, dispatcher and clock are required")
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.MaxRetimes <= 0 {
		cfg.MaxRetimes = DefaultMaxRetimes
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultPageSize
	}
	if cfg.CallsPerSecond <= 0 {
		cfg.CallsPerSecond = DefaultCallsPerSecond
	}
	if cfg.Margin <= 0 {
		cfg.Margin = DefaultMargin
	}
	if cfg.CheckAhead <= 0 {
		cfg.CheckAhead = DefaultCheckAhead
	}
	if cfg.ThrottleTries <= 0 {
		cfg.ThrottleTries = DefaultThrottleTries
	}
	return &Reconciler{cfg: cfg, tasks: tasks, campaigns: campaigns, scheduler: s, sender: sender, dispatcher: d, clock: clock,
		limiter: reconcile.NewLimiter(cfg.CallsPerSecond, clock, clock.Sleep),
		backoff: campaign.NewBackoff(100*time.Millisecond, 5*time.Second, cfg.Seed)}, nil
}

// Run makes one pass, stopping a margin before deadline.
func (r *Reconciler) Run(ctx context.Context, deadline time.Time) (Result, error) {
	var res Result
	stopAt := deadline.Add(-r.cfg.Margin)
	camps := map[string]campaign.Campaign{}
	for cursor, first := "", true; first || cursor != ""; first = false {
		page, next, err := r.tasks.Open(ctx, cursor, r.cfg.PageSize)
		if err != nil {
			return res, fmt.Errorf("reconcile: read open tasks: %w", err)
		}
		for _, t := range page {
			if !r.clock.Now().Before(stopAt) {
				res.LeftOver = true
				return res, nil
			}
			if err := ctx.Err(); err != nil {
				return res, err
			}
			res.Checked++
			c, ok := camps[t.CampaignID]
			if !ok {
				c, err = r.campaigns.Campaign(ctx, t.CampaignID)
				if err != nil {
					res.addError(t, err)
					continue
				}
				camps[t.CampaignID] = c
			}
			if err := r.one(ctx, c, t, &res); err != nil {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				res.addError(t, err)
			}
		}
		cursor = next
	}
	return res, nil
}

func (res *Result) addError(t campaign.SendTask, err error) {
	res.Errors++
	if len(res.FirstErrors) < 5 {
		res.FirstErrors = append(res.FirstErrors, t.ID+": "+err.Error())
	}
}

func (r *Reconciler) one(ctx context.Context, c campaign.Campaign, t campaign.SendTask, res *Result) error {
	now := r.clock.Now()
	switch {
	case t.State == campaign.Running && campaign.Stale(t, now):
		return r.recover(ctx, c, t, now, res)
	case t.State != campaign.Pending:
		return nil
	case c.Status == campaign.Draft:
		return nil // not provisioned yet: no schedule is owed
	case c.Status == campaign.CampaignCancelled:
		next, err := campaign.Cancel(t, "campaign cancelled", now)
		if err == nil {
			err = r.tasks.Replace(ctx, t, next)
		}
		if err != nil {
			return err
		}
		res.Cancelled++
		return r.deleteSchedule(ctx, t)
	case t.SendAt.After(now.Add(r.cfg.CheckAhead)):
		return nil // checked when it comes near
	case t.SendAt.After(now):
		return r.ensureSchedule(ctx, t, res)
	case now.Sub(t.SendAt) > r.cfg.Grace:
		return r.overdue(ctx, c, t, now, res)
	}
	return nil // its fire may still be under way
}

// recover settles a Running task whose attempt died.
func (r *Reconciler) recover(ctx context.Context, c campaign.Campaign, t campaign.SendTask, now time.Time, res *Result) error {
	rc, err := r.sender.Sent(ctx, t.IdempotencyKey())
	switch {
	case err == nil:
		next, err := campaign.Finish(t, rc.SentAt, rc.MessageID, now)
		if err == nil {
			err = r.tasks.Replace(ctx, t, next)
		}
		if err == nil {
			res.Finished++
		}
		return err
	case !errors.Is(err, campaign.ErrNotSent):
		return err
	case t.Attempt >= r.cfg.MaxAttempts:
		return r.fail(ctx, t, fmt.Sprintf("not sent after %d attempts", t.Attempt), now, res)
	}
	next, err := campaign.Requeue(t, now)
	if err == nil {
		err = r.tasks.Replace(ctx, t, next)
	}
	if err != nil {
		return err
	}
	res.Requeued++
	switch {
	case c.Status == campaign.CampaignCancelled:
		return r.one(ctx, c, next, res)
	case next.SendAt.After(now):
		return r.ensureSchedule(ctx, next, res)
	}
	return r.overdue(ctx, c, next, now, res)
}

// overdue hands a Pending task whose fire was lost to the send function,
// when the campaign's windows allow a send now.
func (r *Reconciler) overdue(ctx context.Context, c campaign.Campaign, t campaign.SendTask, now time.Time, res *Result) error {
	if t.Attempt >= r.cfg.MaxAttempts {
		return r.fail(ctx, t, fmt.Sprintf("not sent after %d attempts", t.Attempt), now, res)
	}
	ok, err := c.Rules.Allows(now)
	if err != nil {
		return r.fail(ctx, t, "campaign schedule rules invalid: "+err.Error(), now, res)
	}
	if !ok {
		return r.retime(ctx, c, t, now, res)
	}
	if err := r.dispatcher.Dispatch(ctx, campaign.FireEvent{CampaignID: t.CampaignID, TaskID: t.ID}); err != nil {
		return err
	}
	res.Dispatched++
	return nil
}

// retime moves an overdue task to the next usable minute of its
// campaign's windows and creates its schedule there.
func (r *Reconciler) retime(ctx context.Context, c campaign.Campaign, t campaign.SendTask, now time.Time, res *Result) error {
	if t.Retimed >= r.cfg.MaxRetimes {
		return r.fail(ctx, t, fmt.Sprintf("no fire after %d reschedules", t.Retimed), now, res)
	}
	at, err := c.Rules.NextUsable(now.Add(time.Minute))
	if err != nil {
		return r.fail(ctx, t, "no usable minute left: "+err.Error(), now, res)
	}
	next, err := campaign.Retime(t, at.At, at.Local, now)
	if err == nil {
		err = r.tasks.Replace(ctx, t, next)
	}
	if err != nil {
		return err
	}
	res.Retimed++
	// A failed create is retried by the next pass (the task is due soon).
	return r.call(ctx, func() error {
		err := r.scheduler.Create(ctx, campaign.ScheduleFor(next, r.cfg.Target))
		if errors.Is(err, campaign.ErrScheduleExists) {
			// The old schedule of this name is still there (its fire is
			// late or stuck): replace it.
			if err = r.scheduler.Delete(ctx, r.cfg.Target.GroupName, campaign.ScheduleName(next.ID)); err == nil || errors.Is(err, campaign.ErrScheduleNotFound) {
				err = r.scheduler.Create(ctx, campaign.ScheduleFor(next, r.cfg.Target))
			}
		}
		return err
	})
}

func (r *Reconciler) fail(ctx context.Context, t campaign.SendTask, reason string, now time.Time, res *Result) error {
	next, err := campaign.Fail(t, reason, now)
	if err == nil {
		err = r.tasks.Replace(ctx, t, next)
	}
	if err == nil {
		res.Failed++
	}
	return err
}

// ensureSchedule recreates a Pending task's schedule if it is missing,
// with the same token.
func (r *Reconciler) ensureSchedule(ctx context.Context, t campaign.SendTask, res *Result) error {
	req := campaign.ScheduleFor(t, r.cfg.Target)
	var exists bool
	err := r.call(ctx, func() (err error) { exists, err = r.scheduler.Exists(ctx, req.GroupName, req.Name); return err })
	if err != nil || exists {
		return err
	}
	err = r.call(ctx, func() error { return r.scheduler.Create(ctx, req) })
	if err != nil && !errors.Is(err, campaign.ErrScheduleExists) {
		return err
	}
	res.Recreated++
	return nil
}

func (r *Reconciler) deleteSchedule(ctx context.Context, t campaign.SendTask) error {
	err := r.call(ctx, func() error { return r.scheduler.Delete(ctx, r.cfg.Target.GroupName, campaign.ScheduleName(t.ID)) })
	if errors.Is(err, campaign.ErrScheduleNotFound) {
		return nil
	}
	return err
}

// call paces a Scheduler call and retries its throttles.
func (r *Reconciler) call(ctx context.Context, f func() error) error {
	return r.backoff.RetryThrottled(ctx, r.clock, r.cfg.ThrottleTries, func() error {
		if err := r.limiter.Wait(ctx); err != nil {
			return err
		}
		return f()
	})
}
