package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// Service applies the lifecycle rules. Each method is one use case.
type Service struct {
	store    Store
	timer    timer.Timer
	notifier Notifier
	clock    Clock
	ids      IDs
	// maxPending caps each user's Pending tasks (Create).
	maxPending int
	log        *slog.Logger
}

// DefaultNotifyLease is how long an expiry attempt holds the claim to
// publish a notification before a retry may take it over. It must be
// longer than any one attempt can take to publish and record: the expiry
// function's timeout is 10 s by default (constructs/scheduleonwrite), and
// a reconciler attempt is one notify invocation and one write. A shorter lease lets
// a retry publish while a slow first attempt is still publishing (a
// duplicate email); a longer one only delays the retry of an attempt that
// crashed.
const DefaultNotifyLease = fire.DefaultLease

// DefaultMaxPendingPerUser is how many Pending tasks one user may have
// unless Deps.MaxPendingPerUser says otherwise: far above what a person
// keeps open, low enough that one account cannot fill the scheduler's
// quota of schedules or the reconciler's pass for everybody.
const DefaultMaxPendingPerUser = 1000

// Deps are the Service's collaborators. Timer (the core's timer port,
// which arms, moves and disarms the tasks' schedules) is needed by Create; a
// function that never calls it may leave it nil. (Expiring and reminding
// are not the Service's: see Firer.)
type Deps struct {
	Store Store
	Timer timer.Timer
	// Clock defaults to the wall clock.
	Clock Clock
	// IDs defaults to RandomIDs.
	IDs IDs
	// MaxPendingPerUser caps the Pending tasks of one user: Create
	// refuses the next one with a *PendingLimitError.
	// Default: DefaultMaxPendingPerUser (1000).
	MaxPendingPerUser int
	// Log defaults to slog.Default().
	Log *slog.Logger
}

