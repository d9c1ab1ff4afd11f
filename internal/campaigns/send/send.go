// Package send is the send function's target: what the firing core
// (fire.Core, on campaign.TaskSchema) runs once it claimed a send task.
// The core claims (Pending at the send time → Running, leased), takes a
// stale claim over, and records the delivery; this package decides
// whether a fire may send, sends, and records the outcome. It protects
// terminal states and never throws for them (throwing would only make
// the scheduler retry into its dead-letter queue):
//
//  1. a task already Finished, Failed, Cancelled or Suppressed, or missing, is skipped;
//     one Running under another live claim is skipped too (the reconciler
//     recovers it if that attempt died);
//  2. a campaign whose owner is no longer a sender (campaign.SenderCheck:
//     removed from the sender group, disabled, deleted, address not
//     proven) is cancelled (campaign.Gate, reason senderRemoved), and so
//     is the task, as for any cancelled campaign: nothing is sent;
//  3. a fire before the task's send time sends nothing and returns
//     ErrTooEarly, so that Lambda's retry brings it back after the time;
//  4. a fire outside the campaign's windows (a late retry) is skipped: the
//     task stays Pending and the reconciler sends it in the next window;
//  5. with Deliverability, a recipient on the suppression list
//     ends the task Suppressed and nothing is sent;
//  6. the core claims the task (the contract's claim), or takes over a
//     Running claim whose lease passed and that recorded no send;
//  7. the email goes through the Sender with the task's idempotency key,
//     so a task recovered after a crash is not sent twice; with
//     Deliverability it carries a signed one-click unsubscribe URL (body
//     link and List-Unsubscribe headers);
//  8. the core records the delivery (Running → Finished with sentAt and
//     the receipt, conditioned on the claim); a send error writes Failed; an error
//     marked campaign.ErrRetryable releases the task to Pending and is
//     returned, so the scheduler's retries try again.
package send

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
	"github.com/unschedule/unschedule/internal/core/fire"
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
	// Sender is the From address: the sender the unsubscribe tokens name.
	Sender string
	// Suppressions is the construct's suppression list, read before
	// each send whatever the From address.
	Suppressions suppress.Store
	Links        unsubscribe.Links
}

// Worker sends one task per fire: the firing core with the send target.
type Worker struct {
	tasks     campaign.Tasks
	campaigns campaign.Campaigns
	sender    campaign.Sender
	owners    campaign.SenderCheck
	clock     campaign.Clock
	core      *fire.Core
	// Deliverability, when set, checks the suppression list before each
	// send and adds the unsubscribe link. Default (nil): neither.
	Deliverability *Deliverability
}

// New returns a Worker that sends only while a campaign's owner passes
// owners (wrap it in campaign.CachedSenderCheck); lease 0 means
// DefaultLease.
func New(tasks campaign.Tasks, campaigns campaign.Campaigns, sender campaign.Sender, owners campaign.SenderCheck, clock campaign.Clock, lease time.Duration) (*Worker, error) {
	if tasks == nil || campaigns == nil || sender == nil || owners == nil || clock == nil {
		return nil, errors.New("send: tasks, campaigns, sender, sender check and clock are required")
	}
	if lease <= 0 {
		lease = DefaultLease
	}
	w := &Worker{tasks: tasks, campaigns: campaigns, sender: sender, owners: owners, clock: clock}
	core, err := fire.New(fire.Config{Schema: campaign.TaskSchema, Store: &attempt{w: w, lease: lease}, Now: clock.Now, Lease: lease})
	if err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	w.core = core
	return w, nil
}

