package campaign

import (
	"context"
	"errors"
	"time"

	"github.com/unschedule/unschedule/internal/domain/timer/paced"
)

// Backoff is the core's full-jitter back-off (paced.Backoff) with the
// campaign services' retry of throttled calls.
type Backoff struct{ *paced.Backoff }

// NewBackoff returns a Backoff; seed 0 draws a random seed, and a seed
// makes its waits repeatable (the simulation).
func NewBackoff(base, max time.Duration, seed uint64) *Backoff {
	return &Backoff{paced.NewBackoff(base, max, seed)}
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
