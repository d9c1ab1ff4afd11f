// Package send is the core of the send function that every campaign
// schedule invokes with a task's id. It protects terminal states and
// never throws for them (throwing would only make the scheduler retry
// into its dead-letter queue):
//
//  1. a task already Finished, Failed, Cancelled or Suppressed, or missing, is skipped;
//     one Running under another attempt is skipped too (the reconciler
//     recovers it if that attempt died);
//  2. a fire before the task's send time sends nothing and returns
//     ErrTooEarly, so that Lambda's retry brings it back after the time;
//  3. a fire outside the campaign's windows (a late retry) is skipped: the
//     task stays Pending and the reconciler sends it in the next window;
//  4. with Deliverability, a recipient on the sender's suppression list
//     ends the task Suppressed and nothing is sent;
//  5. the task is claimed Pending → Running with a conditional write;
//  6. the email goes through the Sender with the task's idempotency key,
//     so a task recovered after a crash is not sent twice; with
//     Deliverability it carries a signed one-click unsubscribe URL (body
//     link and List-Unsubscribe headers);
//  7. it writes Finished with sentAt, or Failed with the error; an error
//     marked campaign.ErrRetryable releases the task to Pending and is
//     returned, so the scheduler's retries try again.
package send

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/suppress"
	"github.com/unschedule/unschedule/internal/campaign/unsubscribe"
)

// DefaultLease is how long a claim holds a task before the reconciler may
// recover it. It must exceed the send function's timeout.
const DefaultLease = 5 * time.Minute

// ErrTooEarly: the fire came before the task's send time; nothing was
// done. EventBridge Scheduler invokes "with 60 second precision" (a
// schedule at 1:00 runs between 1:00:00 and 1:00:59), and the planner puts
// every send on a whole minute, so a fire is never early in the scheduler's
// terms; this is the defence for one that is. It is an error, never a
// skip: the schedule deletes itself after this fire, and a fire inside the
// window would otherwise send before the planned time. Lambda retries an
// asynchronous invocation that failed a minute later, then two.
// https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
var ErrTooEarly = errors.New("fired before the send time")

// Outcome is what Handle did.
type Outcome string

// Outcomes of Handle.
const (
	Sent          Outcome = "sent"
	Skipped       Outcome = "skipped"        // terminal, missing, or held by another attempt
	OutsideWindow Outcome = "outside-window" // left Pending for the next window
	Cancelled     Outcome = "cancelled"      // its campaign was cancelled: cancelled now
	FailedSend    Outcome = "failed"         // written Failed with the error
	Released      Outcome = "released"       // a retryable error: back to Pending
	Suppressed    Outcome = "suppressed"     // the address is suppressed: nothing sent
)

// Deliverability is what a sender owes mailbox providers: honour the
// suppression list, and offer one-click unsubscribe in every message.
type Deliverability struct {
	// Sender is the From address: whose suppression list is read, and the
	// sender the unsubscribe tokens name.
	Sender       string
	Suppressions suppress.Store
	Links        unsubscribe.Links
}

// Worker sends one task per fire.
type Worker struct {
	tasks     campaign.Tasks
	campaigns campaign.Campaigns
	sender    campaign.Sender
	clock     campaign.Clock
	lease     time.Duration
	// Deliverability, when set, checks the suppression list before each
	// send and adds the unsubscribe link. Default (nil): neither.
	Deliverability *Deliverability
}

// New returns a Worker; lease 0 means DefaultLease.
func New(tasks campaign.Tasks, campaigns campaign.Campaigns, sender campaign.Sender, clock campaign.Clock, lease time.Duration) (*Worker, error) {
	if tasks == nil || campaigns == nil || sender == nil || clock == nil {
		return nil, errors.New("send: tasks, campaigns, sender and clock are required")
	}
	if lease <= 0 {
		lease = DefaultLease
	}
	return &Worker{tasks: tasks, campaigns: campaigns, sender: sender, clock: clock, lease: lease}, nil
}

