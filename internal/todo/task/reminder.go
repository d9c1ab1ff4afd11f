package task

import (
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
)

// Reminder is how long before its deadline a task's owner is reminded
// by email: ReminderNone, or one of the offsets. An item written before
// reminders existed has "", which reads as ReminderNone.
type Reminder string

// The reminder choices, as the API spells them.
const (
	ReminderNone Reminder = "none"
	Reminder15m  Reminder = "15m"
	Reminder1h   Reminder = "1h"
	Reminder1d   Reminder = "1d"
	// DefaultReminder is a new task's reminder when the client names none.
	DefaultReminder = Reminder1h
)

var reminderOffsets = map[Reminder]time.Duration{
	Reminder15m: 15 * time.Minute, Reminder1h: time.Hour, Reminder1d: 24 * time.Hour,
}

var reminderWords = map[Reminder]string{
	Reminder15m: "15 minutes", Reminder1h: "1 hour", Reminder1d: "1 day",
}

// ParseReminder reads a reminder choice; a *ValidationError for any other
// value.
func ParseReminder(v string) (Reminder, error) {
	r := Reminder(v)
	if r == ReminderNone || reminderOffsets[r] != 0 {
		return r, nil
	}
	return "", invalid("reminder must be one of none, 15m, 1h, 1d (given %q)", v)
}

// Or is r, or ReminderNone for "" (an item from before reminders).
func (r Reminder) Or() Reminder {
	if r == "" {
		return ReminderNone
	}
	return r
}

// Offset is how long before the deadline the reminder comes (0 for none).
func (r Reminder) Offset() time.Duration { return reminderOffsets[r] }

// Words is the offset in words ("1 hour"), "" for none.
func (r Reminder) Words() string { return reminderWords[r] }

// RemindAt is when a task due at due with reminder r reminds its owner
// (zero for none).
func RemindAt(due time.Time, r Reminder) time.Time {
	off := r.Offset()
	if off == 0 || due.IsZero() {
		return time.Time{}
	}
	return due.UTC().Truncate(time.Second).Add(-off)
}

// reminderDone is RemindedFor after a write at now sets the reminder time
// to remindAt: a time that has already passed when it is written is done
// at once (no email: it is never scheduled, and a firing of an earlier
// schedule for the same time, retried after the task moved away and back,
// finds it done), any other leaves done as it was.
func reminderDone(done, remindAt, now time.Time) time.Time {
	if !remindAt.IsZero() && !remindAt.After(now) {
		return remindAt
	}
	return done
}

// ReminderFor is the reminder schedule a Pending task must have at now:
// ok is false when it has none, or its time is not after now (a reminder
// whose time has passed when written is kept but never scheduled).
func ReminderFor(t Task, now time.Time) (Schedule, bool) {
	s, ok := Schema.ReminderFor(t.Item())
	if !ok || !s.At.After(now) {
		return Schedule{}, false
	}
	return s, true
}

// ReminderName is the reminder schedule name of a task id.
func ReminderName(taskID string) string { return Schema.ReminderName(contract.Key{Sort: taskID}) }

// TaskIDFromReminderName inverts ReminderName; ok is false for a name
// this package did not make.
func TaskIDFromReminderName(name string) (id string, ok bool) {
	p := Schema.ReminderNamePrefix
	if len(name) <= len(p) || name[:len(p)] != p {
		return "", false
	}
	id = name[len(p):]
	return id, ValidID(id)
}

// RemindRequest is what a reminder schedule asks: remind the owner of the
// task due at DueAt, whose reminder is at RemindAt.
type RemindRequest struct {
	UserID   string
	TaskID   string
	DueAt    time.Time
	RemindAt time.Time
}

// RemindOutcome says what Remind did.
type RemindOutcome string

// Outcomes of Remind.
const (
	// Reminded: the claim held and the reminder was published.
	Reminded RemindOutcome = "reminded"
	// RemindSkipped: the task is gone, not Pending, has another deadline
	// or reminder time, or was reminded for this time already.
	RemindSkipped RemindOutcome = "skipped"
)

var remindOutcomes = map[fire.Outcome]RemindOutcome{
	fire.Fired: Reminded, fire.Redelivered: Reminded, fire.Skipped: RemindSkipped,
}
