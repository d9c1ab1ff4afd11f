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
	if p.Complete {
		t.Status = StatusDone
		t.CompletedAt = now
	}
	t.UpdatedAt = now
	return t
}
