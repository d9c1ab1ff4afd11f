package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// PendingConfirmation is the SubscriptionArn that SNS lists for a
// subscription whose owner has not yet clicked the confirmation link.
const PendingConfirmation = "PendingConfirmation"

// deleted is the SubscriptionArn SNS may list, for a short time, for a
// subscription just removed.
const deleted = "Deleted"

// Subscription is one subscription as SNS lists it.
type Subscription struct {
	// Arn is the subscription ARN, or PendingConfirmation.
	Arn      string
	Protocol string
	Endpoint string
}

// Pending reports whether the subscription awaits confirmation.
func (s Subscription) Pending() bool { return s.Arn == PendingConfirmation }

// SubscriptionPage is one page of a topic's subscriptions. Cursor is ""
// on the last page.
type SubscriptionPage struct {
	Subscriptions []Subscription
	Cursor        string
}

// Subscriptions is what the PostAuthentication trigger needs of SNS. The
// adapter wraps ErrFilterPolicyLimit when SNS answers
// FilterPolicyLimitExceeded.
type Subscriptions interface {
	// List reads one page of a topic's subscriptions (cursor "" first).
	List(ctx context.Context, topicArn, cursor string) (SubscriptionPage, error)
	// FilterPolicy reads a confirmed subscription's filter policy ("" if none).
	FilterPolicy(ctx context.Context, subscriptionArn string) (string, error)
	// SetFilterPolicy replaces a confirmed subscription's filter policy.
	SetFilterPolicy(ctx context.Context, subscriptionArn, policy string) error
	// Subscribe subscribes an email address with the filter policy set in
	// the same call, and returns the subscription ARN.
	Subscribe(ctx context.Context, topicArn, email, policy string) (string, error)
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
	// Unchanged: a confirmed subscription with the right policy exists.
	Unchanged Outcome = "unchanged"
	// Repaired: a confirmed subscription had a missing or wrong policy,
	// now set.
	Repaired Outcome = "repaired"
	// AwaitingConfirmation: a subscription awaits its confirmation click;
	// nothing is done, so no new confirmation email goes out.
	AwaitingConfirmation Outcome = "awaiting-confirmation"
	// Failed: an error was logged and counted; the sign-in goes on.
	Failed Outcome = "failed"
)

// Subscriber is the PostAuthentication rule: every user who signs in has
// exactly one email subscription, on their shard's topic, filtered to
// their own notifications.
type Subscriber struct {
	api     Subscriptions
	topics  []string
	log     *slog.Logger
	metrics Counter
}

// SubscriberDeps are a Subscriber's collaborators.
type SubscriberDeps struct {
	Subscriptions Subscriptions
	// TopicArns are the shard topics, in shard order. At least one.
	TopicArns []string
	// Metrics receives the counts; nil counts nothing.
	Metrics Counter
	// Log defaults to slog.Default().
	Log *slog.Logger
}

// NewSubscriber checks its dependencies and returns a Subscriber.
func NewSubscriber(d SubscriberDeps) (*Subscriber, error) {
	if d.Subscriptions == nil {
		return nil, errors.New("notify: a Subscriptions is required")
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
	return &Subscriber{api: d.Subscriptions, topics: append([]string(nil), d.TopicArns...),
		log: d.Log, metrics: d.Metrics}, nil
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
			"sub", sub, "topic", topic, "filterPolicyLimit", limit, "error", err.Error())
		return Failed
	}
	switch out {
	case Subscribed:
		s.metrics.Add(MetricSubscribed, 1)
	case Repaired:
		s.metrics.Add(MetricFilterPolicyRepaired, 1)
	}
	s.log.InfoContext(ctx, "notification subscription checked", "sub", sub, "topic", topic, "outcome", string(out))
	return out
}

// Ensure makes sure the user (sub, email) has one email subscription on
// their shard's topic with FilterPolicy(sub):
//   - a confirmed subscription is never subscribed again; a missing or
//     wrong filter policy on it is repaired;
//   - a subscription awaiting confirmation is left alone: subscribing
//     again would send another confirmation email on every sign-in;
//   - with none, it subscribes with the filter policy in the same call, so
//     no subscription ever exists without one (an unfiltered subscription
//     would receive every user's notifications).
//
// Two sign-ins of the same user may race: both list, both find nothing,
// both subscribe. That makes no duplicate. SNS Subscribe is idempotent for
// the same topic, protocol, endpoint and attributes: the second call
// returns the subscription the first one made. Both calls send the same
// attributes, since the only one is FilterPolicy(sub), a pure function of
// the sub. At worst the race sends the confirmation email twice.
//
// The existing subscription is found by its endpoint, compared without
// regard to case.
func (s *Subscriber) Ensure(ctx context.Context, sub, email string) (Outcome, error) {
	if sub == "" || email == "" {
		return Failed, fmt.Errorf("sign-in event lacks the sub or email attribute (sub %q, email present: %t)", sub, email != "")
	}
	topic := TopicFor(s.topics, sub)
	policy := FilterPolicy(sub)
	found, ok, err := s.find(ctx, topic, email)
	if err != nil {
		return Failed, err
	}
	if !ok {
		if _, err := s.api.Subscribe(ctx, topic, email, policy); err != nil {
			return Failed, fmt.Errorf("subscribe on %s: %w", topic, err)
		}
		return Subscribed, nil
	}
	if found.Pending() {
		return AwaitingConfirmation, nil
	}
	got, err := s.api.FilterPolicy(ctx, found.Arn)
	if err != nil {
		return Failed, fmt.Errorf("read filter policy of %s: %w", found.Arn, err)
	}
	if SamePolicy(got, policy) {
		return Unchanged, nil
	}
	if err := s.api.SetFilterPolicy(ctx, found.Arn, policy); err != nil {
		return Failed, fmt.Errorf("repair filter policy of %s: %w", found.Arn, err)
	}
	return Repaired, nil
}

// find pages through the topic's subscriptions for the email endpoint. A
// confirmed subscription wins over a pending one.
func (s *Subscriber) find(ctx context.Context, topic, email string) (Subscription, bool, error) {
	var pending Subscription
	havePending := false
	cursor := ""
	for {
		page, err := s.api.List(ctx, topic, cursor)
		if err != nil {
			return Subscription{}, false, fmt.Errorf("list subscriptions of %s: %w", topic, err)
		}
		for _, sb := range page.Subscriptions {
			if sb.Protocol != "email" || !strings.EqualFold(sb.Endpoint, email) || sb.Arn == deleted {
				continue
			}
			if !sb.Pending() {
				return sb, true, nil
			}
			pending, havePending = sb, true
		}
		if page.Cursor == "" {
			return pending, havePending, nil
		}
		cursor = page.Cursor
	}
}
