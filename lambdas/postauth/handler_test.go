package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/memory/snsfake"
	"github.com/unschedule/unschedule/internal/tooling/testfixture"
)

var topics = []string{
	"arn:aws:sns:eu-west-1:111122223333:unschedule-notify-0",
	"arn:aws:sns:eu-west-1:111122223333:unschedule-notify-1",
	"arn:aws:sns:eu-west-1:111122223333:unschedule-notify-2",
}

const (
	sub   = "0b7c4b1e-6a2f-4f3e-9d1a-3c5e8f2a9b10"
	email = "ada@example.com"
)

func fixture(t *testing.T, name string) events.CognitoEventUserPoolsPostAuthentication {
	return testfixture.Load[events.CognitoEventUserPoolsPostAuthentication](t, name)
}

// rig is the trigger as deployed, with SNS replaced by the in-memory model.
type rig struct {
	sns      *snsfake.SNS
	settings *memory.Settings
	h        *handler
	emf      *bytes.Buffer
	logs     *bytes.Buffer
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{sns: snsfake.New(topics...), settings: memory.NewSettings(), emf: &bytes.Buffer{}, logs: &bytes.Buffer{}}
	log := slog.New(slog.NewJSONHandler(r.logs, nil))
	subs, err := awssns.NewSubscriptions(r.sns)
	if err != nil {
		t.Fatal(err)
	}
	rec := metrics.New(FunctionName, r.emf)
	s, err := notify.NewSubscriber(notify.SubscriberDeps{Subscriptions: subs, Settings: r.settings, TopicArns: topics, Metrics: rec, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	r.h = newHandler(s, rec, log)
	return r
}

// signIn runs one invocation and checks the trigger's contract: the event
// comes back unchanged and no error is returned.
func (r *rig) signIn(t *testing.T, ev events.CognitoEventUserPoolsPostAuthentication) {
	t.Helper()
	out, err := r.h.handle(context.Background(), ev)
	if err != nil {
		t.Fatalf("handler returned %v: a sign-in would be blocked", err)
	}
	if !reflect.DeepEqual(out, ev) {
		t.Fatalf("event changed: %+v", out)
	}
}

// emfCounts sums every metric written.
func emfCounts(t *testing.T, emf *bytes.Buffer) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(emf.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("EMF line not JSON: %q", line)
		}
		if rec["Function"] != FunctionName {
			t.Fatalf("EMF Function %v", rec["Function"])
		}
		for k, v := range rec {
			if f, ok := v.(float64); ok {
				out[k] += f
			}
		}
	}
	return out
}

