// Package task holds the lifecycle rules of a task that expires at its
// deadline: states, transitions, input validation, schedule naming and the
// ports through which the rules reach storage, the scheduler and the
// notifier. It imports no AWS SDK, so the whole pipeline can run in-process.
package task

import (
	"errors"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/core/timer"

	"github.com/unschedule/unschedule/internal/core/fire"
)

// Status is the lifecycle state of a task.
type Status string

// The lifecycle: Pending -> Done (completed by its owner) or Pending ->
// Expired (its deadline passed). Done and Expired are terminal.
const (
	StatusPending Status = "Pending"
	StatusDone    Status = "Done"
	StatusExpired Status = "Expired"
)

// Valid reports whether s is one of the known states.
func (s Status) Valid() bool {
	return s == StatusPending || s == StatusDone || s == StatusExpired
}

// Lower is the state as the API spells it ("pending", "done", "expired").
func (s Status) Lower() string { return strings.ToLower(string(s)) }

// Task is one to-do item. The pair (UserID, TaskID) is its key.
type Task struct {
	UserID      string
	TaskID      string
	Title       string
	Description string
	Status      Status
	// DueAt is the deadline in UTC, truncated to the second (the scheduler's
	// resolution). It is compared for equality by the expiry condition.
	DueAt     time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
	// ScheduleToken is a random value chosen at create time. Every
	// ClientToken sent to the scheduler for this task derives from it, so a
	// retried create never makes a second schedule.
	ScheduleToken string
	// ScheduleRepair is set when creating the schedule failed; the
	// reconciler gives the task a schedule and clears it.
	ScheduleRepair bool
	// ScheduleInline says the writer created the schedule itself
	// (contract.Schema.InlineAttr): Create sets it, so the stream path
	// does not create the schedule again.
	ScheduleInline bool
	// ScheduledFor records that the task's schedule was confirmed for this
	// deadline: created by the API's Create, or checked (or repaired) by
	// the reconciler. It vouches for the schedule only while it equals
	// DueAt; a deadline change clears it (the cancellation worker moves
	// the schedule but records nothing), and an item written before the
	// field existed has none. The reconciler checks the schedule of every
	// task it does not vouch for, and trusts the others (see
	// Task.ScheduleConfirmed).
	ScheduledFor time.Time
	CompletedAt  time.Time
	ExpiredAt    time.Time
	// NotifiedAt records that the expiry notification was published, so a
	// retried expiry publishes only when the first attempt did not.
	NotifiedAt time.Time
	// NotifyClaimAt is when an expiry attempt last took the right to
	// publish the notification: the transition to Expired takes it, and a
	// retry may take it over only once it is older than the notify lease
	// (see Firer.Expire). It keeps two concurrent attempts from both
	// publishing.
	NotifyClaimAt time.Time
	// Reminder is how long before DueAt the owner is reminded ("" on an
	// item from before reminders: none).
	Reminder Reminder
	// RemindAt is DueAt minus the reminder's offset (zero for none). It
	// is kept even when it had passed when written; then no reminder
	// schedule is made (ReminderFor).
	RemindAt time.Time
	// RemindedFor is the RemindAt whose reminder is done: published (so a
	// retried reminder publishes only when no attempt recorded it), or
	// already passed when it was written (no email for it, ever).
	RemindedFor time.Time
	// RemindClaimAt is when a reminder attempt last took the right to
	// publish it (contract.Schema.RemindClaim): a retry takes it over only
	// once it is older than the notify lease. A change of the deadline or
	// the reminder clears it.
	RemindClaimAt time.Time
}

// AwaitsExpiry reports whether the expiry path still has work on t: it is
// Pending, or Expired without a recorded notification. These are the tasks
// the reconciler lists (task.PendingLister) and the sparse pending index
// holds, so an expiry whose publish failed is retried even when no
// schedule is left to retry it.
func (t Task) AwaitsExpiry() bool {
	return t.Status == StatusPending || (t.Status == StatusExpired && t.NotifiedAt.IsZero())
}

// ScheduleConfirmed reports whether t's schedule was recorded as made for
// its current deadline (ScheduledFor), and no failure was recorded since
// (ScheduleRepair).
func (t Task) ScheduleConfirmed() bool {
	return !t.ScheduleRepair && !t.ScheduledFor.IsZero() && t.ScheduledFor.Equal(t.DueAt)
}

// Sentinel errors of the lifecycle. Adapters wrap them; callers test with
// errors.Is.
var (
	// ErrNotFound: no task with that key (or it belongs to someone else).
	ErrNotFound = errors.New("task not found")
	// ErrNotPending: the change needs a Pending task and this one is not.
	ErrNotPending = errors.New("task is no longer pending")
	// ErrAlreadyExists: a create found a task with the same key.
	ErrAlreadyExists = errors.New("task already exists")
	// ErrConditionFailed: a conditional write found the item in another
	// state than it required.
	ErrConditionFailed = fire.ErrConditionFailed
	// ErrScheduleNotFound: the scheduler has no schedule of that name.
	ErrScheduleNotFound = timer.ErrNotFound
	// ErrScheduleExists: the scheduler already has a schedule of that name.
	ErrScheduleExists = timer.ErrExists
	// ErrNotifyInProgress: another expiry attempt holds the claim to
	// publish the task's notification and has not recorded it yet. Retry
	// later: the claim lapses after the notify lease, so a retry takes
	// over from an attempt that crashed.
	ErrNotifyInProgress = fire.ErrInProgress
	// ErrTooEarly: an expiry or a reminder came before its time; nothing
	// was done. Retry it (see fire.ErrTooEarly).
	ErrTooEarly = fire.ErrTooEarly
	// ErrTooManyPending: the user already has as many Pending tasks as the
	// service allows (see PendingLimitError).
	ErrTooManyPending = errors.New("too many pending tasks")
)

// NotPendingError is ErrNotPending with the state the task is in now
// (Done or Expired), so the caller can say which.
type NotPendingError struct{ Status Status }

func (e *NotPendingError) Error() string {
	return sprintf("task is %s, no longer pending", e.Status.Lower())
}

// Is makes errors.Is(err, ErrNotPending) hold.
func (e *NotPendingError) Is(target error) bool { return target == ErrNotPending }

// PendingLimitError is a create refused because the user already has
// Limit Pending tasks.
type PendingLimitError struct{ Limit int }

func (e *PendingLimitError) Error() string {
	return sprintf("you already have %d pending tasks, the most allowed: complete or delete one first", e.Limit)
}

// Is makes errors.Is(err, ErrTooManyPending) hold.
func (e *PendingLimitError) Is(target error) bool { return target == ErrTooManyPending }

// ValidationError is bad client input; its message is safe to show.
type ValidationError struct{ Msg string }

func (e *ValidationError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &ValidationError{Msg: sprintf(format, args...)}
}
