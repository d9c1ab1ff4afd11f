package devserver

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Kinds of outbox email.
const (
	KindConfirmation = "subscription-confirmation"
	KindTaskExpired  = "task-expired"
	// KindTaskReminder is the reminder before a task's deadline.
	KindTaskReminder = "task-reminder"
)

// localSNS stands in for the notification topics: it is the
// notify.Subscriptions the PostAuthentication rule runs on, and it routes
// published notifications as SNS would (the user's shard topic, then the
// confirmed subscriptions whose filter policy matches the userId
// attribute) into the outbox.
//
// There is no inbox to click a confirmation link in, so a new subscription
// is confirmed at once; the confirmation email it would have sent is put
// in the outbox.
type localSNS struct {
	mu     sync.Mutex
	db     *store
	topics []string
	now    func() time.Time
	log    *slog.Logger
}

var _ notify.Subscriptions = (*localSNS)(nil)

// LocalTopics are the local stand-ins for the sharded notification topics.
func LocalTopics(shards int) []string {
	out := make([]string, shards)
	for i := range out {
		out[i] = "arn:local:sns:local:000000000000:unschedule-notifications-" + strconv.Itoa(i)
	}
	return out
}

func (l *localSNS) byArn(arn string) (Subscription, error) {
	all, err := l.db.Subscriptions()
	if err != nil {
		return Subscription{}, fmt.Errorf("read subscriptions: %w", err)
	}
	for _, s := range all {
		if s.Arn == arn {
			return s, nil
		}
	}
	return Subscription{}, fmt.Errorf("subscription %s: %w", arn, notify.ErrSubscriptionNotFound)
}

// Confirmed implements notify.Subscriptions.
func (l *localSNS) Confirmed(_ context.Context, arn string) (bool, error) {
	s, err := l.byArn(arn)
	return s.Confirmed, err
}

// Unsubscribe implements notify.Subscriptions.
func (l *localSNS) Unsubscribe(_ context.Context, arn string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.byArn(arn); err != nil {
		return err
	}
	return l.db.DeleteSubscription(arn)
}

// Subscribe implements notify.Subscriptions. As SNS, it returns the
// existing subscription for the same topic, protocol, endpoint and filter
// policy, and refuses one with another policy (notify.ErrAddressTaken).
func (l *localSNS) Subscribe(_ context.Context, topicArn, email, policy string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	all, err := l.db.Subscriptions()
	if err != nil {
		return "", fmt.Errorf("read subscriptions: %w", err)
	}
	for _, s := range all {
		if s.TopicArn == topicArn && s.Protocol == "email" && s.Endpoint == email {
			if !notify.SamePolicy(s.FilterPolicy, policy) {
				return "", fmt.Errorf("subscribe %s on %s: %w", email, topicArn, notify.ErrAddressTaken)
			}
			return s.Arn, nil
		}
	}
	s := Subscription{Arn: topicArn + ":" + strconv.FormatInt(l.now().UnixNano(), 36), TopicArn: topicArn,
		Protocol: "email", Endpoint: email, FilterPolicy: policy, Confirmed: true}
	if err := l.db.PutSubscription(s); err != nil {
		return "", err
	}
	_, err = l.send(Email{Kind: KindConfirmation, To: []string{email},
		Subject: "AWS Notification - Subscription Confirmation",
		Body: "You have chosen to subscribe to the topic:\n" + topicArn +
			"\n\nThe local dev server confirmed this subscription for you; SNS would have asked you to click a link.\n"})
	return s.Arn, err
}

// recipients are the endpoints SNS would deliver a message for userID to.
func (l *localSNS) recipients(userID string) ([]string, error) {
	all, err := l.db.Subscriptions()
	if err != nil {
		return nil, fmt.Errorf("read subscriptions: %w", err)
	}
	topic := notify.TopicFor(l.topics, userID)
	policy := notify.FilterPolicy(userID)
	to := []string{}
	for _, s := range all {
		if s.TopicArn == topic && s.Confirmed && notify.SamePolicy(s.FilterPolicy, policy) {
			to = append(to, s.Endpoint)
		}
	}
	return to, nil
}

// Deliver puts an expiry notification, or a reminder before the deadline
// (kind KindTaskReminder), in the outbox, addressed as SNS would route it.
func (l *localSNS) Deliver(n task.Notification) (Email, error) {
	to, err := l.recipients(n.UserID)
	if err != nil {
		return Email{}, err
	}
	// The message shows times in the user's zone, as the expiry
	// function's notifier does (notify.InUserTimeZone).
	if n, err = notify.UserTimeZone(context.Background(), l.db.settings, n); err != nil {
		l.log.Warn("time zone unknown: the email shows times in UTC", "taskId", n.TaskID, "error", err.Error())
	}
	m := notify.FormatMessage(n)
	kind := KindTaskExpired
	if n.Reminder != "" {
		kind = KindTaskReminder
	}
	return l.send(Email{Kind: kind, UserID: n.UserID, TaskID: n.TaskID, To: to,
		Subject: m.Subject, Body: m.Body})
}

// send stamps, stores and logs an outbox email.
func (l *localSNS) send(e Email) (Email, error) {
	e.At = l.now().UTC()
	e, err := l.db.AppendEmail(e)
	if err != nil {
		return e, fmt.Errorf("outbox: %w", err)
	}
	l.log.Info("outbox: email would have been sent", "seq", e.Seq, "kind", e.Kind, "to", strings.Join(e.To, ","),
		"userId", e.UserID, "taskId", e.TaskID, "subject", e.Subject)
	return e, nil
}
