// Package fire is what happens at an item's due time, for any
// contract.Schema: claim the item, deliver its payload to the target,
// record the delivery. It is the one implementation of the contract's
// claim rules: the firing function runs it with any table's target, the
// to-do app's notify function included (task.Firer is the to-do app's
// composition). Plain Go: the store and the target are ports.
package fire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/logfield"
)

// ErrConditionFailed is what a Store returns when a conditional write's
// condition does not hold (the write changed nothing). Test with
// errors.Is.
var ErrConditionFailed = errors.New("condition failed")

// ErrInProgress: another attempt holds the right to deliver the item and
// has not recorded a delivery. Retry later: the claim lapses after the
// lease, so a retry takes over from an attempt that crashed.
var ErrInProgress = errors.New("delivery in progress elsewhere")

// ErrTooEarly: the firing came before the payload's due (or reminder)
// time. Nothing ran and nothing changed: retry it. It is an error, not a
// skip, because the one-off schedule that brought it deletes itself after
// this invocation, so a success would be the item's last firing; Lambda's
// retry brings it back after the due time.
// See docs/decisions/scheduler-whole-minute.md.
// https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
var ErrTooEarly = errors.New("fired before its due time")

// Store is the item store, as the contract's conditional writes see it.
type Store interface {
	// Claim applies Schema.Claim for the payload's key and due time at
	// now; ErrConditionFailed when the item is not claimable (missing
	// included).
	Claim(ctx context.Context, p contract.Payload, now time.Time) error
	// TakeOver applies Schema.TakeOver; ErrConditionFailed otherwise.
	TakeOver(ctx context.Context, p contract.Payload, now time.Time, lease time.Duration) error
	// MarkDelivered applies Schema.MarkDelivered; ErrConditionFailed
	// otherwise.
	MarkDelivered(ctx context.Context, k contract.Key, at time.Time) error
	// Get reads the item with a consistent read; found is false when
	// there is none.
	Get(ctx context.Context, k contract.Key) (it contract.Item, found bool, err error)
}

// Deliverer runs the target with the payload. An error means the target
// did not run (or may not have): the firing is retried.
type Deliverer interface {
	Deliver(ctx context.Context, p contract.Payload) error
}

// RecordingDeliverer is a Deliverer that may record the delivery itself,
// with its own write of the schema's MarkDelivered (the to-do app's
// target records it together with its index attributes). When it
// reports recorded, Fire writes no second record: that write could only
// fail its condition, and a failed conditional write still costs a write.
// Only a target running in the firing process can report it.
type RecordingDeliverer interface {
	Deliverer
	DeliverAndRecord(ctx context.Context, p contract.Payload) (recorded bool, err error)
}

// DeliverFunc adapts a function to Deliverer.
type DeliverFunc func(ctx context.Context, p contract.Payload) error

// Deliver implements Deliverer.
func (f DeliverFunc) Deliver(ctx context.Context, p contract.Payload) error { return f(ctx, p) }

// Outcome says what Fire did.
type Outcome string

// Outcomes of Fire.
const (
	// Fired: the claim moved the item to its fired state and the target ran.
	Fired Outcome = "fired"
	// Redelivered: an earlier attempt claimed the item and did not record
	// a delivery; this one took the claim over and ran the target.
	Redelivered Outcome = "redelivered"
	// Skipped: the item is gone, not armed for this due time, or its
	// target already ran. Nothing ran.
	Skipped Outcome = "skipped"
)

// DefaultLease is how long an attempt holds the right to run the target
// before a retry may take it over. Keep it longer than any one attempt
// (the firing function's timeout is 10 s by default).
const DefaultLease = 60 * time.Second

// Core fires items of one schema.
type Core struct {
	schema contract.Schema
	store  Store
	now    func() time.Time
	lease  time.Duration
	log    *slog.Logger
}

// Config configures a Core.
type Config struct {
	Schema contract.Schema
	Store  Store
	// Now tells the time. Default: time.Now.
	Now func() time.Time
	// Lease: see DefaultLease (the default).
	Lease time.Duration
	// Log defaults to slog.Default().
	Log *slog.Logger
}

