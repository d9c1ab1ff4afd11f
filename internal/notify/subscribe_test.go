package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// fakeSNS models what the trigger relies on: one subscription per topic,
// protocol and endpoint; Subscribe idempotent for the same attributes (and
// refused for other ones, like SNS); email subscriptions pending until
// confirmed; pages of pageSize.
type fakeSNS struct {
	mu       sync.Mutex
	subs     map[string][]*fakeSub // by topic
	seq      int
	pageSize int
	calls    []string
	fail     map[string]error // by method name
	// afterList, when set, runs after each List (outside the lock).
	afterList func()
}

type fakeSub struct {
	arn, topic, email, policy string
	confirmed                 bool
}

func newFakeSNS() *fakeSNS {
	return &fakeSNS{subs: map[string][]*fakeSub{}, pageSize: 2, fail: map[string]error{}}
}

func (f *fakeSNS) call(name string) error {
	f.calls = append(f.calls, name)
	return f.fail[name]
}

func (f *fakeSNS) add(topic, email, policy string, confirmed bool) *fakeSub {
	f.seq++
	s := &fakeSub{arn: fmt.Sprintf("%s:sub-%d", topic, f.seq), topic: topic, email: email, policy: policy, confirmed: confirmed}
	f.subs[topic] = append(f.subs[topic], s)
	return s
}

func (f *fakeSNS) List(_ context.Context, topic, cursor string) (SubscriptionPage, error) {
	f.mu.Lock()
	err := f.call("List")
	var p SubscriptionPage
	if err == nil {
		start := 0
		if cursor != "" {
			fmt.Sscan(cursor, &start)
		}
		all := f.subs[topic]
		end := min(start+f.pageSize, len(all))
		for _, s := range all[start:end] {
			arn := s.arn
			if !s.confirmed {
				arn = PendingConfirmation
			}
			p.Subscriptions = append(p.Subscriptions, Subscription{Arn: arn, Protocol: "email", Endpoint: s.email})
		}
		if end < len(all) {
			p.Cursor = fmt.Sprint(end)
		}
	}
	f.mu.Unlock()
	if f.afterList != nil {
		f.afterList()
	}
	return p, err
}

func (f *fakeSNS) find(arn string) *fakeSub {
	for _, ss := range f.subs {
		for _, s := range ss {
			if s.arn == arn && s.confirmed {
				return s
			}
		}
	}
	return nil
}

func (f *fakeSNS) FilterPolicy(_ context.Context, arn string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("FilterPolicy"); err != nil {
		return "", err
	}
	s := f.find(arn)
	if s == nil {
		return "", errors.New("NotFound")
	}
	return s.policy, nil
}

func (f *fakeSNS) SetFilterPolicy(_ context.Context, arn, policy string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("SetFilterPolicy"); err != nil {
		return err
	}
	s := f.find(arn)
	if s == nil {
		return errors.New("NotFound")
	}
	s.policy = policy
	return nil
}

func (f *fakeSNS) Subscribe(_ context.Context, topic, email, policy string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Subscribe"); err != nil {
		return "", err
	}
	for _, s := range f.subs[topic] {
		if s.email == email {
			if s.policy != policy {
				return "", errors.New("InvalidParameter: Subscription already exists with different attributes")
			}
			return s.arn, nil
		}
	}
	return f.add(topic, email, policy, false).arn, nil
}

func (f *fakeSNS) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == name {
			n++
		}
	}
	return n
}

func (f *fakeSNS) subsOf(topic string) []fakeSub {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeSub
	for _, s := range f.subs[topic] {
		out = append(out, *s)
	}
	return out
}

type counts struct {
	mu sync.Mutex
	m  map[string]float64
}

func (c *counts) Add(name string, n float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]float64{}
	}
	c.m[name] += n
}

var topics = []string{"arn:aws:sns:eu-west-1:111122223333:notify-0", "arn:aws:sns:eu-west-1:111122223333:notify-1", "arn:aws:sns:eu-west-1:111122223333:notify-2"}

const (
	sub   = "0b7c4b1e-6a2f-4f3e-9d1a-3c5e8f2a9b10"
	email = "ada@example.com"
)

