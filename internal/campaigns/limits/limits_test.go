package limits_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

var noon = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func limiter(t *testing.T, l limits.Limits, c limits.Counters, now *time.Time) *limits.Limiter {
	t.Helper()
	lim, err := limits.New(l, c, clock.Func(func() time.Time { return *now }))
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

func TestValidate(t *testing.T) {
	ok := limits.Defaults()
	cases := []struct {
		name string
		set  func(l *limits.Limits)
		want string // "" = valid
	}{
		{"defaults", func(*limits.Limits) {}, ""},
		{"ceilings", func(l *limits.Limits) { *l = limits.Ceilings() }, ""},
		{"zero campaigns", func(l *limits.Limits) { l.CampaignsPerDay = 0 }, "campaignsPerDay must be between 1 and"},
		{"negative sends", func(l *limits.Limits) { l.SendsPerDay = -1 }, "sendsPerDay must be between 1 and"},
		{"recipients over the API's", func(l *limits.Limits) { l.RecipientsPerCampaign = limits.MaxRecipientsPerCampaign + 1 }, "recipientsPerCampaign must be between 1 and 10000 (given 10001)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := ok
			tc.set(&l)
			err := l.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
			if _, nerr := limits.New(l, memory.NewSenderLimits(), clock.System{}); (nerr == nil) != (err == nil) {
				t.Fatalf("New accepts limits Validate refuses (or the reverse): %v vs %v", nerr, err)
			}
		})
	}
}

// exceeded asserts err is an *Exceeded of limit with the given numbers.
func exceeded(t *testing.T, err error, want limits.Exceeded) {
	t.Helper()
	var e *limits.Exceeded
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *Exceeded of %s", err, want.Limit)
	}
	if *e != want {
		t.Fatalf("refusal %+v, want %+v", *e, want)
	}
	if !strings.Contains(e.Error(), "UTC") && e.Limit != limits.RecipientsPerCampaign {
		t.Errorf("message %q does not say the day is a UTC day", e.Error())
	}
}

func TestAdmit(t *testing.T) {
	l := limits.Limits{CampaignsPerDay: 3, SendsPerDay: 100, RecipientsPerCampaign: 80}
	untilMidnight := 12 * time.Hour
	type step struct {
		sender string
		sends  int
		want   *limits.Exceeded // nil: admitted
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"campaigns per day", []step{
			{"a", 1, nil}, {"a", 1, nil}, {"a", 1, nil},
			{"a", 1, &limits.Exceeded{Limit: limits.CampaignsPerDay, Max: 3, Used: 3, Requested: 1, RetryAfter: untilMidnight}},
			{"b", 1, nil}, // another sender counts apart
		}},
		{"sends per day", []step{
			{"a", 60, nil},
			{"a", 50, &limits.Exceeded{Limit: limits.SendsPerDay, Max: 100, Used: 60, Requested: 50, RetryAfter: untilMidnight}},
			{"a", 40, nil}, // the refused 50 were not counted: exactly 100
			{"a", 1, &limits.Exceeded{Limit: limits.SendsPerDay, Max: 100, Used: 100, Requested: 1, RetryAfter: untilMidnight}},
		}},
		{"a refusal counts no campaign", []step{
			{"a", 80, nil},
			{"a", 80, &limits.Exceeded{Limit: limits.SendsPerDay, Max: 100, Used: 80, Requested: 80, RetryAfter: untilMidnight}},
			{"a", 80, &limits.Exceeded{Limit: limits.SendsPerDay, Max: 100, Used: 80, Requested: 80, RetryAfter: untilMidnight}},
			{"a", 10, nil}, {"a", 10, nil}, // campaigns 2 and 3
			{"a", 0, &limits.Exceeded{Limit: limits.CampaignsPerDay, Max: 3, Used: 3, Requested: 1, RetryAfter: untilMidnight}},
		}},
		{"recipients per campaign", []step{
			{"a", 81, &limits.Exceeded{Limit: limits.RecipientsPerCampaign, Max: 80, Requested: 81}},
			{"a", 80, nil},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := noon
			lim := limiter(t, l, memory.NewSenderLimits(), &now)
			for i, s := range tc.steps {
				err := lim.Admit(context.Background(), s.sender, s.sends)
				if s.want == nil {
					if err != nil {
						t.Fatalf("step %d: %v, want admitted", i, err)
					}
					continue
				}
				exceeded(t, err, *s.want)
			}
		})
	}
}

