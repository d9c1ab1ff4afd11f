// Package clock is the one clock of the module: the Clock interface the
// services read and wait on, the System clock that Lambda mains use, and
// Fake, the controllable clock of tests, the simulations and the
// in-process pipeline behind the dev server. A port that takes a
// function gets one from here (System{}.Now, or a Fake's Now).
package clock

import (
	"context"
	"sync"
	"time"
)

// Reader reads the time: the port of a service that never waits (the
// to-do service, the API).
type Reader interface{ Now() time.Time }

// Clock reads and waits on time.
type Clock interface {
	Reader
	// Sleep waits d or until ctx ends (then ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// System is the wall clock, read in UTC.
type System struct{}

// Now is time.Now in UTC.
func (System) Now() time.Time { return time.Now().UTC() }

// Sleep waits d in real time, or until ctx ends.
func (System) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Func is a Clock that reads now and waits in real time: the dev server's
// wall clock when its owner supplies the reading.
func Func(now func() time.Time) Clock { return funcClock(now) }

type funcClock func() time.Time

func (f funcClock) Now() time.Time { return f() }

func (funcClock) Sleep(ctx context.Context, d time.Duration) error { return System{}.Sleep(ctx, d) }

// Fake is a virtual clock: it moves only when told to, and Sleep moves it
// at once instead of waiting. It is safe for concurrent use.
type Fake struct {
	mu sync.Mutex
	t  time.Time
}

// NewFake returns a clock reading start (in UTC).
func NewFake(start time.Time) *Fake { return &Fake{t: start.UTC()} }

// Now reads the clock.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t, never backwards: a reading earlier than the
// current one is ignored (a rate-limit wait may already have moved the
// clock past it).
func (c *Fake) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t.UTC()
	}
}

// Advance moves the clock forward by d; d <= 0 leaves it.
func (c *Fake) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.t = c.t.Add(d)
	}
}

// Sleep advances the clock by d at once, unless ctx has ended (then it
// returns ctx.Err() and the clock stays).
func (c *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}
