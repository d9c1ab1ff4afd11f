package devserver

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory/snsfake"
)

// Kinds of outbox email.
const (
	KindConfirmation = "subscription-confirmation"
	KindTaskExpired  = "task-expired"
	// KindTaskReminder is the reminder before a task's deadline.
	KindTaskReminder = "task-reminder"
)

// localSNS stands in for the notification topics: the functions' SNS
// adapter (awssns) over the in-memory model of SNS (snsfake, saved with
// the state), which routes a notification as SNS would, into the outbox.
// With no inbox to click a confirmation link in, a new subscription is
// confirmed at once; the confirmation email lands in the outbox.
type localSNS struct {
	*awssns.Subscriptions
	mu   sync.Mutex // one call at a time: a publish's deliveries are the last ones
	fake *snsfake.SNS
	pub  *awssns.Publisher
	db   *store
	now  func() time.Time
	log  *slog.Logger
}

var (
	_ notify.Subscriptions = (*localSNS)(nil)
	_ task.Notifier        = (*localSNS)(nil)
)

// LocalTopics are the local stand-ins for the sharded notification topics.
func LocalTopics(shards int) []string {
	out := make([]string, shards)
	for i := range out {
		out[i] = "arn:local:sns:local:000000000000:unschedule-notifications-" + strconv.Itoa(i)
	}
	return out
}

func newLocalSNS(db *store, topics []string, now func() time.Time, log *slog.Logger) (*localSNS, error) {
	subs, err := awssns.NewSubscriptions(db.sns)
	if err != nil {
		return nil, err
	}
	pub, err := awssns.NewPublisher(db.sns, topics)
	if err != nil {
		return nil, err
	}
	return &localSNS{Subscriptions: subs, fake: db.sns, pub: pub, db: db, now: now, log: log}, nil
}

// Subscribe implements notify.Subscriptions: SNS's subscribe, then at once
// the click on the confirmation link SNS sent, if it sent one.
func (l *localSNS) Subscribe(ctx context.Context, topicArn, email, policy string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sent := l.fake.ConfirmationEmails(email)
	arn, err := l.Subscriptions.Subscribe(ctx, topicArn, email, policy)
	if err != nil || l.fake.ConfirmationEmails(email) == sent {
		return arn, err
	}
	if err := l.fake.Confirm(topicArn, email); err != nil {
		return "", err
	}
	l.send(Email{Kind: KindConfirmation, To: []string{email},
		Subject: "AWS Notification - Subscription Confirmation",
		Body: "You have chosen to subscribe to the topic:\n" + topicArn +
			"\n\nThe local dev server confirmed this subscription for you; SNS would have asked you to click a link.\n"})
	return arn, nil
}

// Publish implements task.Notifier: it publishes an expiry notification,
// or a reminder before the deadline (KindTaskReminder), and puts it in
// the outbox addressed to whom SNS delivered it.
func (l *localSNS) Publish(ctx context.Context, n task.Notification) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	// The message shows times in the user's zone, as the notify
	// function's does (notify.InUserTimeZone).
	n, err := notify.UserTimeZone(ctx, l.db.settings, n)
	if err != nil {
		l.log.Warn("time zone unknown: the email shows times in UTC", "taskId", n.TaskID, "error", err.Error())
	}
	before := len(l.fake.Deliveries())
	if err := l.pub.Publish(ctx, n); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	to := []string{}
	for _, d := range l.fake.Deliveries()[before:] {
		to = append(to, d.Endpoint)
	}
	m := notify.FormatMessage(n)
	kind := KindTaskExpired
	if n.Reminder != "" {
		kind = KindTaskReminder
	}
	l.send(Email{Kind: kind, UserID: n.UserID, TaskID: n.TaskID, To: to, Subject: m.Subject, Body: m.Body})
	return nil
}

// send stamps, stores and logs an outbox email.
func (l *localSNS) send(e Email) {
	e.At = l.now().UTC()
	e = l.db.AppendEmail(e)
	l.log.Info("outbox: email would have been sent", "seq", e.Seq, "kind", e.Kind, "to", strings.Join(e.To, ","),
		"userId", e.UserID, "taskId", e.TaskID, "subject", e.Subject)
}
