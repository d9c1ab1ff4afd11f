package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/domain/task"
)

// Clock is a virtual clock: it moves only when told to.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

var _ task.Clock = (*Clock)(nil)

// NewClock returns a clock reading start (in UTC).
func NewClock(start time.Time) *Clock { return &Clock{t: start.UTC()} }

// Now implements task.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t, never backwards: a reading earlier than the
// current one is ignored (the reconciler's rate-limit waits may already
// have moved the clock past it).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t.UTC()
	}
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Sleep is a reconcile.SleepFunc that advances the clock instead of
// waiting.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.Advance(d)
	return ctx.Err()
}
