package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/logfield"
)

// NotifyStore is the part of the task Store the notify target uses.
type NotifyStore interface {
	// Get reads one task with a consistent read.
	Get(ctx context.Context, userID, taskID string) (Task, error)
	// MarkNotified records the expiry notification, and takes the task out
	// of the table's pending indexes (see NotifyTarget.Notify).
	MarkNotified(ctx context.Context, userID, taskID string, at time.Time) error
}

// NotifyTarget is the to-do app's target: what the firing core runs once
// it has claimed a task's expiry or reminder, exactly as an adopter's
// target function. It knows only the payload the core delivers to any
// target (contract.Payload: the key, the due time, and the reminder time
// on a reminder's firing), so it reads the task and notifies its owner:
// the expiry notification, or the reminder before the deadline.
type NotifyTarget struct {
	tasks    NotifyStore
	notifier Notifier
	webURL   string
	now      func() time.Time
	log      *slog.Logger
}

var _ fire.Deliverer = (*NotifyTarget)(nil)

// NotifyConfig configures a NotifyTarget.
type NotifyConfig struct {
	// Tasks is the task store (required).
	Tasks NotifyStore
	// Notifier publishes (required).
	Notifier Notifier
	// WebURL is the web app's base URL, for the link in the message.
	// Default: "" (no link).
	WebURL string
	// Now tells the time. Default: time.Now.
	Now func() time.Time
	// Log defaults to slog.Default().
	Log *slog.Logger
}

