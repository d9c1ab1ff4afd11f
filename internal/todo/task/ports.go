package task

import (
	"context"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// Store keeps tasks. Implementations: the DynamoDB adapter, and the
// in-memory store used by tests, the simulation and `make dev`.
type Store interface {
	// Create writes a new task; ErrAlreadyExists if the key is taken.
	Create(ctx context.Context, t Task) error
	// Get reads one task; ErrNotFound if missing.
	Get(ctx context.Context, userID, taskID string) (Task, error)
	// List reads one page of a user's tasks, oldest first.
	List(ctx context.Context, userID string, page PageRequest) (Page, error)
	// CountUserPending counts the user's Pending tasks, reading no further
	// than limit of them: the result is at most limit (limit <= 0: no
	// bound). It is the per-user cap's check (Service.Create).
	CountUserPending(ctx context.Context, userID string, limit int) (int, error)
	// UpdatePending applies p to a task that is still Pending and returns
	// the new task; ErrNotFound if missing, otherwise a *NotPendingError
	// (errors.Is ErrNotPending) naming the task's current state. With
	// p.Basis set, it applies p only while the task still has that
	// deadline and reminder, and returns ErrConditionFailed for a Pending
	// task that has others (the caller reads it again and retries).
	UpdatePending(ctx context.Context, userID, taskID string, p Patch, now time.Time) (Task, error)
	// Delete removes a task and returns what it was; ErrNotFound if missing.
	Delete(ctx context.Context, userID, taskID string) (Task, error)
	// Expire moves the task to Expired only if it is Pending and its
	// deadline is dueAt (contract.Schema.Claim); ErrConditionFailed
	// otherwise. The same write sets
	// ExpiredAt, UpdatedAt and NotifyClaimAt to now (the caller holds the
	// notification claim), and the task stays listed by ListPending until
	// MarkNotified.
	Expire(ctx context.Context, userID, taskID string, dueAt, now time.Time) (Task, error)
	// ClaimNotification sets NotifyClaimAt to now, only if the task is
	// Expired for deadline dueAt, has no NotifiedAt, and its NotifyClaimAt
	// is absent or at least lease before now (contract.Schema.TakeOver);
	// ErrConditionFailed otherwise (missing task included). It is how a
	// retried expiry takes over a notification that an earlier attempt
	// started and did not record.
	ClaimNotification(ctx context.Context, userID, taskID string, dueAt, now time.Time, lease time.Duration) error
	// MarkNotified records the expiry notification of an Expired task,
	// only if none is recorded yet (contract.Schema.MarkDelivered) (ErrConditionFailed otherwise, missing
	// or not Expired included). The task leaves ListPending.
	MarkNotified(ctx context.Context, userID, taskID string, at time.Time) error
	// ClaimReminder takes the right to publish the reminder at remindAt
	// of the task due at dueAt (contract.Schema.RemindClaim: Pending,
	// same deadline, same RemindAt, RemindedFor not remindAt, and
	// RemindClaimAt absent or at least lease before now), setting
	// RemindClaimAt to now, and returns the task;
	// ErrConditionFailed otherwise (missing task included). It changes
	// nothing else: the task stays Pending.
	ClaimReminder(ctx context.Context, userID, taskID string, dueAt, remindAt, now time.Time, lease time.Duration) (Task, error)
	// MarkReminded records that the reminder at remindAt was published
	// (RemindedFor = remindAt), only if the task exists and it is not
	// recorded yet (contract.Schema.MarkReminded); ErrConditionFailed
	// otherwise.
	MarkReminded(ctx context.Context, userID, taskID string, remindAt time.Time) error
	// SetScheduleRepair sets or clears the task's repair mark.
	SetScheduleRepair(ctx context.Context, userID, taskID string, repair bool) error
	// MarkScheduled records that the task's schedule is confirmed for
	// deadline dueAt: it sets ScheduledFor to dueAt and clears the repair
	// mark, only if the task is Pending with that deadline;
	// ErrConditionFailed otherwise (missing task included).
	MarkScheduled(ctx context.Context, userID, taskID string, dueAt time.Time) error
}

// PageRequest asks for one page. Cursor is what the previous Page returned
// ("" for the first page).
type PageRequest = timer.PageRequest

// Page is one page of tasks. Cursor is "" on the last page.
type Page struct {
	Tasks  []Task
	Cursor string
}

// Notification tells a task's owner that it expired, or (Reminder set)
// that its deadline is near.
type Notification struct {
	UserID string
	TaskID string
	Title  string
	// Description is the task's description ("" for none).
	Description string
	DueAt       time.Time
	// Link opens the task in the web app ("" when no web URL is set).
	Link string
	// TimeZone is the IANA name of the owner's time zone, in which the
	// message shows the deadline ("" shows it in UTC). Expire leaves it
	// empty; notify.InUserTimeZone fills it from the owner's settings.
	TimeZone string
	// Reminder is set on a reminder before the deadline (Firer.Remind):
	// the task is still pending, due Reminder.Offset() after now. It is
	// "" on the expiry notification.
	Reminder Reminder
}

// Notifier delivers expiry notifications.
type Notifier interface {
	Publish(ctx context.Context, n Notification) error
}

// Clock tells the time (clock.Reader); tests and the simulation use a
// virtual one (clock.Fake).
type Clock = clock.Reader

// PendingLister pages through every task whose expiry is still pending,
// of every user: the Pending tasks, and the Expired tasks whose
// notification is not recorded (Task.AwaitsExpiry). It is the
// reconciler's view of the table. Cursor is opaque, and valid only with
// the same DueBy.
type PendingLister interface {
	ListPending(ctx context.Context, req PendingRequest) (Page, error)
}

// PendingRequest asks for one page of the tasks that await expiry.
type PendingRequest struct {
	Cursor string
	Limit  int
	// DueBy, when set, keeps only the tasks due at or before it (the
	// overdue ones). Zero: every task.
	DueBy time.Time
}

// ScheduleReader reads the schedules: the reconciler's view of the timer.
type ScheduleReader = timer.Reader

// SchedulePage is one page of schedules. Cursor is "" on the last page.
type SchedulePage = timer.Page
