package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Settings is one user's notification record: their preference and the
// one subscription that is theirs. It is the only thing that says which
// subscription belongs to which user: the rules never look a subscription
// up by email address, and never touch a subscription that is not
// recorded here for the same user.
type Settings struct {
	// UserID is the Cognito sub.
	UserID string
	// Enabled is the preference. A user with no record yet has it on.
	Enabled bool
	// SubscriptionArn is the user's subscription ("" for none). While
	// Enabled is false it is a subscription still to delete: SNS cannot
	// delete one that awaits confirmation.
	SubscriptionArn string
	// Email is the address SubscriptionArn was made for.
	Email string
	// TimeZone is the IANA name of the user's time zone, in which their
	// emails show times ("" for none: UTC). See CheckTimeZone.
	TimeZone string
	// Version counts the saves; 0 means nothing is stored yet.
	Version int64
	// UpdatedAt is when the record was last saved.
	UpdatedAt time.Time
}

// SettingsStore keeps one Settings per user.
type SettingsStore interface {
	// LoadSettings reads a user's settings (consistently). A user with no
	// record gets Settings{UserID: userID} (Version 0).
	LoadSettings(ctx context.Context, userID string) (Settings, error)
	// SaveSettings writes s only if the stored version is still s.Version
	// (0: no record yet), and returns what it stored: s with Version + 1.
	// ErrSettingsConflict otherwise.
	SaveSettings(ctx context.Context, s Settings) (Settings, error)
}

// Errors of the settings rules and their ports; test with errors.Is.
var (
	// ErrSettingsConflict: another writer saved the settings first.
	ErrSettingsConflict = errors.New("notification settings were changed concurrently")
	// ErrSubscriptionNotFound: SNS has no such subscription (it was
	// unsubscribed through the email link, or lapsed unconfirmed).
	ErrSubscriptionNotFound = errors.New("sns subscription not found")
	// ErrAddressTaken: the topic already holds a subscription of this
	// address with another filter policy, that is another user's. SNS
	// refuses the Subscribe, and the rules never change that subscription.
	ErrAddressTaken = errors.New("the email address is subscribed on this topic for another user")
	// ErrNoAddress: the user has no email address to subscribe.
	ErrNoAddress = errors.New("the user has no email address")
)

// Status is what a user's notifications are doing now.
type Status string

// Statuses of Subscriber.Settings and SetEnabled.
const (
	// StatusOff: the user turned notifications off (or unsubscribed
	// through an email's link, or let a confirmation lapse).
	StatusOff Status = "off"
	// StatusPending: subscribed; SNS sends nothing until the user clicks
	// the link in the confirmation email.
	StatusPending Status = "pending-confirmation"
	// StatusConfirmed: expiry emails are delivered.
	StatusConfirmed Status = "confirmed"
	// StatusNotSubscribed: on, but no subscription exists yet (nothing is
	// recorded before the first sign-in, or subscribing failed: the topic
	// is full, or the address is another user's on this topic).
	StatusNotSubscribed Status = "not-subscribed"
)

// View is a user's settings as the API shows them.
type View struct {
	Enabled bool
	Status  Status
	// Email is the address of the subscription ("" when none).
	Email string
	// TimeZone is the user's time zone ("" when none: UTC).
	TimeZone string
}

// Settings reads the user's notification settings and the live state of
// their subscription. A recorded subscription that SNS no longer has was
// unsubscribed through an email's link (or its confirmation lapsed): that
// is recorded as an opt-out, and nothing subscribes the user again until
// they turn notifications back on.
func (s *Subscriber) Settings(ctx context.Context, sub string) (View, error) {
	st, err := s.load(ctx, sub)
	if err != nil {
		return View{}, err
	}
	return s.converge(ctx, st, "", mode{optOutIfGone: true})
}

// SetEnabled records the preference and makes SNS follow it. Off deletes
// the user's subscription (one awaiting confirmation, which SNS cannot
// delete, stays recorded and is deleted once it can be, or lapses after
// 48 hours). On subscribes email again, which sends a new confirmation
// email, unless the user's subscription still exists.
func (s *Subscriber) SetEnabled(ctx context.Context, sub, email string, enabled bool) (View, error) {
	return s.Update(ctx, sub, email, Change{Enabled: &enabled})
}

// Change is what a user changes in their settings; a nil field stays as
// it is.
type Change struct {
	// Enabled: see SetEnabled.
	Enabled *bool
	// TimeZone is an IANA time zone name, "" for none (UTC); anything
	// else is ErrBadTimeZone (see CheckTimeZone).
	TimeZone *string
}

// Update applies c in one save: the preference as SetEnabled does, and
// the time zone. A change of the time zone alone touches no subscription;
// like Settings, it records an unsubscription through an email's link as
// an opt-out. An unchanged time zone alone saves nothing.
func (s *Subscriber) Update(ctx context.Context, sub, email string, c Change) (View, error) {
	if c.TimeZone != nil {
		if err := CheckTimeZone(*c.TimeZone); err != nil {
			return View{}, err
		}
	}
	if c.Enabled != nil && *c.Enabled && strings.TrimSpace(email) == "" {
		return View{}, ErrNoAddress
	}
	st, err := s.load(ctx, sub)
	if err != nil {
		return View{}, err
	}
	m := mode{optOutIfGone: true}
	if c.TimeZone != nil && *c.TimeZone != st.TimeZone {
		st.TimeZone, m.forceSave = *c.TimeZone, true
	}
	if c.Enabled != nil {
		st.Enabled = *c.Enabled
		m = mode{subscribe: *c.Enabled, forceSave: true}
	} else {
		email = "" // the address is compared only when the preference is set
	}
	return s.converge(ctx, st, email, m)
}

