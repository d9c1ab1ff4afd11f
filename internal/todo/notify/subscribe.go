package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
)

// Subscriptions is what the notification rules need of SNS: only calls on
// one subscription, by the ARN recorded for its user, and Subscribe. The
// adapter wraps ErrFilterPolicyLimit when SNS answers
// FilterPolicyLimitExceeded, ErrAddressTaken when the topic holds the
// address with another filter policy, and ErrSubscriptionNotFound when the
// subscription does not exist.
type Subscriptions interface {
	// Subscribe subscribes an email address with the filter policy set in
	// the same call, and returns the subscription ARN (also while it
	// awaits confirmation).
	Subscribe(ctx context.Context, topicArn, email, policy string) (string, error)
	// Unsubscribe deletes a subscription.
	Unsubscribe(ctx context.Context, subscriptionArn string) error
	// Confirmed reports whether a subscription is confirmed (false: it
	// awaits its confirmation click).
	Confirmed(ctx context.Context, subscriptionArn string) (bool, error)
}

// Counter counts metrics; *metrics.Recorder is one.
type Counter interface {
	Add(name string, n float64)
}

// Outcome says what a sign-in did to the user's subscription.
type Outcome string

// Outcomes of Subscriber.OnSignIn.
const (
	// Subscribed: there was none; a subscription was made and SNS sent
	// the confirmation email.
	Subscribed Outcome = "subscribed"
	// Unchanged: the user's confirmed subscription exists.
	Unchanged Outcome = "unchanged"
	// AwaitingConfirmation: the user's subscription awaits its
	// confirmation click; nothing is done, so no new confirmation email
	// goes out.
	AwaitingConfirmation Outcome = "awaiting-confirmation"
	// Off: the user turned notifications off, or unsubscribed through an
	// email's link (found at this sign-in and recorded); nothing is
	// subscribed.
	Off Outcome = "off"
	// Failed: an error was logged and counted; the sign-in goes on.
	Failed Outcome = "failed"
)

// Subscriber holds the notification rules: the PostAuthentication rule
// (OnSignIn) and the user's setting (Settings, SetEnabled). Each user has
// at most one email subscription, on their shard's topic, filtered to
// their own notifications, and recorded in their Settings.
type Subscriber struct {
	api      Subscriptions
	settings SettingsStore
	topics   []string
	log      *slog.Logger
	metrics  Counter
	now      func() time.Time
}

// SubscriberDeps are a Subscriber's collaborators.
type SubscriberDeps struct {
	Subscriptions Subscriptions
	// Settings records each user's preference and subscription.
	Settings SettingsStore
	// TopicArns are the shard topics, in shard order. At least one.
	TopicArns []string
	// Metrics receives the counts; nil counts nothing.
	Metrics Counter
	// Log defaults to slog.Default().
	Log *slog.Logger
	// Now defaults to time.Now.
	Now func() time.Time
}

// NewSubscriber checks its dependencies and returns a Subscriber.
func NewSubscriber(d SubscriberDeps) (*Subscriber, error) {
	if d.Subscriptions == nil {
		return nil, errors.New("notify: a Subscriptions is required")
	}
	if d.Settings == nil {
		return nil, errors.New("notify: a SettingsStore is required")
	}
	if len(d.TopicArns) == 0 {
		return nil, errors.New("notify: at least one topic ARN is required")
	}
	if d.Metrics == nil {
		d.Metrics = nopCounter{}
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Now == nil {
		d.Now = clock.System{}.Now
	}
	return &Subscriber{api: d.Subscriptions, settings: d.Settings, topics: append([]string(nil), d.TopicArns...),
		log: d.Log, metrics: d.Metrics, now: d.Now}, nil
}

type nopCounter struct{}

func (nopCounter) Add(string, float64) {}

// OnSignIn runs Ensure and swallows its error: the error is logged and
// counted (MetricSubscribeErrors, and MetricFilterPolicyLimitExceeded when
// the topic is full), and the sign-in goes on. A notification problem
// never blocks a sign-in.
func (s *Subscriber) OnSignIn(ctx context.Context, sub, email string) Outcome {
	topic := ""
	if sub != "" {
		topic = TopicFor(s.topics, sub)
	}
	out, err := s.Ensure(ctx, sub, email)
	if err != nil {
		s.metrics.Add(MetricSubscribeErrors, 1)
		limit := errors.Is(err, ErrFilterPolicyLimit)
		if limit {
			s.metrics.Add(MetricFilterPolicyLimitExceeded, 1)
		}
		s.log.ErrorContext(ctx, "notification subscription failed; sign-in continues",
			"sub", sub, "topic", topic, "filterPolicyLimit", limit, "addressTaken", errors.Is(err, ErrAddressTaken),
			"error", err.Error())
		return Failed
	}
	if out == Subscribed {
		s.metrics.Add(MetricSubscribed, 1)
	}
	s.log.InfoContext(ctx, "notification subscription checked", "sub", sub, "topic", topic, "outcome", string(out))
	return out
}

// Ensure applies the user's settings at sign-in:
//   - notifications off: nothing is subscribed (a subscription still
//     recorded for deletion is deleted if SNS now can);
//   - the recorded subscription exists: nothing changes, so no new
//     confirmation email goes out while one awaits its click;
//   - the recorded subscription is gone (the user unsubscribed through an
//     email's link, or let the confirmation lapse): notifications are
//     turned off and the user is not subscribed again until they turn
//     them back on in the app;
//   - the user's address or shard changed: the recorded subscription is
//     replaced by one for the new address on the right topic;
//   - no subscription yet (a new user): subscribe, with the filter policy
//     set in the same call, and record it.
//
// A subscription is never found by email address, and no subscription but
// the one recorded for this user is ever changed or deleted. Subscribing
// an address that the topic holds for another user fails with
// ErrAddressTaken: SNS refuses it, and that user's subscription is left
// as it is.
//
// Two sign-ins of the same user may race: both subscribe (SNS Subscribe is
// idempotent for the same topic, endpoint and attributes, so they get the
// same subscription) and one save loses with ErrSettingsConflict.
func (s *Subscriber) Ensure(ctx context.Context, sub, email string) (Outcome, error) {
	if sub == "" || email == "" {
		return Failed, fmt.Errorf("sign-in event lacks the sub or email attribute (sub %q, email present: %t)", sub, email != "")
	}
	st, err := s.load(ctx, sub)
	if err != nil {
		return Failed, err
	}
	before := st.SubscriptionArn
	v, err := s.converge(ctx, st, email, mode{subscribe: true, optOutIfGone: true})
	if err != nil {
		return Failed, err
	}
	switch {
	case v.Status == StatusOff:
		return Off, nil
	case v.Status == StatusConfirmed:
		return Unchanged, nil
	case before == "" || !strings.EqualFold(st.Email, email) || topicOf(before) != TopicFor(s.topics, sub):
		return Subscribed, nil
	}
	return AwaitingConfirmation, nil
}