// NewService checks its dependencies and returns a Service.
func NewService(d Deps) (*Service, error) {
	if d.Store == nil {
		return nil, errors.New("task: a Store is required")
	}
	if d.Clock == nil {
		d.Clock = clock.System{}
	}
	if d.IDs == nil {
		d.IDs = RandomIDs{}
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.MaxPendingPerUser < 0 {
		return nil, fmt.Errorf("task: MaxPendingPerUser must be positive (given %d)", d.MaxPendingPerUser)
	}
	if d.MaxPendingPerUser == 0 {
		d.MaxPendingPerUser = DefaultMaxPendingPerUser
	}
	s := &Service{store: d.Store, timer: d.Timer, clock: d.Clock,
		ids: d.IDs, maxPending: d.MaxPendingPerUser, log: d.Log}
	return s, nil
}

// Now is the service clock's reading.
func (s *Service) Now() time.Time { return s.clock.Now().UTC() }

// Create stores a Pending task and creates its schedule.
//
// The task is written first. If creating the schedule then fails, the task
// is kept and marked for repair, and Create still succeeds: the reconciler
// gives every Pending task a schedule, and expires any that is overdue, so
// no Pending task is left that will never expire. If it succeeds, a second
// write records it (Task.ScheduledFor), so the reconciler need not read the
// schedule back.
//
// A user who already has the maximum of Pending tasks gets a
// *PendingLimitError and nothing is written. The count is read before the
// write, so concurrent creates can pass the cap by a few
// (docs/decisions/pending-cap.md).
func (s *Service) Create(ctx context.Context, userID string, in NewTask) (Task, error) {
	if s.timer == nil {
		return Task{}, errors.New("task: Create needs a Timer")
	}
	n, err := s.store.CountUserPending(ctx, userID, s.maxPending)
	if err != nil {
		return Task{}, fmt.Errorf("create task: count pending: %w", err)
	}
	if n >= s.maxPending {
		return Task{}, &PendingLimitError{Limit: s.maxPending}
	}
	now := s.Now()
	if in.Reminder == "" {
		in.Reminder = DefaultReminder
	}
	due := in.DueAt.UTC().Truncate(time.Second)
	t := Task{
		UserID: userID, TaskID: s.ids.NewID(now), Title: in.Title, Description: in.Description,
		Status: StatusPending, DueAt: due, Reminder: in.Reminder, RemindAt: RemindAt(due, in.Reminder),
		CreatedAt: now.Truncate(time.Second), UpdatedAt: now.Truncate(time.Second),
		ScheduleToken: s.ids.NewToken(),
		// Create makes the schedule itself (the low-latency path): the
		// stream path must not make it again.
		ScheduleInline: true,
	}
	t.RemindedFor = reminderDone(time.Time{}, t.RemindAt, now)
	if err := s.store.Create(ctx, t); err != nil {
		return Task{}, fmt.Errorf("create task: %w", err)
	}
	err = s.timer.Arm(ctx, ScheduleFor(t))
	if err == nil {
		// The reminder schedule, when its time is ahead. Recorded only
		// with it: a task whose reminder schedule failed is marked for
		// repair like one whose schedule failed, and the reconciler gives
		// it both.
		err = s.createReminder(ctx, t, now)
	}
	switch {
	case err == nil:
		// Recorded, the reconciler trusts this schedule instead of reading
		// it back. Not recorded (this write failed), the task is
		// unconfirmed and the reconciler checks it: nothing is lost.
		if err := s.store.MarkScheduled(ctx, userID, t.TaskID, t.DueAt); err != nil {
			s.log.WarnContext(ctx, "recording the schedule failed; the reconciler checks it",
				logfield.Key, Key(userID, t.TaskID).String(), "taskId", t.TaskID, "error", err.Error())
		} else {
			t.ScheduledFor = t.DueAt
		}
	case errors.Is(err, ErrScheduleExists):
		// Another schedule of that name: the reconciler checks it (the
		// task stays unconfirmed).
	default:
		s.log.WarnContext(ctx, "schedule create failed; task marked for repair",
			logfield.Key, Key(userID, t.TaskID).String(), "taskId", t.TaskID, "error", err.Error())
		t.ScheduleRepair = true
		if err := s.store.SetScheduleRepair(ctx, userID, t.TaskID, true); err != nil {
			// Unmarked and unconfirmed: the reconciler still reads its
			// schedule back, and creates it.
			s.log.ErrorContext(ctx, "marking task for repair failed", logfield.Key, Key(userID, t.TaskID).String(), "taskId", t.TaskID,
				"error", err.Error())
		}
	}
	return t, nil
}

// createReminder makes the reminder schedule of a task Create wrote, when
// its time is ahead (one that exists is the reconciler's to check: the
// task stays unconfirmed).
func (s *Service) createReminder(ctx context.Context, t Task, now time.Time) error {
	r, ok := ReminderFor(t, now)
	if !ok {
		return nil
	}
	if err := s.timer.Arm(ctx, r); err != nil {
		return fmt.Errorf("reminder schedule: %w", err)
	}
	return nil
}

// Get reads one of the user's tasks.
func (s *Service) Get(ctx context.Context, userID, taskID string) (Task, error) {
	if !ValidID(taskID) {
		return Task{}, ErrNotFound
	}
	return s.store.Get(ctx, userID, taskID)
}

// List reads a page of the user's tasks.
func (s *Service) List(ctx context.Context, userID string, page PageRequest) (Page, error) {
	return s.store.List(ctx, userID, page)
}

// Update edits or completes a Pending task. The schedule is not touched
// here: the change feed drives cancellation and rescheduling.
//
// A patch of the deadline or the reminder also sets the reminder time:
// the task is read, the time computed from its deadline and reminder as
// patched, and the write conditioned on the task still having what was
// read (Patch.Basis). A concurrent change of either makes it read again.
func (s *Service) Update(ctx context.Context, userID, taskID string, p Patch) (Task, error) {
	if !ValidID(taskID) {
		return Task{}, ErrNotFound
	}
	if p.DueAt == nil && p.Reminder == nil {
		return s.store.UpdatePending(ctx, userID, taskID, p, s.Now().Truncate(time.Second))
	}
	const attempts = 5
	for i := 0; ; i++ {
		cur, err := s.store.Get(ctx, userID, taskID)
		if err != nil {
			return Task{}, err
		}
		if cur.Status != StatusPending {
			return Task{}, &NotPendingError{Status: cur.Status}
		}
		next := ApplyPatch(cur, Patch{DueAt: p.DueAt, Reminder: p.Reminder}, cur.UpdatedAt)
		p.Basis = &ReminderBasis{DueAt: cur.DueAt, Reminder: cur.Reminder, RemindAt: next.RemindAt}
		t, err := s.store.UpdatePending(ctx, userID, taskID, p, s.Now().Truncate(time.Second))
		if errors.Is(err, ErrConditionFailed) && i+1 < attempts {
			continue // the deadline or reminder changed meanwhile: read it again
		}
		return t, err
	}
}

// Delete removes a task. Its schedule is cancelled by the change feed.
func (s *Service) Delete(ctx context.Context, userID, taskID string) error {
	if !ValidID(taskID) {
		return ErrNotFound
	}
	_, err := s.store.Delete(ctx, userID, taskID)
	return err
}
