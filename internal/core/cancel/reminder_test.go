package cancel

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/inmem"
)

func TestDecideReminder(t *testing.T) {
	rem := due.Add(-time.Hour)
	withRem := with(func(t *contract.Item) { t.Remind = rem })
	moved := with(func(t *contract.Item) { t.Remind = due.Add(-15 * time.Minute) })
	removed := with(func(t *contract.Item) { t.Remind = time.Time{} })
	reminded := with(func(t *contract.Item) { t.Remind, t.Reminded = rem, rem })
	for _, tc := range []struct {
		name     string
		old, new *contract.Item
		want     *Message
	}{
		{"reminder moved: reschedule", withRem, moved, &Message{Action: ActionReschedule, Partition: user, Sort: tid,
			DueAt: due, RemindAt: moved.Remind, OldDueAt: due, OldRemindAt: rem, Token: "TOKEN", EventID: "ev1"}},
		{"reminder removed: reschedule without one", withRem, removed, &Message{Action: ActionReschedule, Partition: user,
			Sort: tid, DueAt: due, OldDueAt: due, OldRemindAt: rem, Token: "TOKEN", EventID: "ev1"}},
		{"reminder delivered (recorded): nothing", withRem, reminded, nil},
		{"completed with a reminder: cancel deletes it", withRem, with(func(t *contract.Item) { t.Remind, t.State = rem, "Done" }), &Message{Action: ActionCancel, Partition: user, Sort: tid, OldDueAt: due, OldRemindAt: rem, EventID: "ev1"}},
		{"completed without one: cancel knows there is none", removed, with(func(t *contract.Item) { t.State = "Done" }),
			&Message{Action: ActionCancel, Partition: user, Sort: tid, OldDueAt: due, EventID: "ev1", NoOldReminder: true}},
		{"deadline moved, no reminder before or after", removed, with(func(t *contract.Item) { t.Due = due.Add(time.Hour) }),
			&Message{Action: ActionReschedule, Partition: user, Sort: tid, DueAt: due.Add(time.Hour), OldDueAt: due, Token: "TOKEN",
				EventID: "ev1", NoOldReminder: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Decide(schema, change(changefeed.Modify, tc.old, tc.new))
			if ok != (tc.want != nil) || ok && got != *tc.want {
				t.Fatalf("Decide = %+v, %v; want %+v", got, ok, tc.want)
			}
		})
	}
	// A schema without reminders ignores the attribute.
	s := consumer()
	old, nw := *withRem, *moved
	old.State, nw.State = "Queued", "Queued"
	if _, ok := Decide(s, changefeed.Change{EventID: "e", Kind: changefeed.Modify, Key: old.Key, Old: &old, New: &nw}); ok {
		t.Fatal("a schema without reminders rescheduled on a reminder change")
	}
}

// TestWorkerReminder: every action applies to the reminder schedule too.
func TestWorkerReminder(t *testing.T) {
	now := due.Add(-2 * time.Hour)
	rem, later := due.Add(-time.Hour), due.Add(-15*time.Minute)
	name := schema.ReminderName(contract.Key{Partition: user, Sort: tid})
	msg := func(a Action, remindAt time.Time) Message {
		return Message{Action: a, Partition: user, Sort: tid, DueAt: due, RemindAt: remindAt, Token: "TOKEN", EventID: "e"}
	}
	for _, tc := range []struct {
		name     string
		existing time.Time // reminder schedule before (zero: none)
		msg      Message
		want     time.Time // after (zero: none)
	}{
		{"schedule makes it", time.Time{}, msg(ActionSchedule, rem), rem},
		{"reschedule moves it", rem, msg(ActionReschedule, later), later},
		{"reschedule makes a missing one", time.Time{}, msg(ActionReschedule, later), later},
		{"reschedule without a reminder deletes it", rem, msg(ActionReschedule, time.Time{}), time.Time{}},
		// A due schedule may not have fired yet: deleting it could lose
		// the reminder; a stale one fires, is skipped and deletes itself.
		{"reschedule to a passed time leaves it", rem, msg(ActionReschedule, now.Add(-time.Minute)), rem},
		{"schedule of a passed time makes none", time.Time{}, msg(ActionSchedule, now.Add(-time.Minute)), time.Time{}},
		{"cancel deletes it", rem, Message{Action: ActionCancel, Partition: user, Sort: tid, EventID: "e"}, time.Time{}},
		{"cancel without one succeeds", time.Time{}, Message{Action: ActionCancel, Partition: user, Sort: tid, EventID: "e"}, time.Time{}},
		{"cancel of an item that had none calls nothing", time.Time{}, Message{Action: ActionCancel, Partition: user, Sort: tid,
			EventID: "e", NoOldReminder: true}, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := inmem.NewScheduler()
			if !tc.existing.IsZero() {
				r, _ := msg(ActionSchedule, tc.existing).Reminder(schema)
				if err := s.Arm(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			w, err := NewWorker(schema, s, nil, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			w.SetClock(func() time.Time { return now })
			for range 2 { // a redelivery changes nothing
				if err := w.Handle(ctx, tc.msg); err != nil {
					t.Fatal(err)
				}
			}
			if tc.msg.NoOldReminder && s.Calls["Disarm"] > 2 {
				t.Fatalf("%d deletes for an item that had no reminder: want only the deadline schedule's", s.Calls["Disarm"])
			}
			got, ok := s.Lookup(name)
			if ok != !tc.want.IsZero() || ok && (!got.At.Equal(tc.want) || !got.Payload.Remind.Equal(tc.want) || !got.Payload.Due.Equal(due)) {
				t.Fatalf("reminder schedule %+v (%v), want at %v", got, ok, tc.want)
			}
		})
	}
}
