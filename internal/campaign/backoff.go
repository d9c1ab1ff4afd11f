package campaign

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// Backoff waits with full jitter: attempt n waits a random time in
// (0, min(Max, Base·2ⁿ)]. It is safe for concurrent use; a seed makes
// its waits repeatable (the simulation).
type Backoff struct {
	Base, Max time.Duration
	mu        sync.Mutex
	rng       *rand.Rand
}

// NewBackoff returns a Backoff; seed 0 draws a random seed.
func NewBackoff(base, max time.Duration, seed uint64) *Backoff {
	if seed == 0 {
		seed = rand.Uint64()
	}
	return &Backoff{Base: base, Max: max, rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

// Delay is the wait before retry number attempt (0-based).
func (b *Backoff) Delay(attempt int) time.Duration {
	ceil := b.Max
	if attempt < 30 {
		ceil = min(ceil, b.Base<<attempt)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Duration(b.rng.Int64N(int64(ceil))) + 1
}

// RetryThrottled calls call until it returns anything but ErrThrottled,
// waiting Delay on clock between tries, at most tries calls; it returns
// the last error (ErrThrottled after the last try).
func (b *Backoff) RetryThrottled(ctx context.Context, clock Clock, tries int, call func() error) error {
	for attempt := 0; ; attempt++ {
		err := call()
		if !errors.Is(err, ErrThrottled) || attempt+1 >= tries {
			return err
		}
		if err := clock.Sleep(ctx, b.Delay(attempt)); err != nil {
			return err
		}
	}
}
