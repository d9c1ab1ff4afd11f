package campaign

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// Defaults of Repair, and the core reconciler's settings for campaigns.
const (
	// RepairGrace is how long past its send time a Pending task may still
	// be waiting for its fire (the scheduler's retries included): the
	// core reconciler's Grace for send tasks.
	RepairGrace = 15 * time.Minute
	// DefaultMaxAttempts is how many claims a task gets before it is
	// Failed.
	DefaultMaxAttempts = 3
	// DefaultMaxRetimes is how many times an overdue task is moved to a
	// later window before it is Failed.
	DefaultMaxRetimes = 5
	// DefaultCheckAhead: only Pending tasks due within this much have
	// their schedule checked, so a pass makes Scheduler calls for the
	// tasks due soon, not for every future task (a later miss is caught
	// as overdue). One hour is two 30-minute passes.
	DefaultCheckAhead = time.Hour
)

// Repair is the campaign's rules for the core reconciler
// (reconcile.Policy over Items and Schedules):
//
//   - a campaign (not yet Completed or Cancelled) whose owner is no longer
//     a sender (Owners) is cancelled first (Gate, reason senderRemoved),
//     so its tasks are handled as a cancelled campaign's below;
//   - Pending, campaign cancelled: cancelled, its schedule deleted
//     (finishing a cancel that stopped midway); campaign still Draft:
//     left alone (no schedule is owed);
//   - Pending, due within CheckAhead: its schedule is checked (recreated
//     with the task's ClientToken when missing); due later: left;
//   - Pending, overdue (past the reconciler's Grace): handed to the send
//     function now (the Firer) if the campaign's windows allow a send
//     now, else moved to the next usable minute, where the reconciler
//     moves its schedule (a new ClientToken: SendTask.ClientToken); after
//     MaxAttempts claims or MaxRetimes moves it is Failed;
//   - Running, its lease passed (its attempt died): Finished with the
//     sender's recorded receipt if it was sent; otherwise back to
//     Pending and handled as above, or Failed after MaxAttempts.
//
// One Repair serves one reconciler: it caches campaigns for one run and
// counts what the run decided (Counts).
type Repair struct {
	Tasks     Tasks
	Campaigns Campaigns
	// Sender is read for receipts only (Sent): it never sends here.
	Sender Sender
	// Owners checks each campaign's owner once a run (and the check's
	// own cache).
	Owners SenderCheck
	Clock  Clock
	// MaxAttempts, MaxRetimes and CheckAhead: zero takes the default.
	MaxAttempts int
	MaxRetimes  int
	CheckAhead  time.Duration

	camps  map[string]Campaign
	counts RepairCounts
}

// RepairCounts is what the rules decided in one run.
type RepairCounts struct {
	Retimed   int // overdue outside the windows: moved to the next usable minute
	Finished  int // stale Running tasks that had been sent
	Requeued  int // stale Running tasks that had not
	Failed    int // given up after MaxAttempts claims or MaxRetimes moves
	Cancelled int // Pending tasks of cancelled campaigns
	// SenderRemoved counts campaigns cancelled because their owner is no
	// longer a sender.
	SenderRemoved int
}

var _ reconcile.RunPolicy = (*Repair)(nil)

// StartRun implements reconcile.RunPolicy: campaigns are read afresh
// and the counts restart.
func (r *Repair) StartRun(context.Context) {
	r.camps, r.counts = map[string]Campaign{}, RepairCounts{}
}

// Counts is what the rules decided since the run started.
func (r *Repair) Counts() RepairCounts { return r.counts }

func (r *Repair) maxAttempts() int { return orInt(r.MaxAttempts, DefaultMaxAttempts) }
func (r *Repair) maxRetimes() int  { return orInt(r.MaxRetimes, DefaultMaxRetimes) }