func newTestSubscriber(t *testing.T, f *fakeSNS) (*Subscriber, *counts, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	c := &counts{}
	s, err := NewSubscriber(SubscriberDeps{Subscriptions: f, TopicArns: topics, Metrics: c,
		Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, &logs
}

func TestOnSignIn(t *testing.T) {
	home := TopicFor(topics, sub)
	limitErr := fmt.Errorf("sns Subscribe: %w: %w", ErrFilterPolicyLimit, errors.New("FilterPolicyLimitExceeded"))
	for _, tc := range []struct {
		name  string
		setup func(f *fakeSNS)
		email string
		want  Outcome
		// wantPolicy is the filter policy of the user's one subscription
		// afterwards ("" when there should be none).
		wantPolicy    string
		wantConfirmed bool
		wantCalls     map[string]int
		wantMetrics   map[string]float64
	}{
		{
			name:  "first sign-in subscribes with the policy",
			setup: func(f *fakeSNS) { f.add(home, "other@example.com", FilterPolicy("other"), true) },
			want:  Subscribed, wantPolicy: FilterPolicy(sub),
			wantCalls:   map[string]int{"Subscribe": 1, "SetFilterPolicy": 0},
			wantMetrics: map[string]float64{MetricSubscribed: 1},
		},
		{
			name:  "repeated sign-in does not subscribe again",
			setup: func(f *fakeSNS) { f.add(home, email, FilterPolicy(sub), true) },
			want:  Unchanged, wantPolicy: FilterPolicy(sub), wantConfirmed: true,
			wantCalls:   map[string]int{"Subscribe": 0, "SetFilterPolicy": 0},
			wantMetrics: map[string]float64{},
		},
		{
			name: "same policy written differently is left alone",
			setup: func(f *fakeSNS) {
				f.add(home, email, "{ \"userId\": [\""+sub+"\"] }", true)
			},
			want: Unchanged, wantPolicy: "{ \"userId\": [\"" + sub + "\"] }", wantConfirmed: true,
			wantCalls:   map[string]int{"Subscribe": 0, "SetFilterPolicy": 0},
			wantMetrics: map[string]float64{},
		},
		{
			name: "found on a later page, email case differs",
			setup: func(f *fakeSNS) {
				for i := range 5 {
					f.add(home, fmt.Sprintf("u%d@example.com", i), FilterPolicy(fmt.Sprint(i)), true)
				}
				f.add(home, "ADA@Example.com", FilterPolicy(sub), true)
			},
			email: "ada@example.com", want: Unchanged, wantPolicy: FilterPolicy(sub), wantConfirmed: true,
			wantCalls:   map[string]int{"List": 3, "Subscribe": 0},
			wantMetrics: map[string]float64{},
		},
		{
			name:  "changed policy is repaired",
			setup: func(f *fakeSNS) { f.add(home, email, FilterPolicy("someone-else"), true) },
			want:  Repaired, wantPolicy: FilterPolicy(sub), wantConfirmed: true,
			wantCalls:   map[string]int{"Subscribe": 0, "SetFilterPolicy": 1},
			wantMetrics: map[string]float64{MetricFilterPolicyRepaired: 1},
		},
		{
			name:  "missing policy is repaired",
			setup: func(f *fakeSNS) { f.add(home, email, "", true) },
			want:  Repaired, wantPolicy: FilterPolicy(sub), wantConfirmed: true,
			wantCalls:   map[string]int{"Subscribe": 0, "SetFilterPolicy": 1},
			wantMetrics: map[string]float64{MetricFilterPolicyRepaired: 1},
		},
		{
			name:  "pending confirmation sends nothing new",
			setup: func(f *fakeSNS) { f.add(home, email, FilterPolicy(sub), false) },
			want:  AwaitingConfirmation, wantPolicy: FilterPolicy(sub),
			wantCalls:   map[string]int{"Subscribe": 0, "SetFilterPolicy": 0, "FilterPolicy": 0},
			wantMetrics: map[string]float64{},
		},
		{
			name:  "list error is swallowed and counted",
			setup: func(f *fakeSNS) { f.fail["List"] = errors.New("Throttling") },
			want:  Failed, wantCalls: map[string]int{"Subscribe": 0},
			wantMetrics: map[string]float64{MetricSubscribeErrors: 1},
		},
		{
			name: "repair error is swallowed and counted",
			setup: func(f *fakeSNS) {
				f.add(home, email, "", true)
				f.fail["SetFilterPolicy"] = errors.New("AuthorizationError")
			},
			want: Failed, wantPolicy: "", wantConfirmed: true,
			wantMetrics: map[string]float64{MetricSubscribeErrors: 1},
		},
		{
			name:  "filter policy limit is counted apart",
			setup: func(f *fakeSNS) { f.fail["Subscribe"] = limitErr },
			want:  Failed, wantCalls: map[string]int{"Subscribe": 1},
			wantMetrics: map[string]float64{MetricSubscribeErrors: 1, MetricFilterPolicyLimitExceeded: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSNS()
			tc.setup(f)
			s, c, logs := newTestSubscriber(t, f)
			addr := email
			if tc.email != "" {
				addr = tc.email
			}
			if got := s.OnSignIn(context.Background(), sub, addr); got != tc.want {
				t.Fatalf("outcome %q, want %q; logs: %s", got, tc.want, logs)
			}
			var mine []fakeSub
			for _, x := range f.subsOf(home) {
				if strings.EqualFold(x.email, email) {
					mine = append(mine, x)
				}
			}
			switch {
			case tc.wantPolicy == "" && tc.want == Failed && len(mine) == 0:
			case len(mine) != 1:
				t.Fatalf("user has %d subscriptions, want 1: %+v", len(mine), mine)
			case mine[0].policy != tc.wantPolicy || mine[0].confirmed != tc.wantConfirmed:
				t.Fatalf("subscription %+v, want policy %s confirmed %t", mine[0], tc.wantPolicy, tc.wantConfirmed)
			}
			for name, n := range tc.wantCalls {
				if got := f.count(name); got != n {
					t.Errorf("%s called %d times, want %d (calls %v)", name, got, n, f.calls)
				}
			}
			if fmt.Sprint(c.m) != fmt.Sprint(tc.wantMetrics) && !(len(c.m) == 0 && len(tc.wantMetrics) == 0) {
				t.Errorf("metrics %v, want %v", c.m, tc.wantMetrics)
			}
			checkJSONLogs(t, logs, tc.want == Failed)
		})
	}
}

// checkJSONLogs: every line is a JSON object; an error is logged iff
// wantError; the email address never is.
func checkJSONLogs(t *testing.T, logs *bytes.Buffer, wantError bool) {
	t.Helper()
	sawError := false
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line not JSON: %q", line)
		}
		sawError = sawError || rec["level"] == "ERROR"
		if strings.Contains(strings.ToLower(line), email) {
			t.Fatalf("log line holds the email address: %s", line)
		}
	}
	if sawError != wantError {
		t.Fatalf("error logged: %t, want %t: %s", sawError, wantError, logs)
	}
}