func TestHandle(t *testing.T) {
	home := notify.TopicFor(topics, sub)
	policy := notify.FilterPolicy(sub)
	type want struct {
		subscriptions int
		policy        string // of the one subscription
		confirmed     bool
		subscribes    int
		confirmations int
		metrics       map[string]float64
	}
	for _, tc := range []struct {
		name    string
		fixture string
		setup   func(f *snsfake.SNS)
		// run signs in; between sign-ins it may act on SNS (confirm).
		run  func(t *testing.T, r *rig, ev events.CognitoEventUserPoolsPostAuthentication)
		want want
	}{
		{
			name: "first sign-in subscribes with the filter policy",
			run:  func(t *testing.T, r *rig, ev events.CognitoEventUserPoolsPostAuthentication) { r.signIn(t, ev) },
			want: want{subscriptions: 1, policy: policy, subscribes: 1, confirmations: 1,
				metrics: map[string]float64{notify.MetricSubscribed: 1}},
		},
		{
			name: "repeated sign-in after confirmation makes no duplicate",
			run: func(t *testing.T, r *rig, ev events.CognitoEventUserPoolsPostAuthentication) {
				r.signIn(t, ev)
				if err := r.sns.Confirm(home, email); err != nil {
					t.Fatal(err)
				}
				r.signIn(t, ev)
				r.signIn(t, ev)
			},
			want: want{subscriptions: 1, policy: policy, confirmed: true, subscribes: 1, confirmations: 1,
				metrics: map[string]float64{notify.MetricSubscribed: 1}},
		},
		{
			name: "pending confirmation: no new subscribe, no new email",
			run: func(t *testing.T, r *rig, ev events.CognitoEventUserPoolsPostAuthentication) {
				r.signIn(t, ev)
				r.signIn(t, ev)
				r.signIn(t, ev)
			},
			want: want{subscriptions: 1, policy: policy, subscribes: 1, confirmations: 1,
				metrics: map[string]float64{notify.MetricSubscribed: 1}},
		},
		{
			name: "another user's subscription of this address is left as it is",
			setup: func(f *snsfake.SNS) {
				f.Seed(home, "email", email, map[string]string{"FilterPolicy": notify.FilterPolicy("someone-else")}, true)
			},
			run: func(t *testing.T, r *rig, ev events.CognitoEventUserPoolsPostAuthentication) { r.signIn(t, ev) },
			want: want{subscriptions: 1, policy: notify.FilterPolicy("someone-else"), confirmed: true, subscribes: 1,
				metrics: map[string]float64{notify.MetricSubscribeErrors: 1}},
		},
		{
			name: "a user who unsubscribed through the email link is not subscribed again",
			run: func(t *testing.T, r *rig, ev events.CognitoEventUserPoolsPostAuthentication) {
				r.signIn(t, ev)
				if err := r.sns.Confirm(home, email); err != nil {
					t.Fatal(err)
				}
				if err := r.sns.OptOut(home, email); err != nil {
					t.Fatal(err)
				}
				r.signIn(t, ev)
				r.signIn(t, ev)
			},
			want: want{subscribes: 1, confirmations: 1, metrics: map[string]float64{notify.MetricSubscribed: 1}},
		},
		{
			name: "SNS error is swallowed and counted",
			setup: func(f *snsfake.SNS) {
				f.Fail = func(op string) error {
					if op == "Subscribe" {
						return errors.New("ThrottledException: rate exceeded")
					}
					return nil
				}
			},
			run:  func(t *testing.T, r *rig, ev events.CognitoEventUserPoolsPostAuthentication) { r.signIn(t, ev) },
			want: want{subscribes: 1, metrics: map[string]float64{notify.MetricSubscribeErrors: 1}},
		},
		{
			name: "FilterPolicyLimitExceeded is swallowed and counted apart",
			setup: func(f *snsfake.SNS) {
				f.FilterPolicyLimit = 1
				f.Seed(home, "email", "grace@example.org", map[string]string{"FilterPolicy": notify.FilterPolicy("grace")}, true)
			},
			run: func(t *testing.T, r *rig, ev events.CognitoEventUserPoolsPostAuthentication) { r.signIn(t, ev) },
			want: want{subscribes: 1, metrics: map[string]float64{
				notify.MetricSubscribeErrors: 1, notify.MetricFilterPolicyLimitExceeded: 1}},
		},
		{
			name:    "event without email is swallowed and counted",
			fixture: "signin_no_email.json",
			run:     func(t *testing.T, r *rig, ev events.CognitoEventUserPoolsPostAuthentication) { r.signIn(t, ev) },
			want:    want{metrics: map[string]float64{notify.MetricSubscribeErrors: 1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			if tc.setup != nil {
				tc.setup(r.sns)
			}
			name := tc.fixture
			if name == "" {
				name = "signin.json"
			}
			tc.run(t, r, fixture(t, name))

			got := r.sns.Subscriptions(email)
			if len(got) != tc.want.subscriptions {
				t.Fatalf("%d subscriptions, want %d: %+v", len(got), tc.want.subscriptions, got)
			}
			if len(got) == 1 {
				s := got[0]
				if s.TopicArn != home || s.Protocol != "email" || s.Attributes["FilterPolicy"] != tc.want.policy || s.Confirmed != tc.want.confirmed {
					t.Fatalf("subscription %+v, want on %s with %s, confirmed %t", s, home, tc.want.policy, tc.want.confirmed)
				}
			}
			if n := r.sns.Calls("Subscribe"); n != tc.want.subscribes {
				t.Errorf("Subscribe called %d times, want %d", n, tc.want.subscribes)
			}
			if n := r.sns.ConfirmationEmails(email); n != tc.want.confirmations {
				t.Errorf("%d confirmation emails, want %d", n, tc.want.confirmations)
			}
			if m := emfCounts(t, r.emf); fmt.Sprint(m) != fmt.Sprint(tc.want.metrics) {
				t.Errorf("metrics %v, want %v", m, tc.want.metrics)
			}
		})
	}
}

type panicHook struct{}

func (panicHook) OnSignIn(context.Context, string, string) notify.Outcome { panic("boom") }

type deadlineHook struct{ hasDeadline bool }

func (d *deadlineHook) OnSignIn(ctx context.Context, _, _ string) notify.Outcome {
	_, d.hasDeadline = ctx.Deadline()
	return notify.Unchanged
}

func TestHandleNeverBlocksSignIn(t *testing.T) {
	ev := fixture(t, "signin.json")
	t.Run("panic is recovered and counted", func(t *testing.T) {
		var emf bytes.Buffer
		h := newHandler(panicHook{}, metrics.New(FunctionName, &emf), slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)))
		out, err := h.handle(context.Background(), ev)
		if err != nil || !reflect.DeepEqual(out, ev) {
			t.Fatalf("handle = %+v, %v", out, err)
		}
		if m := emfCounts(t, &emf); m[notify.MetricSubscribeErrors] != 1 {
			t.Fatalf("metrics %v", m)
		}
	})
	t.Run("SNS work is bounded by the budget", func(t *testing.T) {
		hook := &deadlineHook{}
		h := newHandler(hook, metrics.New(FunctionName, &bytes.Buffer{}), slog.Default())
		if _, err := h.handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if !hook.hasDeadline || Budget >= 5*time.Second {
			t.Fatalf("deadline set: %t, budget %v (Cognito waits 5s)", hook.hasDeadline, Budget)
		}
	})
}

func TestSignInUser(t *testing.T) {
	for _, tc := range []struct{ fixture, sub, email string }{
		{"signin.json", sub, email},
		{"signin_no_email.json", "9f8e7d6c-5b4a-4321-8765-0fedcba98765", ""},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			s, e := signInUser(fixture(t, tc.fixture))
			if s != tc.sub || e != tc.email {
				t.Fatalf("signInUser = %q, %q", s, e)
			}
		})
	}
}
