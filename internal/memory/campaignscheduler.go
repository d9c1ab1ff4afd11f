package memory

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/clock"
)

// CampaignScheduler is campaign.Scheduler in memory, an EventBridge
// Scheduler group as the campaign sends use it: schedules by name,
// creates idempotent by ClientToken while the schedule exists, an
// optional token-bucket rate limit shared by every call, and a Fault hook.
type CampaignScheduler struct {
	mu        sync.Mutex
	schedules map[string]campaign.ScheduleRequest
	bucket    *Bucket
	// Fault, when set, is asked before each call (op "create", "exists",
	// "delete"); a non-nil error is returned instead of the call. With
	// lost set the call takes effect and its answer is lost: the error is
	// returned all the same.
	Fault func(op, name string) (err error, lost bool)
	// Latency, when set, is waited (on Clock) inside each call.
	Latency time.Duration
	Clock   campaign.Clock

	calls, throttled, creates, inFlight, maxInFlight atomic.Int64
}

var _ campaign.Scheduler = (*CampaignScheduler)(nil)

// NewCampaignScheduler returns an empty scheduler; bucket nil means no limit.
func NewCampaignScheduler(bucket *Bucket) *CampaignScheduler {
	return &CampaignScheduler{schedules: map[string]campaign.ScheduleRequest{}, bucket: bucket}
}

func (s *CampaignScheduler) enter(ctx context.Context, op, name string) (done func(), lost bool, err error) {
	s.calls.Add(1)
	n := s.inFlight.Add(1)
	for {
		m := s.maxInFlight.Load()
		if n <= m || s.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	done = func() { s.inFlight.Add(-1) }
	if s.Latency > 0 && s.Clock != nil {
		if err := s.Clock.Sleep(ctx, s.Latency); err != nil {
			return done, false, err
		}
	}
	if s.bucket != nil && !s.bucket.Take() {
		s.throttled.Add(1)
		return done, false, fmt.Errorf("%s %s: ThrottlingException: %w", op, name, campaign.ErrThrottled)
	}
	if s.Fault != nil {
		if ferr, lost := s.Fault(op, name); ferr != nil {
			if errors.Is(ferr, campaign.ErrThrottled) {
				s.throttled.Add(1)
			}
			return done, lost, ferr
		}
	}
	return done, false, nil
}

// Create implements campaign.Scheduler.
func (s *CampaignScheduler) Create(ctx context.Context, r campaign.ScheduleRequest) error {
	done, lost, err := s.enter(ctx, "create", r.Name)
	defer done()
	if err != nil && !lost {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.schedules[r.Name]; ok {
		if cur.ClientToken == r.ClientToken {
			return err // idempotent repeat
		}
		if err == nil {
			err = fmt.Errorf("create %s: ConflictException: %w", r.Name, campaign.ErrScheduleExists)
		}
		return err
	}
	s.schedules[r.Name] = r
	s.creates.Add(1)
	return err
}

// Exists implements campaign.Scheduler.
func (s *CampaignScheduler) Exists(ctx context.Context, _ string, name string) (bool, error) {
	done, _, err := s.enter(ctx, "exists", name)
	defer done()
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.schedules[name]
	return ok, nil
}

// Delete implements campaign.Scheduler.
func (s *CampaignScheduler) Delete(ctx context.Context, _ string, name string) error {
	done, lost, err := s.enter(ctx, "delete", name)
	defer done()
	if err != nil && !lost {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.schedules[name]; !ok {
		if err == nil {
			err = fmt.Errorf("delete %s: ResourceNotFoundException: %w", name, campaign.ErrScheduleNotFound)
		}
		return err
	}
	delete(s.schedules, name)
	return err
}

// Remove deletes a schedule without a call (the schedule ran: ActionAfterCompletion DELETE).
func (s *CampaignScheduler) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.schedules, name)
}

// Schedules returns a copy of the live schedules by name.
func (s *CampaignScheduler) Schedules() map[string]campaign.ScheduleRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.schedules)
}

// CampaignSchedulerStats are the scheduler's counters.
type CampaignSchedulerStats struct {
	Calls, Throttled, Creates, MaxInFlight int64
}

// Stats returns the counters.
func (s *CampaignScheduler) Stats() CampaignSchedulerStats {
	return CampaignSchedulerStats{s.calls.Load(), s.throttled.Load(), s.creates.Load(), s.maxInFlight.Load()}
}

// Bucket is a token bucket on a clock: Rate tokens a second, at most
// Burst stored.
type Bucket struct {
	mu     sync.Mutex
	clock  campaign.Clock
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

// NewBucket returns a full bucket.
func NewBucket(clock campaign.Clock, rate float64, burst int) *Bucket {
	return &Bucket{clock: clock, rate: rate, burst: float64(burst), tokens: float64(burst), last: clock.Now()}
}

// Take takes a token if there is one.
func (b *Bucket) Take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// ScaledClock is real time run Factor times faster: a second of it is
// 1/Factor of a real second. The benchmark uses it so that 10,000 calls
// at 50 a second take 200 clock seconds but 200/Factor real ones, while
// goroutines still really run concurrently.
type ScaledClock struct {
	Factor    float64
	base      time.Time
	realStart time.Time
}

// NewScaledClock starts at base.
func NewScaledClock(base time.Time, factor float64) *ScaledClock {
	return &ScaledClock{Factor: factor, base: base, realStart: time.Now()}
}

// Now implements campaign.Clock.
func (c *ScaledClock) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.realStart)) * c.Factor))
}

// Sleep waits d/Factor of real time.
func (c *ScaledClock) Sleep(ctx context.Context, d time.Duration) error {
	return clock.System{}.Sleep(ctx, time.Duration(float64(d)/c.Factor))
}
