package task

import (
	"errors"
	"time"
)

// DefaultPageSize and MaxPageSize bound a List page.
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// ErrBadCursor is a List cursor that this service did not hand out.
var ErrBadCursor = errors.New("invalid cursor")

// BasisHolds reports whether t still has the deadline and reminder that
// p.Basis was computed from (true without a Basis).
func BasisHolds(t Task, p Patch) bool {
	return p.Basis == nil || (t.DueAt.Equal(p.Basis.DueAt) && t.Reminder == p.Basis.Reminder)
}

// ApplyPatch is the new state of a Pending task after p at time now. Store
// adapters that cannot express the change as one conditional write use it;
// the DynamoDB adapter mirrors it in an update expression.
func ApplyPatch(t Task, p Patch, now time.Time) Task {
	if p.Title != nil {
		t.Title = *p.Title
	}
	if p.Description != nil {
		t.Description = *p.Description
	}
	if p.DueAt != nil {
		t.DueAt = p.DueAt.UTC().Truncate(time.Second)
		// The worker moves the schedule; nothing records that it did.
		t.ScheduledFor = time.Time{}
	}
	if p.Reminder != nil {
		t.Reminder = *p.Reminder
	}
	if p.DueAt != nil || p.Reminder != nil {
		t.RemindAt = RemindAt(t.DueAt, t.Reminder)
		t.RemindedFor = reminderDone(t.RemindedFor, t.RemindAt, now)
		// A claim of the old reminder time must not hold up the new one.
		t.RemindClaimAt = time.Time{}
		// The worker moves the reminder schedule too; until the
		// reconciler checked both, neither is vouched for.
		t.ScheduledFor = time.Time{}
	}
	if p.Complete {
		t.Status = StatusDone
		t.CompletedAt = now
	}
	t.UpdatedAt = now
	return t
}