// TestOverADayAlone: a campaign over the sends of a whole day is refused
// without counting, even on a sender's first request of the day (where
// DynamoDB's attribute_not_exists alone would let any amount through),
// and without Retry-After: waiting does not help.
func TestOverADayAlone(t *testing.T) {
	now := noon
	mem := memory.NewSenderLimits()
	lim := limiter(t, limits.Limits{CampaignsPerDay: 3, SendsPerDay: 100, RecipientsPerCampaign: 1000}, mem, &now)
	exceeded(t, lim.Admit(context.Background(), "a", 101), limits.Exceeded{Limit: limits.SendsPerDay, Max: 100, Requested: 101})
	if c := mem.Counts(limits.Key{Sender: "a", Day: "2026-12-02"}); len(c) != 0 {
		t.Fatalf("counted %v for a refused campaign", c)
	}
	// The store refuses it too, should another caller ask.
	if _, ok, _ := mem.Add(context.Background(), limits.Key{Sender: "a", Day: "2026-12-02"}, now, []limits.Add{{Counter: "sends", By: 101, Max: 100}}); ok {
		t.Fatal("Memory.Add let an add over its max through on a missing counter")
	}
}

// TestNextDay: the limits count UTC days; Retry-After reaches the next
// one, rounded up to whole seconds.
func TestNextDay(t *testing.T) {
	now := time.Date(2026, 12, 2, 23, 59, 29, 500_000_000, time.UTC)
	lim := limiter(t, limits.Limits{CampaignsPerDay: 1, SendsPerDay: 100, RecipientsPerCampaign: 100}, memory.NewSenderLimits(), &now)
	ctx := context.Background()
	if err := lim.Admit(ctx, "a", 1); err != nil {
		t.Fatal(err)
	}
	exceeded(t, lim.Admit(ctx, "a", 1), limits.Exceeded{Limit: limits.CampaignsPerDay, Max: 1, Used: 1, Requested: 1, RetryAfter: 31 * time.Second})
	now = now.Add(31 * time.Second) // 00:00:00.5 on 3 December
	if err := lim.Admit(ctx, "a", 1); err != nil {
		t.Fatalf("the next UTC day: %v", err)
	}
	// A time in another zone counts by its UTC day.
	now = time.Date(2026, 12, 3, 23, 30, 0, 0, time.FixedZone("UTC-2", -2*3600)) // 01:30 UTC on 4 December
	if err := lim.Admit(ctx, "a", 1); err != nil {
		t.Fatalf("4 December UTC: %v", err)
	}
}

// TestConcurrentAdmits: of many concurrent creates, exactly the limit
// are admitted.
func TestConcurrentAdmits(t *testing.T) {
	now := noon
	lim := limiter(t, limits.Limits{CampaignsPerDay: 10, SendsPerDay: 1000, RecipientsPerCampaign: 100}, memory.NewSenderLimits(), &now)
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if lim.Admit(context.Background(), "a", 5) == nil {
				admitted.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := admitted.Load(); n != 10 {
		t.Fatalf("%d admitted, want exactly 10", n)
	}
}

type failing struct{}

func (failing) Add(context.Context, limits.Key, time.Time, []limits.Add) (map[string]int64, bool, error) {
	return nil, false, errors.New("throttled")
}

// TestStoreErrorRefuses: a store that fails refuses the request with its
// error (the handler's 5xx), never lets it through uncounted.
func TestStoreErrorRefuses(t *testing.T) {
	now := noon
	err := limiter(t, limits.Defaults(), failing{}, &now).Admit(context.Background(), "a", 1)
	var e *limits.Exceeded
	if err == nil || errors.As(err, &e) || !strings.Contains(err.Error(), "throttled") {
		t.Fatalf("err = %v, want the store's error", err)
	}
}

// TestExpiresAfterTheDay: the store may forget a day only after it ends.
func TestExpiresAfterTheDay(t *testing.T) {
	now := noon
	rec := &recording{}
	if err := limiter(t, limits.Defaults(), rec, &now).Admit(context.Background(), "a", 1); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC); !rec.expires.Equal(want) || rec.key != (limits.Key{Sender: "a", Day: "2026-12-02"}) {
		t.Fatalf("key %+v expires %v, want a 2026-12-02 key expiring %v", rec.key, rec.expires, want)
	}
}

type recording struct {
	key     limits.Key
	expires time.Time
}

func (r *recording) Add(_ context.Context, k limits.Key, exp time.Time, _ []limits.Add) (map[string]int64, bool, error) {
	r.key, r.expires = k, exp
	return nil, true, nil
}
