package reconcile

import (
	"context"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
)

// SleepFunc waits d or until ctx ends. Tests and the simulation pass one
// that advances a virtual clock.
type SleepFunc func(ctx context.Context, d time.Duration) error

// Sleep is the real SleepFunc: clock.System's.
func Sleep(ctx context.Context, d time.Duration) error { return clock.System{}.Sleep(ctx, d) }

// Limiter paces calls to at most a rate per second, with no burst: call
// n+1 starts no earlier than call n plus 1/rate. It reads time only through
// its Clock and waits only through its SleepFunc, so it runs on a virtual
// clock.
type Limiter struct {
	mu       sync.Mutex
	clock    clock.Reader
	sleep    SleepFunc
	interval time.Duration
	next     time.Time
}

// NewLimiter returns a limiter of perSecond calls a second (> 0).
func NewLimiter(perSecond float64, c clock.Reader, sleep SleepFunc) *Limiter {
	return &Limiter{clock: c, sleep: sleep, interval: time.Duration(float64(time.Second) / perSecond)}
}

// Wait blocks until the next call may start.
func (l *Limiter) Wait(ctx context.Context) error {
	l.mu.Lock()
	now := l.clock.Now()
	if l.next.Before(now) {
		l.next = now
	}
	wait := l.next.Sub(now)
	l.next = l.next.Add(l.interval)
	l.mu.Unlock()
	if wait <= 0 {
		return ctx.Err()
	}
	return l.sleep(ctx, wait)
}
