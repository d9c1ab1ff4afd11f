package awssns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/memory/snsfake"
)

func topicsN(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("arn:aws:sns:eu-west-1:111122223333:unschedule-notify-%d", i)
	}
	return out
}

// The routing property, through the real code paths: for any sub, the
// PostAuthentication rule (notify.Subscriber over the Subscriptions
// adapter) subscribes on the topic the Publisher publishes to, and the
// message reaches that user's address and nobody else's.
func TestRoutingIsTheSameInPostAuthAndExpiry(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	for _, shards := range []int{1, 3, 8} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			topics := topicsN(shards)
			fake := snsfake.New(topics...)
			subs, _ := NewSubscriptions(fake)
			var logs bytes.Buffer
			subscriber, err := notify.NewSubscriber(notify.SubscriberDeps{Subscriptions: subs, Settings: memory.NewSettings(),
				TopicArns: topics, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			pub, _ := NewPublisher(fake, topics)

			const users = 150
			emails := map[string]string{}
			for i := range users {
				sub := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.Intn(1<<16), rng.Intn(1<<12), rng.Intn(1<<12), rng.Int63n(1<<48))
				emails[sub] = fmt.Sprintf("user%d@example.com", i)
				if out := subscriber.OnSignIn(context.Background(), sub, emails[sub]); out != notify.Subscribed {
					t.Fatalf("sign-in of %s: %s; logs %s", sub, out, logs.String())
				}
			}
			fake.ConfirmAll()

			hit := map[string]bool{}
			for sub, email := range emails {
				subscribed := fake.Subscriptions(email)
				if len(subscribed) != 1 {
					t.Fatalf("%s has %d subscriptions", email, len(subscribed))
				}
				before := len(fake.Deliveries())
				n := task.Notification{UserID: sub, TaskID: "T", Title: "t", DueAt: time.Unix(0, 0)}
				if err := pub.Publish(context.Background(), n); err != nil {
					t.Fatal(err)
				}
				got := fake.Deliveries()[before:]
				if len(got) != 1 || got[0].Endpoint != email || got[0].TopicArn != subscribed[0].TopicArn {
					t.Fatalf("publish for %s (subscribed on %s) delivered %+v", sub, subscribed[0].TopicArn, got)
				}
				hit[got[0].TopicArn] = true
			}
			if len(hit) != shards {
				t.Fatalf("%d of %d shards used", len(hit), shards)
			}
		})
	}
}

// A full shard topic refuses the next filter policy; PostAuth swallows it,
// counts both metrics, and the users already there keep their delivery.
func TestFilterPolicyLimitBecomesAMetric(t *testing.T) {
	topics := topicsN(1)
	fake := snsfake.New(topics...)
	fake.FilterPolicyLimit = 3
	subs, _ := NewSubscriptions(fake)
	var emf bytes.Buffer
	rec := metrics.New("postauth", &emf)
	subscriber, _ := notify.NewSubscriber(notify.SubscriberDeps{Subscriptions: subs, Settings: memory.NewSettings(), TopicArns: topics, Metrics: rec,
		Log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil))})
	var outcomes []notify.Outcome
	for i := range 4 {
		outcomes = append(outcomes, subscriber.OnSignIn(context.Background(), fmt.Sprint("sub-", i), fmt.Sprintf("u%d@x.io", i)))
	}
	want := []notify.Outcome{notify.Subscribed, notify.Subscribed, notify.Subscribed, notify.Failed}
	if fmt.Sprint(outcomes) != fmt.Sprint(want) {
		t.Fatalf("outcomes %v, want %v", outcomes, want)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{`"FilterPolicyLimitExceeded":1`, `"NotificationSubscribeErrors":1`, `"NotificationSubscribed":3`} {
		if !bytes.Contains(emf.Bytes(), []byte(m)) {
			t.Errorf("EMF lacks %s: %s", m, emf.String())
		}
	}
	_, err := subs.Subscribe(context.Background(), topics[0], "u9@x.io", notify.FilterPolicy("sub-9"))
	if !errors.Is(err, notify.ErrFilterPolicyLimit) {
		t.Fatalf("Subscribe on a full topic: %v, want ErrFilterPolicyLimit", err)
	}
}
