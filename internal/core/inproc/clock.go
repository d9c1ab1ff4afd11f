package inproc

import (
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
)

// Clock is the pipeline's virtual clock, clock.Fake: it moves only when
// told to (Set never backwards, Advance, and Sleep, which advances
// instead of waiting).
type Clock = clock.Fake

// NewClock returns a clock reading start (in UTC).
func NewClock(start time.Time) *Clock { return clock.NewFake(start) }
