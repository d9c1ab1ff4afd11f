package campaign

import (
	"context"
	"time"

	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/paced"
)

// Timer is the core's timer as the campaign drives it: it arms, moves
// and disarms the schedule of each send task (an item on TaskSchema), and
// reads them for the reconciler. Any core timer serves: EventBridge
// Scheduler, Step Functions or TTL markers (internal/core/adapters/timers in
// AWS, their memory stand-ins in tests, the simulation and make dev).
type Timer interface {
	timer.Timer
	timer.Reader
}

// Schedule is the task's schedule on the core's timer: TaskSchema's
// schedule of the task's item, due at its send time (UTC, whole seconds),
// with an idempotency token derived from the task's stored
// SchedulerRequestToken and that time (a retimed task's is another), and
// the task's key and send time as its payload.
func (t SendTask) Schedule() timer.Schedule { return TaskSchema.ScheduleFor(t.Item()) }

// Paced is t with every call through the core's paced caller (bounded
// in flight, paced, throttles retried with back-off until ctx ends); a
// nil caller leaves t as it is.
func Paced(c *paced.Caller, t Timer) Timer {
	if c == nil {
		return t
	}
	return pacedTimer{Timer: &paced.Timer{Caller: c, Next: t}, reader: t, caller: c}
}

type pacedTimer struct {
	*paced.Timer
	reader timer.Reader
	caller *paced.Caller
}

func (p pacedTimer) Get(ctx context.Context, name string, at time.Time) (s timer.Schedule, err error) {
	err = p.caller.Do(ctx, nil, func(ctx context.Context) (err error) { s, err = p.reader.Get(ctx, name, at); return err }).Err
	return s, err
}

func (p pacedTimer) List(ctx context.Context, page timer.PageRequest) (pg timer.Page, err error) {
	err = p.caller.Do(ctx, nil, func(ctx context.Context) (err error) { pg, err = p.reader.List(ctx, page); return err }).Err
	return pg, err
}