// New checks its config and returns a Core.
func New(c Config) (*Core, error) {
	if c.Store == nil {
		return nil, errors.New("fire: a Store is required")
	}
	if err := c.Schema.Validate(); err != nil {
		return nil, fmt.Errorf("fire: %w", err)
	}
	if c.Now == nil {
		c.Now = clock.System{}.Now
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return &Core{schema: c.Schema, store: c.Store, now: c.Now, lease: c.Lease, log: c.Log}, nil
}

// Schema is the schema the core fires.
func (c *Core) Schema() contract.Schema { return c.schema }

// Fire runs the target of the item the payload names, at most once per
// claim, and trusts nothing: the conditional claim (armed, same due time)
// decides, and only an item that this claim fired, or that an earlier
// attempt fired without recording its delivery, reaches the target.
//
// The claim (ClaimAtAttr) guards delivery. A later attempt that finds the
// item fired for this due time and not delivered takes it over (TakeOver)
// only once the claim is older than the lease; while it is younger, Fire
// returns an error wrapping ErrInProgress, so two concurrent firings do
// not both deliver, and a retry (never a skip) covers a holder that crashed.
//
// Any error means "retry me": the delivery failed, the claim is held
// elsewhere, the firing came before the due time (ErrTooEarly: nothing
// ran), or the store failed.
//
// The one window for a duplicate is an attempt that delivered and then
// did not record it (a crash after Deliver, a failed MarkDelivered, a
// delivery slower than the lease): a later attempt runs the target again.
func (c *Core) Fire(ctx context.Context, p contract.Payload, d Deliverer) (Outcome, error) {
	now := c.now().UTC()
	p.Due = p.Due.UTC().Truncate(time.Second)
	if now.Before(p.Due) {
		return "", early(p.Key, p.Due, now)
	}
	now = now.Truncate(time.Second)
	outcome := Fired
	err := c.store.Claim(ctx, p, now)
	switch {
	case err == nil:
	case errors.Is(err, ErrConditionFailed):
		open, err := c.undelivered(ctx, p)
		switch {
		case err != nil:
			return "", err
		case !open:
			return Skipped, nil
		}
		if err := c.store.TakeOver(ctx, p, now, c.lease); err != nil {
			if !errors.Is(err, ErrConditionFailed) {
				return "", fmt.Errorf("fire: take over: %w", err)
			}
			// Delivered meanwhile, or another attempt holds the claim.
			open, err := c.undelivered(ctx, p)
			switch {
			case err != nil:
				return "", err
			case !open:
				return Skipped, nil
			}
			return "", fmt.Errorf("fire %s: %w", p.Key, ErrInProgress)
		}
		outcome = Redelivered
	default:
		return "", fmt.Errorf("fire: claim: %w", err)
	}
	recorded, err := deliver(ctx, d, p)
	if err != nil {
		return "", fmt.Errorf("fire: deliver: %w", err)
	}
	if recorded {
		return outcome, nil
	}
	if err := c.store.MarkDelivered(ctx, p.Key, c.now().UTC().Truncate(time.Second)); err != nil &&
		!errors.Is(err, ErrConditionFailed) {
		// Delivered but not recorded. Not returned: a retry would deliver
		// again at once. This is the duplicate window, logged so it is
		// visible.
		c.log.ErrorContext(ctx, "delivered but not recorded", logfield.Key, p.Key.String(), "error", err.Error())
	}
	return outcome, nil
}

// deliver runs d, and says whether d recorded the delivery itself.
func deliver(ctx context.Context, d Deliverer, p contract.Payload) (recorded bool, err error) {
	if rd, ok := d.(RecordingDeliverer); ok {
		return rd.DeliverAndRecord(ctx, p)
	}
	return false, d.Deliver(ctx, p)
}

// early is the error of a firing at now before its time at.
func early(k contract.Key, at, now time.Time) error {
	return fmt.Errorf("fire %s: due %s, %s early: %w", k, contract.FormatTime(at), at.Sub(now), ErrTooEarly)
}

// undelivered re-reads the item after a failed conditional write: it is
// open when the item is fired for this due time with no delivery
// recorded, the one state in which this attempt may still deliver.
func (c *Core) undelivered(ctx context.Context, p contract.Payload) (bool, error) {
	it, found, err := c.store.Get(ctx, p.Key)
	if err != nil {
		return false, fmt.Errorf("fire: read item: %w", err)
	}
	return found && c.schema.Undelivered(it, p.Due), nil
}

// WithStore returns a copy of c on another store of the same schema (a
// store that keeps what one attempt read, for instance).
func (c *Core) WithStore(s Store) *Core {
	cp := *c
	cp.store = s
	return &cp
}

// ReminderStore is the item store as a reminder's firing sees it.
type ReminderStore interface {
	// RemindClaim applies Schema.RemindClaim for the payload's key, due
	// time and reminder time at now; ErrConditionFailed when it does not
	// hold (missing item included).
	RemindClaim(ctx context.Context, p contract.Payload, now time.Time, lease time.Duration) error
	// MarkReminded applies Schema.MarkReminded; ErrConditionFailed
	// otherwise.
	MarkReminded(ctx context.Context, p contract.Payload) error
	// Get reads the item with a consistent read; found is false when
	// there is none.
	Get(ctx context.Context, k contract.Key) (it contract.Item, found bool, err error)
}

// Remind delivers the reminder the payload names (p.Remind), at most once
// per claim, with the same rules as Fire but without a state change: the
// conditional claim (armed, same due time, same reminder time, that
// reminder not delivered, no live claim) decides, then the deliverer
// runs, then the delivery is recorded (MarkReminded). A reminder of an
// item that was completed, removed, fired, or moved (due time or
// reminder time changed) is Skipped. A firing before the reminder time
// is an error wrapping ErrTooEarly, as Fire's. When the claim fails while the
// reminder is still open, another attempt holds it: an error wrapping
// ErrInProgress (retry later; the claim lapses after the lease). The one
// window for a duplicate is Fire's: delivered, then not recorded.
func (c *Core) Remind(ctx context.Context, p contract.Payload, store ReminderStore, d Deliverer) (Outcome, error) {
	if !c.schema.Reminds() {
		return "", errors.New("fire: Remind: the schema has no reminders (RemindAttr)")
	}
	now := c.now().UTC()
	p.Due = p.Due.UTC().Truncate(time.Second)
	p.Remind = p.Remind.UTC().Truncate(time.Second)
	if p.Remind.IsZero() {
		return "", errors.New("fire: Remind: the payload has no reminder time")
	}
	if now.Before(p.Remind) {
		return "", early(p.Key, p.Remind, now)
	}
	now = now.Truncate(time.Second)
	if err := store.RemindClaim(ctx, p, now, c.lease); err != nil {
		if !errors.Is(err, ErrConditionFailed) {
			return "", fmt.Errorf("fire: remind claim: %w", err)
		}
		it, found, err := store.Get(ctx, p.Key)
		switch {
		case err != nil:
			return "", fmt.Errorf("fire: read item: %w", err)
		case !found || !c.schema.ReminderOpen(it, p.Due, p.Remind):
			return Skipped, nil
		}
		return "", fmt.Errorf("remind %s: %w", p.Key, ErrInProgress)
	}
	if err := d.Deliver(ctx, p); err != nil {
		return "", fmt.Errorf("fire: deliver reminder: %w", err)
	}
	if err := store.MarkReminded(ctx, p); err != nil && !errors.Is(err, ErrConditionFailed) {
		c.log.ErrorContext(ctx, "reminder delivered but not recorded", logfield.Key, p.Key.String(), "error", err.Error())
	}
	return Fired, nil
}

// Firing is a Core bound to its target: what a timer's firing runs, and
// what the reconciler runs for an overdue item.
type Firing struct {
	Core   *Core
	Target Deliverer
}

// Fire runs Core.Fire with the target.
func (f Firing) Fire(ctx context.Context, p contract.Payload) (Outcome, error) {
	return f.Core.Fire(ctx, p, f.Target)
}

// Lease is how long an attempt holds the right to run the target.
func (c *Core) Lease() time.Duration { return c.lease }
