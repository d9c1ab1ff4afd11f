package todotest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/suitecheck"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// NotifierDelivery is one message as a subscriber receives it.
type NotifierDelivery struct {
	Subject string
	Message string
}

// ContractNotifier is what NotifierContract tests: the notifier port, and
// the subscribers' side of the topics it publishes to.
type ContractNotifier interface {
	task.Notifier
	// Subscribe adds a confirmed subscriber on topicArn with the filter
	// policy ("" for none) and returns its inbox.
	Subscribe(t *testing.T, topicArn, policy string) (inbox string)
	// Delivered returns what the inbox received so far, oldest first.
	Delivered(t *testing.T, inbox string) []NotifierDelivery
}

// NotifierBackend is one implementation under NotifierContract.
type NotifierBackend struct {
	// New returns a notifier that publishes to shards new topics, in
	// shard order, and the topics' ARNs.
	New func(t *testing.T, shards int) (ContractNotifier, []string)
	// PublishOnly marks a notifier that only records what it publishes
	// (memory.Outbox): the routing cases do not apply to it, and its
	// Subscribe and Delivered are never called.
	PublishOnly bool
}

// NotifierContract is the behaviour of expiry notifications that every
// task.Notifier must share with SNS: each is published with the userId
// message attribute on its user's shard topic, and a subscription whose
// filter policy is notify.FilterPolicy(user) receives that user's
// notifications and no one else's. The SNS adapter on the in-memory SNS
// model and on moto run it (moto delivers to an SQS subscriber in
// process, applying the filter policy), and the memory outbox runs the
// cases that do not need subscribers.
func NotifierContract(t *testing.T, b NotifierBackend) {
	ctx := context.Background()
	note := func(user string, n int) task.Notification {
		return task.Notification{UserID: user, TaskID: ContractID(n), Title: "task " + strconv.Itoa(n) + " of " + user,
			DueAt: contractT0.Add(-time.Hour), Link: "https://app.example/tasks/" + ContractID(n)}
	}
	publish := func(t *testing.T, p task.Notifier, ns ...task.Notification) {
		t.Helper()
		for _, n := range ns {
			if err := p.Publish(ctx, n); err != nil {
				t.Fatalf("publish %s/%s: %v", n.UserID, n.TaskID, err)
			}
		}
	}
	delivered := func(ns ...task.Notification) []NotifierDelivery {
		var out []NotifierDelivery
		for _, n := range ns {
			m := notify.FormatMessage(n)
			out = append(out, NotifierDelivery{Subject: m.Subject, Message: m.Body})
		}
		return out
	}
	wantInbox := func(t *testing.T, c ContractNotifier, name, inbox string, want []NotifierDelivery) {
		t.Helper()
		suitecheck.Equal(t, name+" received", c.Delivered(t, inbox), want)
	}
	routing := func(t *testing.T) {
		t.Helper()
		if b.PublishOnly {
			t.Skip("the backend only records what it publishes: it has no subscribers to route to")
		}
	}
	// sameShard returns a user id that starts with user and shares its
	// shard: a filter must match the whole value, not a prefix.
	sameShard := func(topics []string, user string) string {
		for i := 0; ; i++ {
			other := user + "-" + strconv.Itoa(i)
			if notify.TopicFor(topics, other) == notify.TopicFor(topics, user) {
				return other
			}
		}
	}

	t.Run("a subscription filtered on a user receives that user's notifications only", func(t *testing.T) {
		routing(t)
		c, topics := b.New(t, 2)
		users := []string{"alice", "bob", "carol"}
		inbox := map[string]string{}
		for _, u := range users[:2] {
			inbox[u] = c.Subscribe(t, notify.TopicFor(topics, u), notify.FilterPolicy(u))
		}
		a1, b1, b2, c1 := note("alice", 1), note("bob", 2), note("bob", 3), note("carol", 4)
		publish(t, c, a1, b1, c1, b2)
		wantInbox(t, c, "alice", inbox["alice"], delivered(a1))
		wantInbox(t, c, "bob", inbox["bob"], delivered(b1, b2))
	})

	t.Run("a filter matches the whole user id, not a prefix", func(t *testing.T) {
		routing(t)
		c, topics := b.New(t, 2)
		other := sameShard(topics, "alice")
		alice := c.Subscribe(t, notify.TopicFor(topics, "alice"), notify.FilterPolicy("alice"))
		publish(t, c, note(other, 1))
		wantInbox(t, c, "alice", alice, nil)
	})

	t.Run("a user's notifications go to the topic of the user's shard only", func(t *testing.T) {
		routing(t)
		c, topics := b.New(t, 2)
		home := notify.TopicFor(topics, "alice")
		away := topics[0]
		if away == home {
			away = topics[1]
		}
		onHome := c.Subscribe(t, home, "")
		onAway := c.Subscribe(t, away, notify.FilterPolicy("alice"))
		n := note("alice", 1)
		publish(t, c, n)
		wantInbox(t, c, "the home shard's subscriber", onHome, delivered(n))
		wantInbox(t, c, "alice's filter on another shard", onAway, nil)
	})

	t.Run("a subscription without a filter policy receives every message of its topic", func(t *testing.T) {
		// "By default, an Amazon SNS topic subscriber receives every
		// message that's published to the topic":
		// https://docs.aws.amazon.com/sns/latest/dg/sns-message-filtering.html
		routing(t)
		c, topics := b.New(t, 1)
		all := c.Subscribe(t, topics[0], "")
		a, bb := note("alice", 1), note("bob", 2)
		publish(t, c, a, bb)
		wantInbox(t, c, "the unfiltered subscriber", all, delivered(a, bb))
	})

	t.Run("publishing for a user nobody subscribed succeeds", func(t *testing.T) {
		c, _ := b.New(t, 2)
		publish(t, c, note("nobody", 1))
	})

	t.Run("a notification without a user id is refused", func(t *testing.T) {
		c, _ := b.New(t, 2)
		if err := c.Publish(ctx, note("", 1)); err == nil {
			t.Fatal("published a notification that no filter policy can route (no userId attribute)")
		}
	})
}