// NewNotifyTarget checks its config and returns the target.
func NewNotifyTarget(c NotifyConfig) (*NotifyTarget, error) {
	if c.Tasks == nil || c.Notifier == nil {
		return nil, errors.New("task: NewNotifyTarget needs a task store and a Notifier")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return &NotifyTarget{tasks: c.Tasks, notifier: c.Notifier, webURL: strings.TrimRight(c.WebURL, "/"), now: c.Now,
		log: c.Log}, nil
}

// NotifyOutcome says what Notify did.
type NotifyOutcome string

// Outcomes of Notify.
const (
	// Notified: the message was published.
	Notified NotifyOutcome = "notified"
	// NotifyGone: the task was deleted after the claim. Nothing to tell.
	NotifyGone NotifyOutcome = "gone"
	// NotifyStale: the task no longer is what the claim was for (a
	// reminder's task was completed, expired or moved after its claim).
	// Sending would tell its owner something false.
	NotifyStale NotifyOutcome = "stale"
)

// Deliver implements fire.Deliverer: Notify, with only its error.
func (t *NotifyTarget) Deliver(ctx context.Context, p contract.Payload) error {
	_, err := t.Notify(ctx, p)
	return err
}

var _ fire.RecordingDeliverer = (*NotifyTarget)(nil)

// DeliverAndRecord implements fire.RecordingDeliverer: Notify, and
// whether its own record of an expiry notification (MarkNotified, the
// schema's MarkDelivered with the index attributes) was written, so the
// core in the same process writes no second one.
func (t *NotifyTarget) DeliverAndRecord(ctx context.Context, p contract.Payload) (bool, error) {
	out, err := t.notify(ctx, p)
	return out == notifiedAndRecorded, err
}

// Notify publishes the notification the payload asks for. The core calls
// it only after its claim held, so the task was, at the claim, Expired for
// p.Due (an expiry) or Pending for p.Due with its reminder at p.Remind (a
// reminder, contract.Payload.IsReminder). The read comes after the claim:
// a task deleted meanwhile, or a reminder's task changed meanwhile, is
// not notified, and nil is returned, so the core records the firing as
// delivered instead of retrying something that can no longer be sent
// (through the API an Expired task changes only by deletion; a task no
// longer Expired was rewritten by another writer). An error
// (the read or the publish failed) means "retry me": the core does not
// record the delivery.
func (t *NotifyTarget) Notify(ctx context.Context, p contract.Payload) (NotifyOutcome, error) {
	out, err := t.notify(ctx, p)
	if out == notifiedAndRecorded {
		out = Notified
	}
	return out, err
}

// notifiedAndRecorded is notify's Notified whose record was written.
const notifiedAndRecorded NotifyOutcome = "notified and recorded"

func (t *NotifyTarget) notify(ctx context.Context, p contract.Payload) (NotifyOutcome, error) {
	cur, err := t.tasks.Get(ctx, p.Key.Partition, p.Key.Sort)
	switch {
	case errors.Is(err, ErrNotFound):
		t.log.InfoContext(ctx, "task gone before its notification: nothing sent", logfield.Key, p.Key.String())
		return NotifyGone, nil
	case err != nil:
		return "", fmt.Errorf("notify: read task %s: %w", p.Key.Sort, err)
	}
	n := Notification{UserID: cur.UserID, TaskID: cur.TaskID, Title: cur.Title, Description: cur.Description,
		DueAt: cur.DueAt, Link: t.link(cur.TaskID)}
	if p.IsReminder() {
		if !stillReminds(cur, p) {
			t.log.InfoContext(ctx, "task changed before its reminder: nothing sent", logfield.Key, p.Key.String(),
				"status", string(cur.Status))
			return NotifyStale, nil
		}
		n.Reminder = cur.Reminder.Or()
		if err := t.notifier.Publish(ctx, n); err != nil {
			return "", fmt.Errorf("publish reminder: %w", err)
		}
		return Notified, nil
	}
	if cur.Status != StatusExpired {
		// Made Pending again (or Done) after the claim by a writer other
		// than the API: there is no expiry to tell. The deadline is not
		// compared: the claim, the core's, is the gate for that.
		t.log.WarnContext(ctx, "task is no longer expired: nothing sent", logfield.Key, p.Key.String(),
			"status", string(cur.Status), "dueAt", FormatTime(cur.DueAt))
		return NotifyStale, nil
	}
	if err := t.notifier.Publish(ctx, n); err != nil {
		return "", fmt.Errorf("publish: %w", err)
	}
	if t.settle(ctx, cur) {
		return notifiedAndRecorded, nil
	}
	return Notified, nil
}

// settle records a published expiry notification with the task store's
// own write (Store.MarkNotified), before the core records the delivery.
// The core's claim on the task table is the contract's, which knows
// nothing of the table's sparse indexes: this write takes the task out of
// them (the pending index the reconciler reads, and the per-user count of
// Pending tasks), and the core's own record then finds the delivery
// recorded and changes nothing. A failure is only logged: the message is
// out, and failing would send it again; the core still records the
// delivery, and the task stays in the indexes. It reports whether the
// record was written (then a core in the same process, DeliverAndRecord,
// writes none of its own).
func (t *NotifyTarget) settle(ctx context.Context, cur Task) bool {
	err := t.tasks.MarkNotified(ctx, cur.UserID, cur.TaskID, t.now().UTC().Truncate(time.Second))
	if err != nil && !errors.Is(err, ErrConditionFailed) {
		t.log.ErrorContext(ctx, "notified, but recording it in the task store failed", logfield.Key, Key(cur.UserID, cur.TaskID).String(),
			"error", err.Error())
	}
	return err == nil
}

// stillReminds: the task is Pending with the deadline and reminder time
// the reminder's payload names.
func stillReminds(t Task, p contract.Payload) bool {
	return t.Status == StatusPending && sameSecond(t.DueAt, p.Due) && sameSecond(t.RemindAt, p.Remind)
}

func sameSecond(a, b time.Time) bool {
	return a.UTC().Truncate(time.Second).Equal(b.UTC().Truncate(time.Second))
}

func (t *NotifyTarget) link(taskID string) string {
	if t.webURL == "" {
		return ""
	}
	return t.webURL + "/#/tasks/" + taskID
}

// Firer fires the to-do app's tasks: the firing core over the task table,
// delivering to a target (the notify Lambda function in AWS, a
// NotifyTarget in process). It is the composition every caller uses: the
// expiry function's, the reconciler's overdue sweep, the pipeline, the
// simulation and `make dev`.
type Firer struct {
	core      *fire.Core
	reminders fire.ReminderStore
	target    fire.Deliverer
}

// NewFirer returns the firer: core fires expiries, reminders is the store
// a reminder's claim goes through, target runs after each claim.
func NewFirer(core *fire.Core, reminders fire.ReminderStore, target fire.Deliverer) (*Firer, error) {
	if core == nil || reminders == nil || target == nil {
		return nil, errors.New("task: NewFirer needs a core, a reminder store and a target")
	}
	return &Firer{core: core, reminders: reminders, target: target}, nil
}

// InProcessConfig configures InProcess.
type InProcessConfig struct {
	// Store is the task store (required).
	Store Store
	// Notifier publishes (required).
	Notifier Notifier
	// WebURL is the web app's base URL, for links. Default: "" (none).
	WebURL string
	// Clock defaults to the wall clock.
	Clock Clock
	// Lease: see DefaultNotifyLease (the default).
	Lease time.Duration
	// Log defaults to slog.Default().
	Log *slog.Logger
}

// InProcess is the Firer of a task store in one process (tests, the
// simulation, `make dev`): the firing core over the store (Items),
// delivering to a NotifyTarget on the same store, as the to-do app's
// firing function (lambdas/todofire) runs them in AWS.
func InProcess(c InProcessConfig) (*Firer, error) {
	if c.Store == nil {
		return nil, errors.New("task: InProcess needs a Store")
	}
	if c.Clock == nil {
		c.Clock = clock.System{}
	}
	now := func() time.Time { return c.Clock.Now().UTC() }
	// As the to-do app's firing function: the target takes the task its
	// claim returned (ClaimCache) instead of reading it again.
	cache := NewClaimCache()
	items := cache.Items(c.Store)
	core, err := fire.New(fire.Config{Schema: Schema, Store: items, Now: now, Lease: c.Lease, Log: c.Log})
	if err != nil {
		return nil, err
	}
	target, err := NewNotifyTarget(NotifyConfig{Tasks: cache.Tasks(c.Store), Notifier: c.Notifier, WebURL: c.WebURL, Now: now, Log: c.Log})
	if err != nil {
		return nil, err
	}
	return NewFirer(core, items, target)
}

// ExpireRequest is what a schedule (or the reconciler) asks to expire.
type ExpireRequest struct {
	UserID string
	TaskID string
	// DueAt is the deadline the schedule was made for.
	DueAt time.Time
}

// ExpireOutcome says what Expire did.
type ExpireOutcome string

// Outcomes of Expire.
const (
	// Expired: the task moved to Expired and its target ran.
	Expired ExpireOutcome = "expired"
	// Renotified: an earlier attempt expired the task but did not record a
	// delivery; this one ran the target.
	Renotified ExpireOutcome = "renotified"
	// Skipped: the task is gone, not Pending, has another deadline, or was
	// already delivered. Nothing ran.
	Skipped ExpireOutcome = "skipped"
)

var expireOutcomes = map[fire.Outcome]ExpireOutcome{
	fire.Fired: Expired, fire.Redelivered: Renotified, fire.Skipped: Skipped,
}

// Expire is the guarantee of the whole design: fire.Core.Fire with the
// to-do app's schema, whose doc comment is the spec. The conditional
// write (still Pending, same deadline) decides, and only a task that this
// write expired, or that an earlier attempt expired without recording its
// delivery, reaches the target. The claim is NotifyClaimAt, its record
// NotifiedAt.
//
// An error means "retry me" (errors.Is ErrNotifyInProgress when another
// attempt holds the claim, ErrTooEarly when the deadline is still ahead).
// A task whose delivery failed stays listed for the reconciler
// (Task.AwaitsExpiry), which expires it through this same path. The one
// window for a duplicate is an attempt that delivered and then did not
// record it.
func (f *Firer) Expire(ctx context.Context, req ExpireRequest) (ExpireOutcome, error) {
	out, err := f.core.Fire(ctx, Payload{Key: Key(req.UserID, req.TaskID), Due: req.DueAt}, f.target)
	if err != nil {
		return "", fmt.Errorf("expire task %s: %w", req.TaskID, err)
	}
	return expireOutcomes[out], nil
}

// Remind runs the target for a task's reminder: fire.Core.Remind with the
// to-do app's schema. The conditional claim (still Pending, same
// deadline, same reminder time, not reminded for it, no live claim)
// decides, then the target runs, then the delivery is recorded
// (RemindedFor). An error means "retry me" (errors.Is ErrNotifyInProgress
// when another attempt holds the claim, ErrTooEarly before the reminder
// time).
func (f *Firer) Remind(ctx context.Context, req RemindRequest) (RemindOutcome, error) {
	p := Payload{Key: Key(req.UserID, req.TaskID), Due: req.DueAt, Remind: req.RemindAt}
	out, err := f.core.Remind(ctx, p, f.reminders, f.target)
	if err != nil {
		return "", fmt.Errorf("remind task %s: %w", req.TaskID, err)
	}
	return remindOutcomes[out], nil
}

// Fire fires what a schedule's payload names: its reminder
// (contract.Payload.IsReminder) or its expiry.
func (f *Firer) Fire(ctx context.Context, p Payload) (fire.Outcome, error) {
	if p.IsReminder() {
		return f.core.Remind(ctx, p, f.reminders, f.target)
	}
	return f.core.Fire(ctx, p, f.target)
}

// ItemStore is a task Store as the firing core sees an item table
// (fire.Store and fire.ReminderStore), for a task store that is not a
// DynamoDB table (internal/tooling/memory's, in tests, the simulation and `make
// dev`); on DynamoDB, dynamo.NewItemStore with the to-do schema is the
// same table seen directly.
type ItemStore struct{ store Store }

var (
	_ fire.Store         = ItemStore{}
	_ fire.ReminderStore = ItemStore{}
)

// Items returns the task store s as an item store.
func Items(s Store) ItemStore { return ItemStore{store: s} }

// Claim implements fire.Store: Store.Expire.
func (a ItemStore) Claim(ctx context.Context, p Payload, now time.Time) error {
	_, err := a.store.Expire(ctx, p.Key.Partition, p.Key.Sort, p.Due, now)
	return err
}

// TakeOver implements fire.Store: Store.ClaimNotification.
func (a ItemStore) TakeOver(ctx context.Context, p Payload, now time.Time, lease time.Duration) error {
	return a.store.ClaimNotification(ctx, p.Key.Partition, p.Key.Sort, p.Due, now, lease)
}

// MarkDelivered implements fire.Store: Store.MarkNotified.
func (a ItemStore) MarkDelivered(ctx context.Context, k contract.Key, at time.Time) error {
	return a.store.MarkNotified(ctx, k.Partition, k.Sort, at)
}

// RemindClaim implements fire.ReminderStore: Store.ClaimReminder.
func (a ItemStore) RemindClaim(ctx context.Context, p Payload, now time.Time, lease time.Duration) error {
	_, err := a.store.ClaimReminder(ctx, p.Key.Partition, p.Key.Sort, p.Due, p.Remind, now, lease)
	return err
}

// MarkReminded implements fire.ReminderStore: Store.MarkReminded.
func (a ItemStore) MarkReminded(ctx context.Context, p Payload) error {
	return a.store.MarkReminded(ctx, p.Key.Partition, p.Key.Sort, p.Remind)
}

// Get implements fire.Store and fire.ReminderStore: the task as an item.
func (a ItemStore) Get(ctx context.Context, k contract.Key) (contract.Item, bool, error) {
	t, err := a.store.Get(ctx, k.Partition, k.Sort)
	if errors.Is(err, ErrNotFound) {
		return contract.Item{}, false, nil
	}
	if err != nil {
		return contract.Item{}, false, err
	}
	return t.Item(), true, nil
}
