// Package reconcile repairs the drift between the task table and the
// scheduler, in both directions, as a recurring bounded job:
//
//   - a Pending task with no schedule, or one at the wrong time, gets a
//     correct one (and its ScheduleRepair mark is cleared);
//   - a schedule whose task is gone or no longer Pending is deleted;
//   - a Pending task whose deadline passed more than a grace period ago is
//     expired through task.Service.Expire, the expiry function's own
//     conditional path, which notifies its owner once;
//   - an Expired task whose notification is not recorded, expired more
//     than a grace period ago (its publish failed, and its retries are
//     spent or there were none: the reconciler's own expiry has no
//     retry), goes through task.Service.Expire again, which takes the
//     notification claim over and publishes.
//
// The tasks phase reads task.PendingLister, which lists exactly the tasks
// of both kinds (task.Task.AwaitsExpiry).
//
// A run walks two phases, tasks then schedules, a page at a time. Scheduler
// calls are rate-limited; a run stops at its time budget and saves a
// checkpoint (phase, page cursor, offset in the page), and the next run
// resumes there. Every repair is idempotent, so redoing part of a page
// after a crash is harmless.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/internal/metrics"
	"github.com/unschedule/unschedule/internal/task"
)

// Phase is the part of a run a checkpoint is in.
type Phase string

// The phases, in run order.
const (
	PhaseTasks     Phase = "tasks"
	PhaseSchedules Phase = "schedules"
)

// Checkpoint is where a run stopped. The zero value starts a full pass.
type Checkpoint struct {
	Phase Phase
	// Cursor is the cursor of the page being worked on ("" for the first).
	Cursor string
	// Offset counts the items of that page already handled. If the page
	// changed between runs (items left it), a few items may be skipped
	// until the next pass; none is handled wrongly.
	Offset int
}

// Checkpoints stores the one checkpoint of the reconciler.
type Checkpoints interface {
	// Load returns the saved checkpoint, or the zero Checkpoint if none.
	Load(ctx context.Context) (Checkpoint, error)
	Save(ctx context.Context, cp Checkpoint) error
}

// TaskStore is what the reconciler reads and writes of single tasks.
type TaskStore interface {
	Get(ctx context.Context, userID, taskID string) (task.Task, error)
	SetScheduleRepair(ctx context.Context, userID, taskID string, repair bool) error
}

// Expirer expires a task the way the expiry function does
// (*task.Service).
type Expirer interface {
	Expire(ctx context.Context, req task.ExpireRequest) (task.ExpireOutcome, error)
}

// Config bounds a run.
type Config struct {
	// Grace is how long past its deadline a Pending task may stay before
	// the reconciler expires it, and how long after its expiry an Expired
	// task may stay without a recorded notification before the reconciler
	// sends it. Keep it longer than task.DefaultNotifyLease. Default: 5
	// minutes.
	Grace time.Duration
	// RatePerSec caps scheduler API calls (reads and writes). Default: 10.
	RatePerSec float64
	// Budget is how long a run may work before it saves a checkpoint and
	// stops. Default: 4 minutes.
	Budget time.Duration
	// PageSize is how many tasks or schedules one read asks for.
	// Default: 100.
	PageSize int
}

// Defaults of Config.
const (
	DefaultGrace      = 5 * time.Minute
	DefaultRatePerSec = 10
	DefaultBudget     = 4 * time.Minute
	DefaultPageSize   = 100
)

func (c Config) withDefaults() Config {
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.RatePerSec <= 0 {
		c.RatePerSec = DefaultRatePerSec
	}
	if c.Budget <= 0 {
		c.Budget = DefaultBudget
	}
	if c.PageSize <= 0 {
		c.PageSize = DefaultPageSize
	}
	return c
}

// Deps are the reconciler's collaborators; all but Clock, Sleep, Metrics
// and Log are required.
type Deps struct {
	Pending     task.PendingLister
	Tasks       TaskStore
	Scheduler   task.Scheduler
	Schedules   task.ScheduleReader
	Expirer     Expirer
	Checkpoints Checkpoints
	// Clock defaults to the wall clock.
	Clock task.Clock
	// Sleep defaults to Sleep (real time).
	Sleep SleepFunc
	// Metrics may be nil (no metrics).
	Metrics *metrics.Recorder
	// Log defaults to slog.Default().
	Log *slog.Logger
}

// Reconciler runs reconciliation passes.
type Reconciler struct {
	cfg     Config
	d       Deps
	limiter *Limiter
}

