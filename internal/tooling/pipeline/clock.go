package pipeline

import (
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Clock is the pipeline's virtual clock, clock.Fake: it moves only when
// told to (Set never backwards, Advance, and Sleep, which advances
// instead of waiting).
type Clock = clock.Fake

var _ task.Clock = (*Clock)(nil)

// NewClock returns a clock reading start (in UTC).
func NewClock(start time.Time) *Clock { return clock.NewFake(start) }
