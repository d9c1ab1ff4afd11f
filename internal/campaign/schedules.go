package campaign

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/domain/reconcile"
	"github.com/unschedule/unschedule/internal/domain/timer"
	"github.com/unschedule/unschedule/internal/domain/timer/paced"
)

// Schedules is the campaign schedules as the core's timer ports
// (timer.Scheduler and timer.Reader) over a campaign Scheduler
// (awsscheduler.Requests in AWS): a schedule is named camp-<taskId>, made
// by ScheduleFor from the task as stored (at() in the campaign's local
// time and zone, the task's ClientToken, <token>-r<n> once retimed), in
// the Target's group.
//
// The Scheduler tells whether a schedule exists, not when it fires: Get
// reports an existing one at the time asked for (every campaign schedule
// is made from its task, so it fires at the task's send time unless the
// task was retimed, and a retime moves it through Update). List lists
// nothing: a campaign schedule deletes itself after it fires
// (ActionAfterCompletion DELETE) and the cancel path deletes the others,
// so there are no orphans to look for.
type Schedules struct {
	Tasks     Tasks
	Scheduler Scheduler
	Target    Target
	// Caller, optional, paces the calls and retries throttles
	// (timer/paced); nil: one try each.
	Caller *paced.Caller
}

var (
	_ timer.Scheduler = Schedules{}
	_ timer.Reader    = Schedules{}
	_ reconcile.Namer = Schedules{}
)

// ScheduleName implements reconcile.Namer: camp-<taskId> (ScheduleName),
// not TaskSchema's hash of the key; "" for a key that is not a task's.
func (s Schedules) ScheduleName(k contract.Key) string {
	tk, err := KeyOf(k)
	if err != nil {
		return ""
	}
	return ScheduleName(tk.TaskID)
}

// timerErr maps the campaign scheduler's errors to the timer's.
func timerErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrScheduleExists):
		return fmt.Errorf("%w: %w", timer.ErrExists, err)
	case errors.Is(err, ErrScheduleNotFound):
		return fmt.Errorf("%w: %w", timer.ErrNotFound, err)
	case errors.Is(err, ErrThrottled):
		return fmt.Errorf("%w: %w", timer.ErrThrottled, err)
	}
	return err
}

func (s Schedules) call(ctx context.Context, f func(context.Context) error) error {
	if s.Caller == nil {
		return timerErr(f(ctx))
	}
	return s.Caller.Do(ctx, nil, func(ctx context.Context) error { return timerErr(f(ctx)) }).Err
}

// request is the create request of the task the schedule is for, as
// stored now.
func (s Schedules) request(ctx context.Context, sc timer.Schedule) (ScheduleRequest, error) {
	k, err := KeyOf(sc.Payload.Key)
	if err != nil {
		return ScheduleRequest{}, err
	}
	t, err := s.Tasks.Get(ctx, k)
	if err != nil {
		return ScheduleRequest{}, fmt.Errorf("read task %s: %w", k.TaskID, err)
	}
	return ScheduleFor(t, s.Target), nil
}

// Create implements timer.Scheduler.
func (s Schedules) Create(ctx context.Context, sc timer.Schedule) error {
	req, err := s.request(ctx, sc)
	if err != nil {
		return err
	}
	return s.call(ctx, func(ctx context.Context) error { return s.Scheduler.Create(ctx, req) })
}

// Update implements timer.Scheduler: the schedule is deleted and made
// again for the task's time (a one-off schedule's time is its
// expression; a delete and create keep the create's ClientToken rule).
func (s Schedules) Update(ctx context.Context, sc timer.Schedule, from time.Time) error {
	if err := s.Delete(ctx, sc.Name, from); err != nil {
		return err
	}
	if err := s.Create(ctx, sc); err != nil && !errors.Is(err, timer.ErrExists) {
		return err
	}
	return nil
}

// Delete implements timer.Scheduler.
func (s Schedules) Delete(ctx context.Context, name string, _ time.Time) error {
	if !strings.HasPrefix(name, ScheduleNamePrefix) {
		return fmt.Errorf("%s is not a campaign schedule's name", name)
	}
	return s.call(ctx, func(ctx context.Context) error { return s.Scheduler.Delete(ctx, s.Target.GroupName, name) })
}

// Get implements timer.Reader: an existing schedule is reported at at
// (see Schedules).
func (s Schedules) Get(ctx context.Context, name string, at time.Time) (timer.Schedule, error) {
	var ok bool
	err := s.call(ctx, func(ctx context.Context) (err error) {
		ok, err = s.Scheduler.Exists(ctx, s.Target.GroupName, name)
		return err
	})
	switch {
	case err != nil:
		return timer.Schedule{}, err
	case !ok:
		return timer.Schedule{}, fmt.Errorf("%s: %w", name, timer.ErrNotFound)
	}
	return timer.Schedule{Name: name, At: at}, nil
}

// List implements timer.Reader: nothing (see Schedules).
func (s Schedules) List(context.Context, timer.PageRequest) (timer.Page, error) {
	return timer.Page{}, nil
}