// load reads the user's settings; a user with no record has
// notifications on (they are subscribed at their first sign-in).
func (s *Subscriber) load(ctx context.Context, sub string) (Settings, error) {
	st, err := s.settings.LoadSettings(ctx, sub)
	if err != nil {
		return Settings{}, fmt.Errorf("load notification settings: %w", err)
	}
	if st.Version == 0 {
		st.Enabled = true
	}
	return st, nil
}

// mode says what converge may do.
type mode struct {
	// subscribe: an enabled user without a subscription is subscribed.
	subscribe bool
	// optOutIfGone: a recorded subscription that SNS no longer has turns
	// the preference off.
	optOutIfGone bool
	// forceSave: save even when nothing changed (a PUT records its time).
	forceSave bool
}

// state is a recorded subscription's state in SNS.
type state int

const (
	gone state = iota
	pending
	confirmed
)

func (s *Subscriber) state(ctx context.Context, arn string) (state, error) {
	ok, err := s.api.Confirmed(ctx, arn)
	switch {
	case errors.Is(err, ErrSubscriptionNotFound):
		return gone, nil
	case err != nil:
		return gone, err
	case ok:
		return confirmed, nil
	}
	return pending, nil
}

// topicOf is the topic of a subscription ARN (<topic ARN>:<id>).
func topicOf(subscriptionArn string) string {
	if i := strings.LastIndexByte(subscriptionArn, ':'); i > 0 {
		return subscriptionArn[:i]
	}
	return ""
}

// converge brings SNS in line with st, for the user's current email (""
// when unknown: the address is then not compared), saves st when it
// changed, and returns the resulting view. It only ever touches
// st.SubscriptionArn, the subscription recorded for this user, and
// Subscribe, which SNS refuses (ErrAddressTaken) rather than change a
// subscription with another user's filter policy.
func (s *Subscriber) converge(ctx context.Context, st Settings, email string, m mode) (View, error) {
	before := st
	topic := TopicFor(s.topics, st.UserID)
	cur := gone
	if st.SubscriptionArn != "" {
		var err error
		if cur, err = s.state(ctx, st.SubscriptionArn); err != nil {
			return View{}, err
		}
		moved := topicOf(st.SubscriptionArn) != topic || email != "" && !strings.EqualFold(st.Email, email)
		switch {
		case cur == gone:
			st.SubscriptionArn = ""
			if m.optOutIfGone && st.Enabled {
				st.Enabled = false
				s.log.InfoContext(ctx, "recorded subscription is gone: the user unsubscribed; notifications are now off",
					"sub", st.UserID)
			}
		case !st.Enabled || moved:
			if err := s.api.Unsubscribe(ctx, st.SubscriptionArn); err != nil && !errors.Is(err, ErrSubscriptionNotFound) {
				if cur == confirmed {
					return View{}, err // it still delivers: the change must not be recorded
				}
				// SNS cannot delete a subscription awaiting confirmation.
				s.log.WarnContext(ctx, "subscription awaiting confirmation not deleted; it lapses after 48 hours unless confirmed",
					"sub", st.UserID, "subscription", st.SubscriptionArn, "error", err.Error())
				if !st.Enabled {
					break // keep it recorded, to delete once it can be
				}
			}
			st.SubscriptionArn, cur = "", gone
		}
	}
	subscribed := ""
	if m.subscribe && st.Enabled && st.SubscriptionArn == "" {
		if strings.TrimSpace(email) == "" {
			return View{}, ErrNoAddress
		}
		arn, err := s.api.Subscribe(ctx, topic, email, FilterPolicy(st.UserID))
		if err != nil {
			if st != before {
				// Record what was undone (a deleted old subscription).
				if _, serr := s.settings.SaveSettings(ctx, stamp(st, s.now())); serr != nil {
					s.log.WarnContext(ctx, "saving notification settings failed", "sub", st.UserID, "error", serr.Error())
				}
			}
			return View{}, err
		}
		st.SubscriptionArn, st.Email, cur, subscribed = arn, email, pending, arn
		if c, err := s.state(ctx, arn); err == nil && c == confirmed {
			cur = confirmed // SNS returned an existing, confirmed subscription of this user
		}
	}
	if st != before || m.forceSave {
		saved, err := s.settings.SaveSettings(ctx, stamp(st, s.now()))
		if err != nil {
			if subscribed != "" {
				s.undo(ctx, st.UserID, subscribed)
			}
			return View{}, err
		}
		st = saved
	}
	return view(st, cur), nil
}

func stamp(st Settings, now time.Time) Settings {
	st.UpdatedAt = now.UTC().Truncate(time.Second)
	return st
}

// undo deletes a subscription made by a converge whose save lost to
// another writer, unless the winner recorded that same subscription.
func (s *Subscriber) undo(ctx context.Context, sub, arn string) {
	st, err := s.settings.LoadSettings(ctx, sub)
	if err == nil && st.SubscriptionArn == arn {
		return
	}
	if err := s.api.Unsubscribe(ctx, arn); err != nil && !errors.Is(err, ErrSubscriptionNotFound) {
		s.log.WarnContext(ctx, "could not delete an unrecorded subscription", "sub", sub, "subscription", arn, "error", err.Error())
	}
}

func view(st Settings, cur state) View {
	v := View{Enabled: st.Enabled, Status: StatusNotSubscribed, TimeZone: st.TimeZone}
	switch {
	case !st.Enabled:
		v.Status = StatusOff
	case st.SubscriptionArn == "":
	case cur == confirmed:
		v.Status, v.Email = StatusConfirmed, st.Email
	default:
		v.Status, v.Email = StatusPending, st.Email
	}
	return v
}