// Handle runs one fire. It returns an error only when a retry may help.
func (w *Worker) Handle(ctx context.Context, e campaign.FireEvent) (Outcome, error) {
	k := campaign.Key(e)
	t, err := w.tasks.Get(ctx, k)
	if errors.Is(err, campaign.ErrNotFound) {
		return Skipped, nil
	}
	if err != nil {
		return "", fmt.Errorf("send %s: %w", e.TaskID, err)
	}
	if t.State != campaign.Pending {
		return Skipped, nil
	}
	c, err := w.campaigns.Campaign(ctx, e.CampaignID)
	if errors.Is(err, campaign.ErrNotFound) {
		return Skipped, nil
	}
	if err != nil {
		return "", fmt.Errorf("send %s: %w", e.TaskID, err)
	}
	now := w.clock.Now()
	if c.Status == campaign.CampaignCancelled {
		next, err := campaign.Cancel(t, "campaign cancelled", now)
		if err == nil {
			err = w.tasks.Replace(ctx, t, next)
		}
		if err != nil && !errors.Is(err, campaign.ErrConditionFailed) {
			return "", fmt.Errorf("send %s: cancel: %w", e.TaskID, err)
		}
		return Cancelled, nil
	}
	if now.Before(t.SendAt) {
		return "", fmt.Errorf("send %s: planned %s, %s early: %w", e.TaskID, t.SendAt.UTC().Format(time.RFC3339), t.SendAt.Sub(now), ErrTooEarly)
	}
	if ok, err := c.Rules.Allows(now); err != nil || !ok {
		return OutsideWindow, nil // an invalid stored plan also sends nothing
	}
	var unsubscribeURL string
	if d := w.Deliverability; d != nil {
		entry, found, err := d.Suppressions.Get(ctx, d.Sender, t.Email)
		if err != nil {
			return "", fmt.Errorf("send %s: suppression list: %w", e.TaskID, err)
		}
		if found {
			next, err := campaign.Suppress(t, "the address is on the sender's suppression list ("+string(entry.Reason)+")", now)
			if err == nil {
				err = w.tasks.Replace(ctx, t, next)
			}
			if errors.Is(err, campaign.ErrConditionFailed) {
				return Skipped, nil // another fire moved it first
			}
			if err != nil {
				return "", fmt.Errorf("send %s: suppress: %w", e.TaskID, err)
			}
			return Suppressed, nil
		}
		if unsubscribeURL, err = d.Links.URL(ctx, unsubscribe.Claims{Sender: d.Sender, Address: t.Email, Campaign: c.ID}); err != nil {
			return "", fmt.Errorf("send %s: unsubscribe link: %w", e.TaskID, err)
		}
	}
	claimed, err := w.tasks.Claim(ctx, k, t.SendAt, now, w.lease)
	if errors.Is(err, campaign.ErrConditionFailed) {
		return Skipped, nil // another fire claimed it first, or it changed
	}
	if err != nil {
		return "", fmt.Errorf("send %s: claim: %w", e.TaskID, err)
	}
	m := campaign.Message{IdempotencyKey: claimed.IdempotencyKey(), To: claimed.Email, Subject: claimed.Subject, Body: c.Body}
	if unsubscribeURL != "" {
		m.Body, m.UnsubscribeURL = unsubscribe.Footer(m.Body, unsubscribeURL), unsubscribeURL
	}
	r, sendErr := w.sender.Send(ctx, m)
	now = w.clock.Now()
	var next campaign.SendTask
	out := Sent
	switch {
	case sendErr == nil:
		next, err = campaign.Finish(claimed, r.SentAt, r.MessageID, now)
	case errors.Is(sendErr, campaign.ErrRetryable):
		next, err = campaign.Release(claimed, now)
		out = Released
	default:
		next, err = campaign.Fail(claimed, sendErr.Error(), now)
		out = FailedSend
	}
	if err == nil {
		err = w.tasks.Replace(ctx, claimed, next)
	}
	if err != nil {
		// The reconciler finishes or re-queues it after the lease.
		return "", fmt.Errorf("send %s: record %s: %w", e.TaskID, out, err)
	}
	if out == Released {
		return out, fmt.Errorf("send %s: %w", e.TaskID, sendErr)
	}
	return out, nil
}