// New checks the dependencies and returns a Reconciler.
func New(cfg Config, d Deps) (*Reconciler, error) {
	for name, ok := range map[string]bool{
		"Pending": d.Pending != nil, "Tasks": d.Tasks != nil, "Scheduler": d.Scheduler != nil,
		"Schedules": d.Schedules != nil, "Expirer": d.Expirer != nil, "Checkpoints": d.Checkpoints != nil,
	} {
		if !ok {
			return nil, fmt.Errorf("reconcile: Deps.%s is required", name)
		}
	}
	if d.Clock == nil {
		d.Clock = task.SystemClock{}
	}
	if d.Sleep == nil {
		d.Sleep = Sleep
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	cfg = cfg.withDefaults()
	return &Reconciler{cfg: cfg, d: d, limiter: NewLimiter(cfg.RatePerSec, d.Clock, d.Sleep)}, nil
}

// Result is what one run did.
type Result struct {
	SchedulesCreated   int
	SchedulesMoved     int
	SchedulesDeleted   int
	TasksExpired       int
	RepairFlagsCleared int
	// Errors counts items that failed; they are retried by the next pass.
	Errors int
	// Completed: the run finished a full pass (the checkpoint is reset).
	// False: it stopped at its budget and Checkpoint is where the next run
	// resumes.
	Completed  bool
	Checkpoint Checkpoint
}

// Metric names, one per Result count.
const (
	MetricSchedulesCreated   = "SchedulesCreated"
	MetricSchedulesMoved     = "SchedulesMoved"
	MetricSchedulesDeleted   = "SchedulesDeleted"
	MetricTasksExpired       = "TasksExpired"
	MetricRepairFlagsCleared = "RepairFlagsCleared"
	MetricErrors             = "Errors"
	MetricCompleted          = "Completed"
)

// errBudget stops a run at its budget.
var errBudget = errors.New("time budget spent")

// Run resumes from the saved checkpoint and works until the pass is done
// or the budget is spent. The error is non-nil only when the run could not
// go on (the checkpoint store or a page read failed); failures of single
// items are counted in Result.Errors and retried by the next pass.
func (r *Reconciler) Run(ctx context.Context) (Result, error) {
	var res Result
	cp, err := r.d.Checkpoints.Load(ctx)
	if err != nil {
		return res, fmt.Errorf("reconcile: load checkpoint: %w", err)
	}
	if cp.Phase == "" {
		cp = Checkpoint{Phase: PhaseTasks}
	}
	r.d.Log.InfoContext(ctx, "reconcile run starting", "phase", cp.Phase, "offset", cp.Offset,
		"resumed", cp.Cursor != "" || cp.Offset > 0 || cp.Phase != PhaseTasks)
	deadline := r.d.Clock.Now().Add(r.cfg.Budget)
	err = r.walk(ctx, &cp, deadline, &res)
	switch {
	case err == nil:
		res.Completed = true
		cp = Checkpoint{}
	case errors.Is(err, errBudget):
		err = nil
	}
	res.Checkpoint = cp
	// Save even when ctx is done, so the next run resumes here.
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := r.d.Checkpoints.Save(saveCtx, cp); serr != nil && err == nil {
		err = fmt.Errorf("reconcile: save checkpoint: %w", serr)
	}
	r.report(ctx, res, err)
	return res, err
}

// walk goes page by page through both phases from cp, updating cp as it
// goes. It returns errBudget when the budget is spent (or ctx is done).
func (r *Reconciler) walk(ctx context.Context, cp *Checkpoint, deadline time.Time, res *Result) error {
	for {
		if err := r.inBudget(ctx, deadline); err != nil {
			return err
		}
		var (
			n    int
			next string
			item func(i int)
		)
		switch cp.Phase {
		case PhaseTasks:
			page, err := r.d.Pending.ListPending(ctx, task.PageRequest{Cursor: cp.Cursor, Limit: r.cfg.PageSize})
			if err != nil {
				return fmt.Errorf("reconcile: list pending tasks: %w", err)
			}
			n, next = len(page.Tasks), page.Cursor
			item = func(i int) { r.task(ctx, page.Tasks[i], res) }
		case PhaseSchedules:
			if err := r.limiter.Wait(ctx); err != nil {
				return errBudget
			}
			page, err := r.d.Schedules.List(ctx, task.PageRequest{Cursor: cp.Cursor, Limit: r.cfg.PageSize})
			if err != nil {
				return fmt.Errorf("reconcile: list schedules: %w", err)
			}
			n, next = len(page.Schedules), page.Cursor
			item = func(i int) { r.schedule(ctx, page.Schedules[i], res) }
		default:
			r.d.Log.WarnContext(ctx, "unknown checkpoint phase; starting over", "phase", cp.Phase)
			*cp = Checkpoint{Phase: PhaseTasks}
			continue
		}
		for ; cp.Offset < n; cp.Offset++ {
			if err := r.inBudget(ctx, deadline); err != nil {
				return err
			}
			item(cp.Offset)
		}
		cp.Cursor, cp.Offset = next, 0
		if next == "" {
			if cp.Phase == PhaseSchedules {
				return nil
			}
			cp.Phase = PhaseSchedules
		}
		if err := r.d.Checkpoints.Save(ctx, *cp); err != nil {
			r.d.Log.WarnContext(ctx, "saving checkpoint failed; going on", "error", err)
		}
	}
}

func (r *Reconciler) inBudget(ctx context.Context, deadline time.Time) error {
	if ctx.Err() != nil || !r.d.Clock.Now().Before(deadline) {
		return errBudget
	}
	return nil
}

// task repairs one task as listed: Pending, or Expired and not notified
// (the listing may be stale; every write re-reads or is conditional).
func (r *Reconciler) task(ctx context.Context, t task.Task, res *Result) {
	log := r.d.Log.With("userId", t.UserID, "taskId", t.TaskID, "dueAt", task.FormatTime(t.DueAt))
	now := r.d.Clock.Now()
	switch {
	case t.Status == task.StatusExpired:
		// Its notification is not recorded. Within the grace period an
		// expiry attempt may still be at work (or retried by the
		// scheduler); after it, nothing else will retry.
		if now.Sub(t.ExpiredAt) > r.cfg.Grace {
			r.expire(ctx, log, t, res, "unnotified expired task")
		}
		return
	case t.Status != task.StatusPending:
		return
	case now.Sub(t.DueAt) > r.cfg.Grace:
		// The expiry's conditional write (still Pending, same deadline)
		// decides, so a stale listing cannot expire a moved deadline.
		r.expire(ctx, log, t, res, "overdue task")
		return
	}
	if !t.DueAt.After(now) {
		// Due within the grace period: its schedule is firing now. The
		// next run expires it if that fails.
		return
	}
	ok, err := r.ensureSchedule(ctx, log, t, res)
	if err != nil {
		r.fail(ctx, log, res, "repair schedule", err)
		return
	}
	if ok && t.ScheduleRepair {
		if err := r.d.Tasks.SetScheduleRepair(ctx, t.UserID, t.TaskID, false); err != nil {
			r.fail(ctx, log, res, "clear repair mark", err)
			return
		}
		res.RepairFlagsCleared++
		log.InfoContext(ctx, "repair mark cleared")
	}
}

// expire runs the expiry use case on a listed task. A notification that
// another attempt is publishing right now (task.ErrNotifyInProgress) is
// not a failure: that attempt records it, or the next pass takes over.
func (r *Reconciler) expire(ctx context.Context, log *slog.Logger, t task.Task, res *Result, what string) {
	out, err := r.d.Expirer.Expire(ctx, task.ExpireRequest{UserID: t.UserID, TaskID: t.TaskID, DueAt: t.DueAt})
	if errors.Is(err, task.ErrNotifyInProgress) {
		log.InfoContext(ctx, what+": its notification is in progress elsewhere; the next pass checks again")
		return
	}
	if err != nil {
		r.fail(ctx, log, res, "expire "+what, err)
		return
	}
	if out == task.Expired || out == task.Renotified {
		res.TasksExpired++
		log.InfoContext(ctx, what+" expired", "outcome", out)
	}
}

// ensureSchedule gives a Pending task the schedule task.ScheduleFor says
// it must have. ok is false when the task turned out not to need one (it
// is gone or no longer Pending: the cancellation pipeline handles it).
func (r *Reconciler) ensureSchedule(ctx context.Context, log *slog.Logger, t task.Task, res *Result) (ok bool, err error) {
	want := task.ScheduleFor(t)
	have, err := r.get(ctx, want.Name)
	missing := errors.Is(err, task.ErrScheduleNotFound)
	if err != nil && !missing {
		return false, err
	}
	if !missing && matches(have, want) {
		return true, nil
	}
	// Drift. Re-read the task before writing: the listing may predate a
	// deadline change that the worker has already applied.
	fresh, err := r.d.Tasks.Get(ctx, t.UserID, t.TaskID)
	if errors.Is(err, task.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("re-read task: %w", err)
	}
	if fresh.Status != task.StatusPending || !fresh.DueAt.After(r.d.Clock.Now()) {
		return false, nil
	}
	want = task.ScheduleFor(fresh)
	if !missing && matches(have, want) {
		return true, nil
	}
	if missing {
		err = r.create(ctx, want)
		if err == nil {
			res.SchedulesCreated++
			log.InfoContext(ctx, "missing schedule created", "at", task.FormatTime(want.At))
			return true, nil
		}
		if !errors.Is(err, task.ErrScheduleExists) {
			return false, fmt.Errorf("create schedule: %w", err)
		}
		// Created meanwhile, maybe for another deadline: move it.
	}
	err = r.update(ctx, want)
	if errors.Is(err, task.ErrScheduleNotFound) {
		// Fired or deleted meanwhile.
		if err = r.create(ctx, want); errors.Is(err, task.ErrScheduleExists) {
			err = nil
		}
	}
	if err != nil {
		return false, fmt.Errorf("move schedule: %w", err)
	}
	res.SchedulesMoved++
	log.InfoContext(ctx, "schedule moved to the task's deadline", "from", task.FormatTime(have.At),
		"to", task.FormatTime(want.At))
	return true, nil
}

// matches reports whether have fires when want does, with the same
// deadline in its payload (a payload naming another deadline would make
// the expiry skip the task). An empty payload (not reported) is not held
// against it.
func matches(have, want task.Schedule) bool {
	return have.At.Equal(want.At) && (have.Payload == task.Payload{} || have.Payload == want.Payload)
}

// schedule deletes a schedule whose task is gone or not Pending.
func (r *Reconciler) schedule(ctx context.Context, s task.Schedule, res *Result) {
	log := r.d.Log.With("schedule", s.Name)
	taskID, ok := task.TaskIDFromScheduleName(s.Name)
	if !ok {
		log.WarnContext(ctx, "not a task schedule; left alone")
		return
	}
	userID := s.Payload.UserID
	if userID == "" {
		// Listings may omit the target input: read the schedule.
		full, err := r.get(ctx, s.Name)
		if errors.Is(err, task.ErrScheduleNotFound) {
			return
		}
		if err != nil {
			r.fail(ctx, log, res, "read schedule", err)
			return
		}
		if userID = full.Payload.UserID; userID == "" {
			r.fail(ctx, log, res, "find the schedule's owner", errors.New("payload has no user id"))
			return
		}
	}
	t, err := r.d.Tasks.Get(ctx, userID, taskID)
	switch {
	case errors.Is(err, task.ErrNotFound):
	case err != nil:
		r.fail(ctx, log, res, "read task", err)
		return
	case t.Status == task.StatusPending:
		return // the tasks phase checked its time
	}
	if err := r.delete(ctx, s.Name); err != nil && !errors.Is(err, task.ErrScheduleNotFound) {
		r.fail(ctx, log, res, "delete orphan schedule", err)
		return
	}
	res.SchedulesDeleted++
	log.InfoContext(ctx, "orphan schedule deleted", "taskId", taskID, "taskStatus", t.Status)
}

func (r *Reconciler) fail(ctx context.Context, log *slog.Logger, res *Result, what string, err error) {
	res.Errors++
	log.WarnContext(ctx, what+" failed; the next pass retries", "error", err)
}

// Rate-limited scheduler calls.

func (r *Reconciler) get(ctx context.Context, name string) (task.Schedule, error) {
	if err := r.limiter.Wait(ctx); err != nil {
		return task.Schedule{}, err
	}
	return r.d.Schedules.Get(ctx, name)
}

func (r *Reconciler) create(ctx context.Context, s task.Schedule) error {
	if err := r.limiter.Wait(ctx); err != nil {
		return err
	}
	return r.d.Scheduler.Create(ctx, s)
}

func (r *Reconciler) update(ctx context.Context, s task.Schedule) error {
	if err := r.limiter.Wait(ctx); err != nil {
		return err
	}
	return r.d.Scheduler.Update(ctx, s)
}

func (r *Reconciler) delete(ctx context.Context, name string) error {
	if err := r.limiter.Wait(ctx); err != nil {
		return err
	}
	return r.d.Scheduler.Delete(ctx, name)
}

// report logs the result and records it as metrics.
func (r *Reconciler) report(ctx context.Context, res Result, err error) {
	m := r.d.Metrics
	m.Add(MetricSchedulesCreated, float64(res.SchedulesCreated))
	m.Add(MetricSchedulesMoved, float64(res.SchedulesMoved))
	m.Add(MetricSchedulesDeleted, float64(res.SchedulesDeleted))
	m.Add(MetricTasksExpired, float64(res.TasksExpired))
	m.Add(MetricRepairFlagsCleared, float64(res.RepairFlagsCleared))
	m.Add(MetricErrors, float64(res.Errors))
	completed := 0.0
	if res.Completed {
		completed = 1
	}
	m.Set(MetricCompleted, completed, "Count")
	attrs := []any{"schedulesCreated", res.SchedulesCreated, "schedulesMoved", res.SchedulesMoved,
		"schedulesDeleted", res.SchedulesDeleted, "tasksExpired", res.TasksExpired,
		"repairFlagsCleared", res.RepairFlagsCleared, "errors", res.Errors, "completed", res.Completed,
		"phase", res.Checkpoint.Phase, "offset", res.Checkpoint.Offset}
	if err != nil {
		r.d.Log.ErrorContext(ctx, "reconcile run failed", append(attrs, "error", err)...)
		return
	}
	r.d.Log.InfoContext(ctx, "reconcile run done", attrs...)
}
