package campaigntest

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/core/suitecheck"
)

// LimitsBackend is one empty store of sender counters under
// LimitsContract.
type LimitsBackend struct {
	Counters limits.Counters
	// Counts reads the stored counters of key (a missing one may be
	// absent or 0).
	Counts func(ctx context.Context, key limits.Key) (map[string]int64, error)
}

// LimitsReference is the in-memory counters a store is held to
// (memory.SenderLimits; testenv cannot import internal/tooling/memory,
// whose own tests import testenv).
type LimitsReference interface {
	limits.Counters
	Counts(key limits.Key) map[string]int64
}

// LimitsContract is what every store of sender counters does
// (limitsdynamo.Counters, the dev server's restored memory.SenderLimits):
// the same answers and counts as the reference (newReference, an empty
// memory.SenderLimits) for the same adds, so the in-memory counters are
// never more lenient than the table; exactly as many concurrent adds pass
// as the limit allows; the limiter's refusal names the limit and the use.
func LimitsContract(t *testing.T, newReference func() LimitsReference, newCounters func(t *testing.T) LimitsBackend) {
	ctx := context.Background()
	day := limits.Key{Sender: "sub-a", Day: "2026-12-02"}
	expires := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	adds := func(campaigns, sends int64) []limits.Add {
		return []limits.Add{{Counter: limits.CounterCampaigns, By: campaigns, Max: 3}, {Counter: limits.CounterSends, By: sends, Max: 100}}
	}
	// sameCounts compares counts, a missing counter being 0.
	sameCounts := func(a, b map[string]int64) bool {
		nonZero := func(_ string, v int64) bool { return v == 0 }
		a, b = maps.Clone(a), maps.Clone(b)
		maps.DeleteFunc(a, nonZero)
		maps.DeleteFunc(b, nonZero)
		return maps.Equal(a, b)
	}
	for _, tc := range []struct {
		name  string
		steps [][]limits.Add
	}{
		{"campaigns up to the limit", [][]limits.Add{adds(1, 1), adds(1, 1), adds(1, 1), adds(1, 1)}},
		{"sends up to the limit, exactly", [][]limits.Add{adds(1, 60), adds(1, 50), adds(1, 40), adds(1, 1)}},
		{"over the limit alone, first of the day", [][]limits.Add{adds(1, 101), adds(1, 100), adds(1, 0)}},
		{"a lowered limit under the count", [][]limits.Add{adds(1, 90), {{Counter: limits.CounterSends, By: 0, Max: 50}}}},
		{"one counter alone", [][]limits.Add{{{Counter: limits.CounterSends, By: 100, Max: 100}}, adds(1, 0), adds(1, 1)}},
	} {
		t.Run("as memory.SenderLimits: "+tc.name, func(t *testing.T) {
			b := newCounters(t)
			mem := newReference()
			for i, step := range tc.steps {
				bc, bok, berr := b.Counters.Add(ctx, day, expires, step)
				mc, mok, merr := mem.Add(ctx, day, expires, step)
				if berr != nil || merr != nil {
					t.Fatalf("step %d: errors %v / %v", i, berr, merr)
				}
				if bok != mok || !sameCounts(bc, mc) {
					t.Fatalf("step %d %+v: store ok=%v %v, reference ok=%v %v", i, step, bok, bc, mok, mc)
				}
			}
			if got, err := b.Counts(ctx, day); err != nil || !sameCounts(got, mem.Counts(day)) {
				t.Fatalf("final counts: store %v %v, reference %v", got, err, mem.Counts(day))
			}
		})
	}
	t.Run("of concurrent adds, exactly as many pass as the limit allows", func(t *testing.T) {
		b := newCounters(t)
		var ok atomic.Int32
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				_, admitted, err := b.Counters.Add(ctx, day, expires, adds(1, 10))
				if err != nil {
					t.Error(err)
				}
				if admitted {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if n := ok.Load(); n != 3 {
			t.Fatalf("%d adds passed, want exactly 3 (campaigns per day)", n)
		}
		if got, err := b.Counts(ctx, day); err != nil || !sameCounts(got, map[string]int64{limits.CounterCampaigns: 3, limits.CounterSends: 30}) {
			t.Fatalf("counts %v, %v; want 3 campaigns, 30 sends", got, err)
		}
	})
	t.Run("the limiter's refusal names the limit and the use", func(t *testing.T) {
		b := newCounters(t)
		now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
		lim := suitecheck.Need(limits.New(limits.Limits{CampaignsPerDay: 5, SendsPerDay: 100, RecipientsPerCampaign: 100}, b.Counters, fixedClock(now)))(t)
		suitecheck.Must(t, lim.Admit(ctx, "sub-a", 70))
		err := lim.Admit(ctx, "sub-a", 31)
		want := &limits.Exceeded{Limit: limits.SendsPerDay, Max: 100, Used: 70, Requested: 31, RetryAfter: 12 * time.Hour}
		if e, ok := err.(*limits.Exceeded); !ok || *e != *want {
			t.Fatalf("err = %v, want %+v", err, want)
		}
	})
}

// fixedClock reads one instant.
type fixedClock time.Time

func (f fixedClock) Now() time.Time { return time.Time(f) }
