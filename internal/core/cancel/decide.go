package cancel

import (
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
)

// Decide says whether a change-feed record warrants touching the item's
// schedule, for any schema: an item is armed when its state is one of
// the schema's ArmedStates and it has a due time (contract.Schema.Armed).
// It compares the transition (old image against new), never the new state
// alone, so an edit that leaves an item armed at the same due time, or a
// replay of a record already handled, does not look like a change. A
// record with a missing image is decided by what is safe: the firing's
// conditional claim is the real guarantee, and the reconciler repairs
// drift. A message that schedules carries the new image's reminder time;
// a cancel deletes the reminder too. Each transition and its action:
// docs/pipeline.md.
func Decide(s contract.Schema, c changefeed.Change) (Message, bool) {
	armed := func(it *contract.Item) bool { return it != nil && s.Armed(*it) }
	cancel := withOld(Message{Action: ActionCancel, Partition: c.Key.Partition, Sort: c.Key.Sort, EventID: c.EventID,
		NoOldReminder: noOldReminder(s, c)}, c)
	switch c.Kind {
	case changefeed.Insert:
		if armed(c.New) && !c.New.Inline {
			return withItem(ActionSchedule, c), true
		}
	case changefeed.Remove:
		if c.Old == nil || armed(c.Old) {
			return cancel, true
		}
	case changefeed.Modify:
		switch {
		case c.New == nil:
		case c.Old == nil && !armed(c.New):
			return cancel, true
		case c.Old == nil:
			return withItem(ActionReschedule, c), true
		case !armed(c.Old) && armed(c.New):
			return withItem(ActionSchedule, c), true
		case !armed(c.Old):
		case !armed(c.New) && s.IsClaim(*c.Old, *c.New):
		case !armed(c.New):
			return cancel, true
		case !c.New.Due.Equal(c.Old.Due) || (s.Reminds() && !c.New.Remind.Equal(c.Old.Remind)):
			return withItem(ActionReschedule, c), true
		}
	}
	return Message{}, false
}

// withItem is a message that gives the new image its schedule.
func withItem(a Action, c changefeed.Change) Message {
	return withOld(Message{Action: a, Partition: c.Key.Partition, Sort: c.Key.Sort, DueAt: c.New.Due.UTC(),
		RemindAt: c.New.Remind.UTC(), Token: c.New.Token, EventID: c.EventID, NoOldReminder: c.Kind == changefeed.Insert || (c.Old != nil && c.Old.Remind.IsZero())}, c)
}

// withOld adds the old image's due and reminder times (none without an
// old image): what the schedules being moved or deleted were made for.
func withOld(m Message, c changefeed.Change) Message {
	if c.Old != nil {
		m.OldDueAt, m.OldRemindAt = utc(c.Old.Due), utc(c.Old.Remind)
	}
	return m
}

// utc is t in UTC, and the zero time as it is (UTC of the zero time is
// still zero, but this keeps == comparisons of messages exact).
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// noOldReminder reports whether the record shows that the item had no
// reminder before the change (so no reminder schedule to delete).
func noOldReminder(s contract.Schema, c changefeed.Change) bool {
	return !s.Reminds() || (c.Old != nil && c.Old.Remind.IsZero())
}