// Handle runs one fire. It returns an error only when a retry may help.
// A fire armed for another send time than the task's (e.Due set: a
// schedule left over from before a retime) is skipped, as the contract's
// claim skips it; one without (the reconciler's dispatch, an older
// schedule's event) fires the task at its own time.
func (w *Worker) Handle(ctx context.Context, e campaign.FireEvent) (Outcome, error) {
	t, err := w.tasks.Get(ctx, campaign.Key{CampaignID: e.CampaignID, TaskID: e.TaskID})
	if errors.Is(err, campaign.ErrNotFound) {
		return Skipped, nil
	}
	if err != nil {
		return "", fmt.Errorf("send %s: %w", e.TaskID, err)
	}
	if t.State != campaign.Pending && t.State != campaign.Running {
		return Skipped, nil
	}
	if !e.Due.IsZero() && !e.Due.Equal(t.Payload().Due) {
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
	if c.Status != campaign.CampaignCancelled {
		ok, err := campaign.Gate(ctx, w.owners, w.campaigns, c, now)
		if err != nil {
			return "", fmt.Errorf("send %s: %w", e.TaskID, err)
		}
		if !ok {
			c.Status = campaign.CampaignCancelled // as Gate just wrote, or a cancel before it
		}
	}
	if c.Status == campaign.CampaignCancelled {
		if t.State != campaign.Pending {
			return Skipped, nil // the reconciler re-queues it, then cancels it
		}
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
		entry, found, err := d.Suppressions.Get(ctx, t.Email)
		if err != nil {
			return "", fmt.Errorf("send %s: suppression list: %w", e.TaskID, err)
		}
		if found && t.State != campaign.Pending {
			return Skipped, nil // the reconciler re-queues it; the next fire suppresses it
		}
		if found {
			next, err := campaign.Suppress(t, "the address is on the suppression list ("+string(entry.Reason)+")", now)
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
	a := &attempt{w: w, body: c.Body, unsubscribeURL: unsubscribeURL, out: Sent}
	out, err := w.core.WithStore(a).Fire(ctx, t.Payload(), a)
	switch {
	case errors.Is(err, fire.ErrInProgress):
		return Skipped, nil // held by a live claim: the reconciler recovers it if that attempt died
	case errors.Is(err, fire.ErrTooEarly):
		return "", fmt.Errorf("send %s: %w (%w)", e.TaskID, ErrTooEarly, err)
	case errors.Is(err, errFailed):
		return FailedSend, nil
	case a.out == Released && err != nil:
		return Released, fmt.Errorf("send %s: %w", e.TaskID, err)
	case err != nil:
		return "", fmt.Errorf("send %s: %w", e.TaskID, err)
	case out == fire.Skipped:
		return Skipped, nil // another fire claimed it first, or it changed
	case a.markErr != nil:
		// Sent, not recorded: the reconciler finishes it with the
		// sender's receipt after the lease.
		return "", fmt.Errorf("send %s: record %s: %w", e.TaskID, Sent, a.markErr)
	}
	return Sent, nil
}

// errFailed: the send failed for good and the task is written Failed.
var errFailed = errors.New("send failed; task written Failed")

// attempt is one fire's view of the task for the core (fire.Store, over
// campaign.Tasks) and its target (fire.Deliverer): it keeps the task it
// claimed and the receipt it got, so that the delivery mark records them.
type attempt struct {
	w              *Worker
	lease          time.Duration
	body           string
	unsubscribeURL string
	claimed        campaign.SendTask
	receipt        campaign.Receipt
	out            Outcome
	markErr        error
}

func (a *attempt) taskKey(k contract.Key) (campaign.Key, error) { return campaign.KeyOf(k) }

// conditional maps the campaign port's refused condition to the core's.
func conditional(err error) error {
	if errors.Is(err, campaign.ErrConditionFailed) {
		return fmt.Errorf("%w (%w)", fire.ErrConditionFailed, err)
	}
	return err
}

// Claim implements fire.Store: the contract's claim, through the port.
func (a *attempt) Claim(ctx context.Context, p contract.Payload, now time.Time) error {
	k, err := a.taskKey(p.Key)
	if err != nil {
		return err
	}
	a.claimed, err = a.w.tasks.Claim(ctx, k, p.Due, now, a.w.core.Lease())
	return conditional(err)
}

// TakeOver implements fire.Store: the contract's take-over.
func (a *attempt) TakeOver(ctx context.Context, p contract.Payload, now time.Time, lease time.Duration) error {
	k, err := a.taskKey(p.Key)
	if err != nil {
		return err
	}
	a.claimed, err = a.w.tasks.TakeOver(ctx, k, p.Due, now, lease)
	return conditional(err)
}

// MarkDelivered implements fire.Store: Running → Finished with the
// receipt (sentAt, the contract's delivery mark), only if the claim is
// still this attempt's (Replace's condition: the same state and attempt,
// so not sent yet). A failure is kept for Handle to report.
func (a *attempt) MarkDelivered(ctx context.Context, _ contract.Key, at time.Time) error {
	next, err := campaign.Finish(a.claimed, a.receipt.SentAt, a.receipt.MessageID, at)
	if err == nil {
		err = a.w.tasks.Replace(ctx, a.claimed, next)
	}
	if err != nil {
		a.markErr = err
	}
	return conditional(err)
}

// Get implements fire.Store: the contract's view of the stored task.
func (a *attempt) Get(ctx context.Context, k contract.Key) (contract.Item, bool, error) {
	tk, err := a.taskKey(k)
	if err != nil {
		return contract.Item{}, false, err
	}
	t, err := a.w.tasks.Get(ctx, tk)
	if errors.Is(err, campaign.ErrNotFound) {
		return contract.Item{}, false, nil
	}
	if err != nil {
		return contract.Item{}, false, err
	}
	return t.Item(), true, nil
}

// Deliver implements fire.Deliverer: the send of the claimed task, with
// its idempotency key, so a taken-over task is not sent twice. A
// retryable error releases the task to Pending and is returned (the
// scheduler's retry sends it); any other writes it Failed.
func (a *attempt) Deliver(ctx context.Context, _ contract.Payload) error {
	t := a.claimed
	m := campaign.Message{IdempotencyKey: t.IdempotencyKey(), To: t.Email, Subject: t.Subject, Body: a.body}
	if a.unsubscribeURL != "" {
		m.Body, m.UnsubscribeURL = unsubscribe.Footer(m.Body, a.unsubscribeURL), a.unsubscribeURL
	}
	r, sendErr := a.w.sender.Send(ctx, m)
	if sendErr == nil {
		a.receipt = r
		return nil
	}
	now := a.w.clock.Now()
	var next campaign.SendTask
	var err error
	if errors.Is(sendErr, campaign.ErrRetryable) {
		a.out = Released
		next, err = campaign.Release(t, now)
	} else {
		a.out = FailedSend
		next, err = campaign.Fail(t, sendErr.Error(), now)
	}
	if err == nil {
		err = a.w.tasks.Replace(ctx, t, next)
	}
	if err != nil {
		// The reconciler finishes or re-queues it after the lease.
		err = fmt.Errorf("record %s: %w", a.out, err)
		a.out = ""
		return err
	}
	if a.out == FailedSend {
		return fmt.Errorf("%w: %w", errFailed, sendErr)
	}
	return sendErr
}
