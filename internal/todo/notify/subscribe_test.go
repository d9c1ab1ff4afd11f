package notify_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/memory/snsfake"
)

const (
	subA  = "0b7c4b1e-6a2f-4f3e-9d1a-3c5e8f2a9b10"
	subB  = "9f8e7d6c-5b4a-4321-8765-0fedcba98765"
	email = "ada@example.com"
)

var oneTopic = []string{"arn:aws:sns:eu-west-1:111122223333:unschedule-notify-0"}

// rig is the notification rules over the SNS model (through the real
// adapter) and the in-memory settings store.
type rig struct {
	sns      *snsfake.SNS
	settings *memory.Settings
	s        *notify.Subscriber
	logs     *bytes.Buffer
	topics   []string
}

func newRig(t *testing.T, topics []string) *rig {
	t.Helper()
	r := &rig{sns: snsfake.New(topics...), settings: memory.NewSettings(), logs: &bytes.Buffer{}, topics: topics}
	subs, err := awssns.NewSubscriptions(r.sns)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	r.s, err = notify.NewSubscriber(notify.SubscriberDeps{Subscriptions: subs, Settings: r.settings, TopicArns: topics,
		Log: slog.New(slog.NewJSONHandler(r.logs, nil)), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) signIn(t *testing.T, sub, addr string, want notify.Outcome) {
	t.Helper()
	if got := r.s.OnSignIn(context.Background(), sub, addr); got != want {
		t.Fatalf("sign-in of %s <%s>: %s, want %s; logs:\n%s", sub, addr, got, want, r.logs.String())
	}
}

func (r *rig) view(t *testing.T, sub string, want notify.Status) notify.View {
	t.Helper()
	v, err := r.s.Settings(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != want || v.Enabled != (want != notify.StatusOff) {
		t.Fatalf("settings of %s: %+v, want status %s", sub, v, want)
	}
	return v
}

func (r *rig) set(t *testing.T, sub, addr string, enabled bool, want notify.Status) {
	t.Helper()
	v, err := r.s.SetEnabled(context.Background(), sub, addr, enabled)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != want || v.Enabled != enabled {
		t.Fatalf("SetEnabled(%t) of %s: %+v, want status %s", enabled, sub, v, want)
	}
}

func (r *rig) record(t *testing.T, sub string) notify.Settings {
	t.Helper()
	st, err := r.settings.LoadSettings(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// subscriptions lists addr's subscriptions, failing unless there are n.
func (r *rig) subscriptions(t *testing.T, addr string, n int) []snsfake.Subscription {
	t.Helper()
	got := r.sns.Subscriptions(addr)
	if len(got) != n {
		t.Fatalf("%s has %d subscriptions, want %d: %+v", addr, len(got), n, got)
	}
	return got
}

func TestSignInSubscribesOnceAndRecordsIt(t *testing.T) {
	r := newRig(t, oneTopic)
	r.view(t, subA, notify.StatusNotSubscribed) // nothing recorded before the first sign-in
	r.signIn(t, subA, email, notify.Subscribed)
	s := r.subscriptions(t, email, 1)[0]
	if s.Attributes["FilterPolicy"] != notify.FilterPolicy(subA) || s.Confirmed {
		t.Fatalf("subscription %+v", s)
	}
	if st := r.record(t, subA); !st.Enabled || st.SubscriptionArn != s.Arn || st.Email != email || st.Version != 1 {
		t.Fatalf("record %+v, want enabled with %s", st, s.Arn)
	}
	if v := r.view(t, subA, notify.StatusPending); v.Email != email {
		t.Fatalf("view %+v", v)
	}
	r.signIn(t, subA, email, notify.AwaitingConfirmation)
	r.signIn(t, subA, email, notify.AwaitingConfirmation)
	if n := r.sns.ConfirmationEmails(email); n != 1 {
		t.Fatalf("%d confirmation emails, want 1", n)
	}
	if err := r.sns.Confirm(oneTopic[0], email); err != nil {
		t.Fatal(err)
	}
	r.view(t, subA, notify.StatusConfirmed)
	r.signIn(t, subA, email, notify.Unchanged)
	if n := r.sns.Calls("Subscribe"); n != 1 {
		t.Fatalf("Subscribe called %d times, want 1", n)
	}
}

// The abuse the issue names: B signs up (auto-confirmed) with the address
// whose confirmed subscription is A's. B's sign-in must leave A's
// subscription exactly as it is, and B gets none of it.
func TestSignInNeverTouchesAnotherUsersSubscription(t *testing.T) {
	r := newRig(t, oneTopic)
	r.signIn(t, subA, email, notify.Subscribed)
	if err := r.sns.Confirm(oneTopic[0], email); err != nil {
		t.Fatal(err)
	}
	before := r.subscriptions(t, email, 1)[0]

	for range 2 {
		r.signIn(t, subB, email, notify.Failed)
	}
	after := r.subscriptions(t, email, 1)[0]
	if after.Arn != before.Arn || after.Attributes["FilterPolicy"] != notify.FilterPolicy(subA) || !after.Confirmed {
		t.Fatalf("A's subscription changed: %+v, was %+v", after, before)
	}
	if n := r.sns.Calls("Unsubscribe"); n != 0 {
		t.Fatalf("%d Unsubscribe calls", n)
	}
	if st := r.record(t, subB); st.SubscriptionArn != "" {
		t.Fatalf("B recorded A's subscription: %+v", st)
	}
	r.view(t, subB, notify.StatusNotSubscribed)
	if _, err := r.s.SetEnabled(context.Background(), subB, email, true); !errors.Is(err, notify.ErrAddressTaken) {
		t.Fatalf("B turning notifications on: %v, want ErrAddressTaken", err)
	}
	r.view(t, subA, notify.StatusConfirmed)
}

func TestUnsubscribedUserIsNotSubscribedAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone func(r *rig) error
	}{
		{"unsubscribed through the email's link", func(r *rig) error {
			if err := r.sns.Confirm(oneTopic[0], email); err != nil {
				return err
			}
			return r.sns.OptOut(oneTopic[0], email)
		}},
		{"confirmation lapsed after 48 hours", func(r *rig) error { return r.sns.Lapse(oneTopic[0], email) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, oneTopic)
			r.signIn(t, subA, email, notify.Subscribed)
			if err := tc.gone(r); err != nil {
				t.Fatal(err)
			}
			r.signIn(t, subA, email, notify.Off)
			r.signIn(t, subA, email, notify.Off)
			r.subscriptions(t, email, 0)
			if n := r.sns.Calls("Subscribe"); n != 1 {
				t.Fatalf("Subscribe called %d times, want 1", n)
			}
			if st := r.record(t, subA); st.Enabled || st.SubscriptionArn != "" {
				t.Fatalf("record %+v, want off with no subscription", st)
			}
			r.view(t, subA, notify.StatusOff)

			// Turning them back on subscribes again: one new confirmation.
			r.set(t, subA, email, true, notify.StatusPending)
			r.subscriptions(t, email, 1)
			if n := r.sns.ConfirmationEmails(email); n != 2 {
				t.Fatalf("%d confirmation emails, want 2", n)
			}
			r.signIn(t, subA, email, notify.AwaitingConfirmation)
		})
	}
}

func TestTurningOffDeletesTheSubscription(t *testing.T) {
	r := newRig(t, oneTopic)
	r.signIn(t, subA, email, notify.Subscribed)
	if err := r.sns.Confirm(oneTopic[0], email); err != nil {
		t.Fatal(err)
	}
	r.set(t, subA, email, false, notify.StatusOff)
	r.subscriptions(t, email, 0)
	r.signIn(t, subA, email, notify.Off)
	r.subscriptions(t, email, 0)
	r.view(t, subA, notify.StatusOff)
	r.set(t, subA, email, false, notify.StatusOff) // idempotent
	if n := r.sns.Calls("Subscribe"); n != 1 {
		t.Fatalf("Subscribe called %d times, want 1", n)
	}
}

// SNS cannot delete a subscription that awaits confirmation: turning off
// keeps it recorded, and it is deleted as soon as it can be.
func TestTurningOffWhilePending(t *testing.T) {
	r := newRig(t, oneTopic)
	r.signIn(t, subA, email, notify.Subscribed)
	arn := r.subscriptions(t, email, 1)[0].Arn
	r.set(t, subA, email, false, notify.StatusOff)
	if st := r.record(t, subA); st.Enabled || st.SubscriptionArn != arn {
		t.Fatalf("record %+v, want off, keeping %s to delete", st, arn)
	}
	// The user clicks the old confirmation link after all.
	if err := r.sns.Confirm(oneTopic[0], email); err != nil {
		t.Fatal(err)
	}
	r.signIn(t, subA, email, notify.Off)
	r.subscriptions(t, email, 0)
	if st := r.record(t, subA); st.Enabled || st.SubscriptionArn != "" {
		t.Fatalf("record %+v, want off with nothing left", st)
	}
	// Turning on again while a pending one is still recorded reuses it.
	r2 := newRig(t, oneTopic)
	r2.signIn(t, subA, email, notify.Subscribed)
	r2.set(t, subA, email, false, notify.StatusOff)
	r2.set(t, subA, email, true, notify.StatusPending)
	r2.subscriptions(t, email, 1)
}

func TestChangedAddressOrShardMovesTheSubscription(t *testing.T) {
	t.Run("new address", func(t *testing.T) {
		r := newRig(t, oneTopic)
		r.signIn(t, subA, email, notify.Subscribed)
		if err := r.sns.Confirm(oneTopic[0], email); err != nil {
			t.Fatal(err)
		}
		r.signIn(t, subA, "ada@new.example", notify.Subscribed)
		r.subscriptions(t, email, 0)
		if s := r.subscriptions(t, "ada@new.example", 1)[0]; s.Attributes["FilterPolicy"] != notify.FilterPolicy(subA) {
			t.Fatalf("subscription %+v", s)
		}
		if v := r.view(t, subA, notify.StatusPending); v.Email != "ada@new.example" {
			t.Fatalf("view %+v", v)
		}
	})
	t.Run("same address in other case", func(t *testing.T) {
		r := newRig(t, oneTopic)
		r.signIn(t, subA, email, notify.Subscribed)
		r.signIn(t, subA, "Ada@Example.com", notify.AwaitingConfirmation)
	})
	t.Run("more shards", func(t *testing.T) {
		topics := []string{oneTopic[0], "arn:aws:sns:eu-west-1:111122223333:unschedule-notify-1"}
		// The test needs a user whose shard moves when a second one is added.
		if notify.TopicFor(topics, subB) != topics[1] {
			t.Skip("subB is not on shard 1 of 2")
		}
		r := newRig(t, oneTopic)
		r.signIn(t, subB, email, notify.Subscribed)
		if err := r.sns.Confirm(oneTopic[0], email); err != nil {
			t.Fatal(err)
		}
		grown := newRig(t, topics)
		grown.settings, grown.sns = r.settings, r.sns
		subs, _ := awssns.NewSubscriptions(r.sns)
		var err error
		grown.s, err = notify.NewSubscriber(notify.SubscriberDeps{Subscriptions: subs, Settings: r.settings, TopicArns: topics})
		if err != nil {
			t.Fatal(err)
		}
		r.sns.AddTopic(topics[1])
		grown.signIn(t, subB, email, notify.Subscribed)
		if s := grown.subscriptions(t, email, 1)[0]; s.TopicArn != topics[1] {
			t.Fatalf("subscription %+v, want on %s", s, topics[1])
		}
	})
}

func TestSetEnabledNeedsAnAddress(t *testing.T) {
	r := newRig(t, oneTopic)
	if _, err := r.s.SetEnabled(context.Background(), subA, " ", true); !errors.Is(err, notify.ErrNoAddress) {
		t.Fatalf("err %v, want ErrNoAddress", err)
	}
	r.set(t, subA, "", false, notify.StatusOff) // turning off needs none
}

// Two writers: the one that loses the save tries to delete the
// subscription it made, which nobody recorded (SNS refuses while it awaits
// confirmation; it then lapses after 48 hours).
func TestLostSaveUndoesItsSubscribe(t *testing.T) {
	r := newRig(t, oneTopic)
	r.set(t, subA, email, false, notify.StatusOff) // version 1, off
	r.settings.Fail = func(op string) error {
		if op == "SaveSettings" {
			r.settings.Fail = nil
			// Another writer saves first.
			st, _ := r.settings.LoadSettings(context.Background(), subA)
			if _, err := r.settings.SaveSettings(context.Background(), st); err != nil {
				t.Error(err)
			}
		}
		return nil
	}
	_, err := r.s.SetEnabled(context.Background(), subA, email, true)
	if !errors.Is(err, notify.ErrSettingsConflict) {
		t.Fatalf("err %v, want ErrSettingsConflict", err)
	}
	if st := r.record(t, subA); st.Version != 2 || st.Enabled || st.SubscriptionArn != "" {
		t.Fatalf("record %+v, want the winner's", st)
	}
	if n := r.sns.Calls("Unsubscribe"); n != 1 {
		t.Fatalf("the unrecorded subscription was not deleted (%d Unsubscribe calls)", n)
	}
}

func TestOnSignInWithoutAttributes(t *testing.T) {
	r := newRig(t, oneTopic)
	r.signIn(t, "", email, notify.Failed)
	r.signIn(t, subA, "", notify.Failed)
	if n := r.sns.Calls("Subscribe"); n != 0 {
		t.Fatalf("Subscribe called %d times", n)
	}
}

func TestNewSubscriberGuards(t *testing.T) {
	subs, _ := awssns.NewSubscriptions(snsfake.New(oneTopic...))
	for _, d := range []notify.SubscriberDeps{
		{Settings: memory.NewSettings(), TopicArns: oneTopic},
		{Subscriptions: subs, TopicArns: oneTopic},
		{Subscriptions: subs, Settings: memory.NewSettings()},
	} {
		if _, err := notify.NewSubscriber(d); err == nil {
			t.Errorf("NewSubscriber(%+v) accepted", d)
		}
	}
}

// The time zone is saved with the settings, alone or with the
// preference, survives every other save, and alone touches no
// subscription; a bad one changes nothing.
func TestUpdateTimeZone(t *testing.T) {
	ctx := context.Background()
	zone := func(s string) *string { return &s }
	on, off := true, false
	r := newRig(t, oneTopic)
	r.signIn(t, subA, email, notify.Subscribed)
	if err := r.sns.Confirm(oneTopic[0], email); err != nil {
		t.Fatal(err)
	}
	before := r.sns.Calls("Subscribe") + r.sns.Calls("Unsubscribe")

	for _, tc := range []struct {
		name       string
		email      string
		c          notify.Change
		wantErr    error
		wantZone   string
		wantStatus notify.Status
	}{
		{"zone alone", "", notify.Change{TimeZone: zone("Europe/Berlin")}, nil, "Europe/Berlin", notify.StatusConfirmed},
		{"the same zone again", "", notify.Change{TimeZone: zone("Europe/Berlin")}, nil, "Europe/Berlin", notify.StatusConfirmed},
		{"a bad zone is refused", email, notify.Change{Enabled: &off, TimeZone: zone("Mars/Base")}, notify.ErrBadTimeZone, "Europe/Berlin", notify.StatusConfirmed},
		{"Local is refused", "", notify.Change{TimeZone: zone("Local")}, notify.ErrBadTimeZone, "Europe/Berlin", notify.StatusConfirmed},
		{"off keeps the zone", email, notify.Change{Enabled: &off}, nil, "Europe/Berlin", notify.StatusOff},
		{"on with a new zone", email, notify.Change{Enabled: &on, TimeZone: zone("America/New_York")}, nil, "America/New_York", notify.StatusPending},
		{"cleared: UTC", "", notify.Change{TimeZone: zone("")}, nil, "", notify.StatusPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved, _ := r.settings.LoadSettings(ctx, subA)
			v, err := r.s.Update(ctx, subA, tc.email, tc.c)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Update: %v, want %v", err, tc.wantErr)
			}
			st, _ := r.settings.LoadSettings(ctx, subA)
			if st.TimeZone != tc.wantZone {
				t.Fatalf("stored zone %q, want %q", st.TimeZone, tc.wantZone)
			}
			if err != nil {
				if st.Version != saved.Version {
					t.Fatalf("a refused change was saved: %+v", st)
				}
				return
			}
			if v.TimeZone != tc.wantZone || v.Status != tc.wantStatus {
				t.Fatalf("view %+v, want zone %q status %s", v, tc.wantZone, tc.wantStatus)
			}
		})
	}
	// Only turning off and on touched SNS: one Unsubscribe, one Subscribe.
	if n := r.sns.Calls("Subscribe") + r.sns.Calls("Unsubscribe"); n != before+2 {
		t.Fatalf("%d subscription calls, want %d", n, before+2)
	}
	// A sign-in keeps the zone.
	if _, err := r.s.Update(ctx, subA, "", notify.Change{TimeZone: zone("Asia/Tokyo")}); err != nil {
		t.Fatal(err)
	}
	r.signIn(t, subA, email, notify.AwaitingConfirmation)
	if st, _ := r.settings.LoadSettings(ctx, subA); st.TimeZone != "Asia/Tokyo" {
		t.Fatalf("a sign-in lost the zone: %+v", st)
	}
	// The zone of a user with no record yet is saved, and the first
	// sign-in still subscribes them.
	if v, err := r.s.Update(ctx, subB, "", notify.Change{TimeZone: zone("Europe/Paris")}); err != nil || v.Status != notify.StatusNotSubscribed || !v.Enabled {
		t.Fatalf("zone of a new user: %+v, %v", v, err)
	}
	r.signIn(t, subB, "bob@example.com", notify.Subscribed)
	if st, _ := r.settings.LoadSettings(ctx, subB); st.TimeZone != "Europe/Paris" || st.SubscriptionArn == "" {
		t.Fatalf("after the first sign-in: %+v", st)
	}
}