func orInt(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

func (r *Repair) campaign(ctx context.Context, id string) (Campaign, error) {
	if c, ok := r.camps[id]; ok {
		return c, nil
	}
	c, err := r.Campaigns.Campaign(ctx, id)
	if err != nil {
		return Campaign{}, fmt.Errorf("read campaign %s: %w", id, err)
	}
	if c.Status != CampaignCancelled && c.Status != Completed {
		ok, err := Gate(ctx, r.Owners, r.Campaigns, c, r.Clock.Now())
		if err != nil {
			return Campaign{}, err
		}
		if !ok {
			if c, err = r.Campaigns.Campaign(ctx, id); err != nil {
				return Campaign{}, fmt.Errorf("read campaign %s: %w", id, err)
			}
			r.counts.SenderRemoved++
		}
	}
	if r.camps == nil {
		r.camps = map[string]Campaign{}
	}
	r.camps[id] = c
	return c, nil
}

var (
	proceed = reconcile.Decision{Action: reconcile.Proceed}
	leave   = reconcile.Decision{Action: reconcile.Leave}
)

// Decide implements reconcile.Policy.
func (r *Repair) Decide(ctx context.Context, it reconcile.Item, why reconcile.Why) (reconcile.Decision, error) {
	k, err := KeyOf(it.Key)
	if err != nil {
		return leave, err
	}
	c, err := r.campaign(ctx, k.CampaignID)
	if err != nil {
		return leave, err
	}
	now := r.Clock.Now()
	if why == reconcile.Ahead && c.Status != CampaignCancelled {
		// No task read: the listing is enough to decide.
		switch {
		case c.Status == Draft, it.Due.After(now.Add(orDur(r.CheckAhead, DefaultCheckAhead))):
			return leave, nil
		}
		return proceed, nil
	}
	t, err := r.Tasks.Get(ctx, k)
	if errors.Is(err, ErrNotFound) {
		return leave, nil
	}
	if err != nil {
		return leave, fmt.Errorf("read task: %w", err)
	}
	switch {
	case why == reconcile.Stale:
		if !Stale(t, now) {
			return leave, nil // its attempt may still be at work
		}
		return r.recover(ctx, t, now)
	case t.State != Pending || c.Status == Draft:
		return leave, nil
	case c.Status == CampaignCancelled:
		return r.write(ctx, t, func() (SendTask, error) { return Cancel(t, "campaign cancelled", now) },
			reconcile.Withdrawn, "cancelled", &r.counts.Cancelled)
	case why == reconcile.Overdue:
		return r.overdue(ctx, c, t, now)
	}
	return proceed, nil
}

func orDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// recover settles a Running task whose attempt died.
func (r *Repair) recover(ctx context.Context, t SendTask, now time.Time) (reconcile.Decision, error) {
	rc, err := r.Sender.Sent(ctx, t.IdempotencyKey())
	switch {
	case err == nil:
		return r.write(ctx, t, func() (SendTask, error) { return Finish(t, rc.SentAt, rc.MessageID, now) },
			reconcile.Ended, "finished", &r.counts.Finished)
	case !errors.Is(err, ErrNotSent):
		return leave, fmt.Errorf("read receipt: %w", err)
	case t.Attempt >= r.maxAttempts():
		return r.fail(ctx, t, fmt.Sprintf("not sent after %d attempts", t.Attempt), now)
	}
	return r.write(ctx, t, func() (SendTask, error) { return Requeue(t, now) }, reconcile.Rearmed, "requeued", &r.counts.Requeued)
}

// overdue fires a Pending task whose fire was lost when the campaign's
// windows allow a send now, and moves it to the next usable minute when
// they do not.
func (r *Repair) overdue(ctx context.Context, c Campaign, t SendTask, now time.Time) (reconcile.Decision, error) {
	if t.Attempt >= r.maxAttempts() {
		return r.fail(ctx, t, fmt.Sprintf("not sent after %d attempts", t.Attempt), now)
	}
	ok, err := c.Rules.Allows(now)
	switch {
	case err != nil:
		return r.fail(ctx, t, "campaign schedule rules invalid: "+err.Error(), now)
	case ok:
		return reconcile.Decision{Action: reconcile.Proceed, Outcome: "dispatched"}, nil
	case t.Retimed >= r.maxRetimes():
		return r.fail(ctx, t, fmt.Sprintf("no fire after %d reschedules", t.Retimed), now)
	}
	at, err := c.Rules.NextUsable(now.Add(time.Minute))
	if err != nil {
		return r.fail(ctx, t, "no usable minute left: "+err.Error(), now)
	}
	return r.write(ctx, t, func() (SendTask, error) { return Retime(t, at.At, at.Local, now) }, reconcile.Moved, "retimed", &r.counts.Retimed)
}

func (r *Repair) fail(ctx context.Context, t SendTask, reason string, now time.Time) (reconcile.Decision, error) {
	return r.write(ctx, t, func() (SendTask, error) { return Fail(t, reason, now) }, reconcile.Ended, "failed", &r.counts.Failed)
}

// write replaces t with next (conditional on t's state and attempt) and
// counts it.
func (r *Repair) write(ctx context.Context, t SendTask, next func() (SendTask, error), a reconcile.Action, outcome string, n *int) (reconcile.Decision, error) {
	nt, err := next()
	if err == nil {
		err = r.Tasks.Replace(ctx, t, nt)
	}
	if err != nil {
		return leave, fmt.Errorf("%s: %w", outcome, err)
	}
	*n++
	return reconcile.Decision{Action: a, Outcome: outcome}, nil
}

// Dispatcher hands a task to the send function at once (an asynchronous
// invoke in AWS).
type Dispatcher interface {
	Dispatch(ctx context.Context, e FireEvent) error
}

// DispatchFirer is the core reconciler's Firer for send tasks: it hands
// the task to the send function, whose claim (fire.Core) decides, so the
// reconciler needs neither the sender nor its grants.
type DispatchFirer struct{ Dispatcher Dispatcher }

var _ reconcile.Firer = DispatchFirer{}

// Fire implements reconcile.Firer: fire.Fired once the send function has
// the event.
func (f DispatchFirer) Fire(ctx context.Context, p contract.Payload) (fire.Outcome, error) {
	k, err := KeyOf(p.Key)
	if err != nil {
		return "", err
	}
	if err := f.Dispatcher.Dispatch(ctx, FireEvent{CampaignID: k.CampaignID, TaskID: k.TaskID}); err != nil {
		return "", fmt.Errorf("dispatch %s: %w", k.TaskID, err)
	}
	return fire.Fired, nil
}