func TestOnSignInWithoutAttributes(t *testing.T) {
	for _, tc := range []struct{ name, sub, email string }{
		{"no sub", "", email},
		{"no email", sub, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSNS()
			s, c, _ := newTestSubscriber(t, f)
			if got := s.OnSignIn(context.Background(), tc.sub, tc.email); got != Failed {
				t.Fatalf("outcome %q, want failed", got)
			}
			if len(f.calls) != 0 || c.m[MetricSubscribeErrors] != 1 {
				t.Fatalf("calls %v metrics %v", f.calls, c.m)
			}
		})
	}
}

// Two sign-ins of the same user race: both list before either subscribes.
// Subscribe's idempotency (same topic, endpoint and attributes) leaves one
// subscription.
func TestRacingSignInsMakeOneSubscription(t *testing.T) {
	f := newFakeSNS()
	var barrier sync.WaitGroup
	barrier.Add(2)
	f.afterList = func() { barrier.Done(); barrier.Wait() }
	s, c, _ := newTestSubscriber(t, f)
	outcomes := make([]Outcome, 2)
	var wg sync.WaitGroup
	for i := range outcomes {
		wg.Go(func() { outcomes[i] = s.OnSignIn(context.Background(), sub, email) })
	}
	wg.Wait()
	if outcomes[0] != Subscribed || outcomes[1] != Subscribed {
		t.Fatalf("outcomes %v, want both subscribed", outcomes)
	}
	if n := f.count("Subscribe"); n != 2 {
		t.Fatalf("Subscribe called %d times: the race did not happen", n)
	}
	if subs := f.subsOf(TopicFor(topics, sub)); len(subs) != 1 {
		t.Fatalf("%d subscriptions, want 1: %+v", len(subs), subs)
	}
	if c.m[MetricSubscribeErrors] != 0 {
		t.Fatalf("metrics %v", c.m)
	}
}

func TestNewSubscriberGuards(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    SubscriberDeps
	}{
		{"no api", SubscriberDeps{TopicArns: topics}},
		{"no topics", SubscriberDeps{Subscriptions: newFakeSNS()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewSubscriber(tc.d); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
