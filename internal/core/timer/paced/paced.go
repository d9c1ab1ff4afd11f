// Package paced is the core's rate-limited caller of a timer service
// (EventBridge Scheduler above all, whose CreateSchedule quota is a rate):
// at most Concurrency calls in flight, started at most CallsPerSecond
// (no burst), a throttled call backed off with full jitter and retried
// until the caller stops it, any other error retried a bounded number of
// times. Campaign provisioning creates every schedule of a campaign
// through it; Timer wraps any timer.Timer the same way, for an
// adopter that arms many timers at once.
package paced

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// Defaults of Config.
const (
	DefaultConcurrency = 10
	// DefaultCallsPerSecond is the lowest CreateSchedule rate quota
	// EventBridge Scheduler has documented; raise it to the account's.
	DefaultCallsPerSecond   = 50
	DefaultBaseBackoff      = 50 * time.Millisecond
	DefaultMaxBackoff       = 5 * time.Second
	DefaultMaxErrorAttempts = 5
)

// Config tunes a Caller. Zero fields take their defaults.
type Config struct {
	// Concurrency is the most calls in flight.
	// Default: 10.
	Concurrency int
	// CallsPerSecond paces the calls' starts (no burst).
	// Default: 50.
	CallsPerSecond float64
	// BaseBackoff and MaxBackoff bound the full-jitter back-off after a
	// throttle or an error: retry n waits a random time in
	// (0, min(MaxBackoff, BaseBackoff·2ⁿ)].
	// Default: 50 ms and 5 s.
	BaseBackoff, MaxBackoff time.Duration
	// MaxErrorAttempts is how often a call failing with anything but a
	// throttle is tried before Do returns its error.
	// Default: 5.
	MaxErrorAttempts int
	// IsThrottle tells a throttle from other errors.
	// Default: IsThrottle.
	IsThrottle func(error) bool
	// IsFinal tells an answer no retry changes (the schedule exists, or
	// is not there): Do returns it after one try.
	// Default: errors.Is(err, timer.ErrExists) or timer.ErrNotFound.
	IsFinal func(error) bool
	// Seed seeds the jitter (0: random); a seed makes the waits
	// repeatable (tests, the simulation).
	Seed uint64
}

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.CallsPerSecond <= 0 {
		c.CallsPerSecond = DefaultCallsPerSecond
	}
	if c.BaseBackoff <= 0 {
		c.BaseBackoff = DefaultBaseBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxErrorAttempts <= 0 {
		c.MaxErrorAttempts = DefaultMaxErrorAttempts
	}
	if c.IsThrottle == nil {
		c.IsThrottle = IsThrottle
	}
	if c.IsFinal == nil {
		c.IsFinal = func(err error) bool { return errors.Is(err, timer.ErrExists) || errors.Is(err, timer.ErrNotFound) }
	}
	return c
}

// throttleCodes are the error codes by which the AWS services behind the
// timers (EventBridge Scheduler, Step Functions, DynamoDB) refuse a call
// for rate.
var throttleCodes = map[string]bool{"ThrottlingException": true, "TooManyRequestsException": true,
	"ProvisionedThroughputExceededException": true, "RequestLimitExceeded": true, "ThrottledException": true}

// IsThrottle reports whether err is a timer's throttle: timer.ErrThrottled,
// or an AWS API error whose code asks to slow down (the Step Functions
// and TTL adapters pass the service's error on as it is).
func IsThrottle(err error) bool {
	var api interface{ ErrorCode() string }
	return errors.Is(err, timer.ErrThrottled) || (errors.As(err, &api) && throttleCodes[api.ErrorCode()])
}

// ErrStopped: the caller's stop condition or its context ended the call
// before it succeeded.
var ErrStopped = errors.New("paced call stopped")

// Outcome is what one Do did.
type Outcome struct {
	// Err is nil on success, wraps ErrStopped when stopped, else the last
	// error after MaxErrorAttempts tries.
	Err error
	// Calls and Throttles count the tries and the throttled ones.
	Calls, Throttles int
}

// Stopped reports whether the call was stopped before it succeeded.
func (o Outcome) Stopped() bool { return errors.Is(o.Err, ErrStopped) }

// Caller paces calls. It is safe for concurrent use: every goroutine
// shares its slots and its pace.
type Caller struct {
	cfg     Config
	clock   clock.Clock
	limiter *reconcile.Limiter
	slots   chan struct{}
	backoff *Backoff
}

// New returns a Caller on clock (clock.System in a Lambda).
func New(cfg Config, c clock.Clock) (*Caller, error) {
	if c == nil {
		return nil, errors.New("paced: the clock is nil")
	}
	cfg = cfg.withDefaults()
	return &Caller{
		cfg: cfg, clock: c,
		limiter: reconcile.NewLimiter(cfg.CallsPerSecond, c, c.Sleep),
		slots:   make(chan struct{}, cfg.Concurrency),
		backoff: NewBackoff(cfg.BaseBackoff, cfg.MaxBackoff, cfg.Seed),
	}, nil
}

// Config is the caller's configuration, defaults filled.
func (c *Caller) Config() Config { return c.cfg }

// Do tries call until it succeeds, fails with a final error (IsFinal),
// fails with a non-throttle error MaxErrorAttempts times, or is stopped: by ctx, or by stop (nil: never)
// reporting true before a try. Each try waits for a slot and for the
// pace; a failed try waits a back-off before the next.
func (c *Caller) Do(ctx context.Context, stop func() bool, call func(context.Context) error) Outcome {
	var o Outcome
	errs := 0
	for attempt := 0; ; attempt++ {
		if (stop != nil && stop()) || ctx.Err() != nil {
			return o.stopped(ctx)
		}
		err, ok := c.try(ctx, call)
		if !ok {
			return o.stopped(ctx)
		}
		o.Calls++
		switch {
		case err == nil, c.cfg.IsFinal(err):
			o.Err = err
			return o
		case c.cfg.IsThrottle(err):
			o.Throttles++
		case ctx.Err() != nil:
			return o.stopped(ctx)
		default:
			if errs++; errs >= c.cfg.MaxErrorAttempts {
				o.Err = err
				return o
			}
		}
		o.Err = err
		if err := c.clock.Sleep(ctx, c.backoff.Delay(attempt)); err != nil {
			return o.stopped(ctx)
		}
	}
}

// try runs one call in a slot, at the pace; ok is false when ctx ended
// first.
func (c *Caller) try(ctx context.Context, call func(context.Context) error) (err error, ok bool) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, false
	}
	defer func() { <-c.slots }()
	if c.limiter.Wait(ctx) != nil {
		return nil, false
	}
	return call(ctx), true
}

func (o Outcome) stopped(ctx context.Context) Outcome {
	if o.Err != nil {
		o.Err = fmt.Errorf("%w after %d tries: %w", ErrStopped, o.Calls, o.Err)
	} else if ctx.Err() != nil {
		o.Err = fmt.Errorf("%w: %w", ErrStopped, ctx.Err())
	} else {
		o.Err = ErrStopped
	}
	return o
}

// Backoff waits with full jitter: retry n waits a random time in
// (0, min(Max, Base·2ⁿ)]. It is safe for concurrent use.
type Backoff struct {
	base, max time.Duration
	mu        sync.Mutex
	rng       *rand.Rand
}

// NewBackoff returns a Backoff; seed 0 draws a random seed.
func NewBackoff(base, max time.Duration, seed uint64) *Backoff {
	if seed == 0 {
		seed = rand.Uint64()
	}
	return &Backoff{base: base, max: max, rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

// Delay is the wait before retry number attempt (0-based).
func (b *Backoff) Delay(attempt int) time.Duration {
	ceil := b.max
	if attempt < 30 {
		ceil = min(ceil, b.base<<attempt)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Duration(b.rng.Int64N(int64(ceil))) + 1
}

// Timer is a timer.Timer whose every call goes through a Caller:
// paced, bounded, throttles retried until ctx ends.
type Timer struct {
	Caller *Caller
	Next   timer.Timer
}

var _ timer.Timer = (*Timer)(nil)

// NewTimer wraps next.
func NewTimer(c *Caller, next timer.Timer) (*Timer, error) {
	if c == nil || next == nil {
		return nil, errors.New("paced: the caller and the scheduler are required")
	}
	return &Timer{Caller: c, Next: next}, nil
}

// Arm implements timer.Timer.
func (s *Timer) Arm(ctx context.Context, sc timer.Schedule) error {
	return s.Caller.Do(ctx, nil, func(ctx context.Context) error { return s.Next.Arm(ctx, sc) }).Err
}

// Move implements timer.Timer.
func (s *Timer) Move(ctx context.Context, sc timer.Schedule, from time.Time) error {
	return s.Caller.Do(ctx, nil, func(ctx context.Context) error { return s.Next.Move(ctx, sc, from) }).Err
}

// Disarm implements timer.Timer.
func (s *Timer) Disarm(ctx context.Context, name string, at time.Time) error {
	return s.Caller.Do(ctx, nil, func(ctx context.Context) error { return s.Next.Disarm(ctx, name, at) }).Err
}
