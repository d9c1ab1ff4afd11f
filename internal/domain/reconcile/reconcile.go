// Package reconcile repairs the drift between the task table and the
// scheduler, in both directions, as a recurring bounded job:
//
//   - a Pending task with no schedule, or one at the wrong time, gets a
//     correct one (and its ScheduleRepair mark is cleared);
//   - a schedule whose task is gone or no longer Pending is deleted;
//   - a Pending task whose deadline passed more than a grace period ago is
//     expired through task.Firer, the expiry function's own conditional
//     path and target, which notifies its owner once;
//   - an Expired task whose notification is not recorded, expired more
//     than a grace period ago (its publish failed, and its retries are
//     spent or there were none: the reconciler's own expiry has no
//     retry), goes through task.Firer again, which takes the
//     notification claim over and publishes.
//
// A run costs what the drift costs, not what the table holds:
//
//  1. The overdue sweep opens every run: the tasks due at least the grace
//     period ago, read from every shard of the pending index up to that
//     deadline (task.PendingRequest.DueBy), are expired or re-notified.
//     It makes no scheduler call, so no backlog of other work delays an
//     expiry past the next run.
//  2. The tasks phase reads the rest of the index. A task whose schedule
//     is confirmed (task.Task.ScheduleConfirmed: the API recorded its
//     creation, or a pass checked it) costs no scheduler call. A task
//     marked for repair gets its schedule created (one call). Any other
//     task (its deadline changed since, or its item predates the record)
//     is read back with GetSchedule and repaired; once its last change is
//     older than Config.Settle, the result is recorded so that later
//     passes trust it. A Pending task overdue by its instant that the
//     sweep did not list (a writer's spelling that sorts after the
//     sweep's bound) is expired here.
//  3. The schedules phase lists the schedule group (one call per 100
//     schedules). A schedule of a Pending task costs nothing more; any
//     other is read and, when its task is gone or finished, deleted. When
//     the whole listing ran in one run, a confirmed task whose schedule
//     was not listed (deleted by hand) gets it back.
//
// What no pass sees without reading every schedule: a confirmed schedule
// moved to another time by hand, or by a dead-lettered reschedule that is
// redriven later. The overdue sweep bounds it: such a task is expired at
// most the grace period and one interval late.
//
// Scheduler calls are rate-limited; a run stops at its time budget and
// saves a checkpoint (phase, page cursor, offset in the page), and the
// next run resumes there after its own overdue sweep. Every repair is
// idempotent, so redoing part of a page after a crash is harmless.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/internal/clock"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/metrics"
)

// Phase is the part of a pass a checkpoint is in.
type Phase string

// The phases, in pass order. The overdue sweep that opens every run is
// not one: it is never resumed, always redone.
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
	MarkScheduled(ctx context.Context, userID, taskID string, dueAt time.Time) error
}

// PendingCounter counts what task.PendingLister.ListPending would list
// from req.Cursor on, without reading the tasks. Optional: a lister that
// is not one makes Result.LeftOver a lower bound (1 when a run stops
// early).
type PendingCounter interface {
	CountPending(ctx context.Context, req task.PendingRequest) (int, error)
}

// Expirer expires a task the way the expiry function does: the firing
// core on the task table, delivering to the to-do app's target
// (*task.Firer).
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
	// RatePerSec caps scheduler API calls (reads, lists and writes).
	// Default: 10.
	RatePerSec float64
	// Budget is how long a run may work before it saves a checkpoint and
	// stops. Default: 4 minutes.
	Budget time.Duration
	// PageSize is how many tasks or schedules one read asks for.
	// Default: 100.
	PageSize int
	// Settle is how long after a task's last change the cancellation
	// pipeline may still move its schedule: the stream's maximum record
	// age plus the queue's redelivery (constructs/cancellation: 1 hour and
	// 5 x 3 minutes by default). The reconciler records a schedule it
	// checked as confirmed only for a task unchanged for that long, so a
	// late reschedule never moves a schedule the table vouches for.
	// Default: 2 hours.
	Settle time.Duration
}

// Defaults of Config.
const (
	DefaultGrace      = 5 * time.Minute
	DefaultRatePerSec = 10
	DefaultBudget     = 4 * time.Minute
	DefaultPageSize   = 100
	DefaultSettle     = 2 * time.Hour
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
	if c.Settle <= 0 {
		c.Settle = DefaultSettle
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
		d.Clock = clock.System{}
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
	// SchedulesConfirmed counts the tasks whose schedule the run checked
	// and recorded as confirmed (Task.ScheduledFor): later passes trust
	// them.
	SchedulesConfirmed int
	// TasksChecked counts the tasks the run looked at (overdue sweep and
	// tasks phase); SchedulesChecked the schedules it listed.
	TasksChecked     int
	SchedulesChecked int
	// SchedulerCalls counts the run's scheduler API calls, each paced by
	// the rate limit: Budget x RatePerSec is what a run can afford.
	SchedulerCalls int
	// LeftOver is the work the run had not reached when it stopped at
	// its budget: 0 when the pass completed, else at least 1. It is the
	// larger of the overdue tasks the sweep did not reach and the tasks
	// the pass did not reach (counted in the pending index from the
	// checkpoint on, where the lister can count; in the schedules phase,
	// the Pending tasks whose schedule is not listed yet).
	LeftOver int
	// Errors counts items that failed; they are retried by the next pass.
	Errors int
	// Completed: the run finished a full pass (the checkpoint is reset).
	// False: it stopped at its budget and Checkpoint is where the next run
	// resumes.
	Completed  bool
	Checkpoint Checkpoint
}

// Repaired is the number of repairs the run made: schedules created,
// moved and deleted, and tasks expired.
func (r Result) Repaired() int {
	return r.SchedulesCreated + r.SchedulesMoved + r.SchedulesDeleted + r.TasksExpired
}

// Metric names, one per Result count, written once per run.
const (
	MetricSchedulesCreated   = metrics.SchedulesCreated
	MetricSchedulesMoved     = metrics.SchedulesMoved
	MetricSchedulesDeleted   = metrics.SchedulesDeleted
	MetricTasksExpired       = metrics.TasksExpired
	MetricRepairFlagsCleared = metrics.RepairFlagsCleared
	MetricSchedulesConfirmed = metrics.SchedulesConfirmed
	MetricErrors             = metrics.ReconcilerErrors
	// MetricTasksChecked, MetricSchedulesChecked, MetricRepaired and
	// MetricLeftOver are a run's cost, work and backlog: LeftOver above
	// zero means a pass did not fit one run.
	MetricTasksChecked     = metrics.TasksChecked
	MetricSchedulesChecked = metrics.SchedulesChecked
	MetricSchedulerCalls   = metrics.SchedulerCalls
	MetricRepaired         = metrics.Repaired
	MetricLeftOver         = metrics.LeftOver
	// MetricPassesCompleted is 1 for a run that completed a pass, else 0.
	// Its Sum over an interval is 0 when passes stopped completing, and
	// missing when no run reported at all.
	MetricPassesCompleted = metrics.PassesCompleted
)

// errBudget stops a run at its budget.
var errBudget = errors.New("time budget spent")

// run is the state of one Run.
type run struct {
	*Reconciler
	res      *Result
	deadline time.Time
	// cut is the overdue sweep's bound: tasks due at or before it are the
	// sweep's, in this run or the next.
	cut time.Time
	// sweepLeft is the request of the page where the overdue sweep
	// stopped, when it did not finish (its handled tasks have left the
	// index, unless they failed and are still due).
	sweepLeft *task.PendingRequest
	// pending holds the Pending tasks by schedule name, for the schedules
	// phase: collected by a tasks phase that runs whole in this run, else
	// read from the index when the run enters the schedules phase. order
	// keeps them in listing order; havePending says they are all there.
	pending     map[string]*pendingEntry
	order       []*pendingEntry
	havePending bool
	// pendingSince is when the reading of pending began: a task made
	// after it is not in pending, and is left to the next pass.
	pendingSince time.Time
	// listedWhole: the schedules listing started at its first page in
	// this run, so an unlisted confirmed schedule is really missing.
	listedWhole bool
	// missingLeft counts the missing schedules the run had no budget for.
	missingLeft int
}

type pendingEntry struct {
	userID, taskID string
	confirmed      bool
	listed         bool
}

// Run does the overdue sweep, then resumes the pass from the saved
// checkpoint and works until the pass is done or the budget is spent.
// The error is non-nil only when the run could not go on (the checkpoint
// store or a page read failed); failures of single items are counted in
// Result.Errors and retried by the next pass.
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
	now := r.d.Clock.Now()
	x := &run{Reconciler: r, res: &res, deadline: now.Add(r.cfg.Budget), cut: now.Add(-r.cfg.Grace)}
	err = x.sweepOverdue(ctx)
	if err == nil {
		err = x.walk(ctx, &cp)
	}
	switch {
	case err == nil:
		res.Completed = true
		cp = Checkpoint{}
	case errors.Is(err, errBudget):
		err = nil
	}
	if x.missingLeft > 0 {
		// The pass listed everything; the next one finds these again.
		res.Completed = false
	}
	res.Checkpoint = cp
	// Save (and count what is left) even when ctx is done, so the next run
	// resumes here.
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := r.d.Checkpoints.Save(saveCtx, cp); serr != nil && err == nil {
		err = fmt.Errorf("reconcile: save checkpoint: %w", serr)
	}
	if !res.Completed {
		res.LeftOver = max(1, x.leftOver(saveCtx, cp))
	}
	r.report(ctx, res, err)
	return res, err
}

// sweepOverdue expires the tasks due at or before the cut, every shard,
// from the first page. It returns errBudget when the budget is spent.
func (x *run) sweepOverdue(ctx context.Context) error {
	req := task.PendingRequest{Limit: x.cfg.PageSize, DueBy: x.cut}
	for {
		if err := x.inBudget(ctx); err != nil {
			x.sweepLeft = &req
			return err
		}
		page, err := x.d.Pending.ListPending(ctx, req)
		if err != nil {
			return fmt.Errorf("reconcile: list overdue tasks: %w", err)
		}
		for _, t := range page.Tasks {
			if err := x.inBudget(ctx); err != nil {
				x.sweepLeft = &req
				return err
			}
			x.overdue(ctx, t)
		}
		if page.Cursor == "" {
			return nil
		}
		req.Cursor = page.Cursor
	}
}

// count is how many tasks are listed from req on, less the skip already
// handled; 0 when the lister cannot count (Run reports at least 1).
func (x *run) count(ctx context.Context, req task.PendingRequest, skip int) int {
	c, ok := x.d.Pending.(PendingCounter)
	if !ok {
		return 0
	}
	n, err := c.CountPending(ctx, req)
	if err != nil {
		x.d.Log.WarnContext(ctx, "counting the work left failed", "error", err)
		return 0
	}
	return max(0, n-skip)
}

// leftOver is the work the run had not reached: the larger of what the
// overdue sweep left and what the pass left from cp on (the pass's count
// includes the overdue tasks of the shards it has not read).
func (x *run) leftOver(ctx context.Context, cp Checkpoint) int {
	n := x.missingLeft
	switch {
	case cp.Phase == PhaseTasks:
		n += x.count(ctx, task.PendingRequest{Cursor: cp.Cursor, Limit: x.cfg.PageSize}, cp.Offset)
	case cp.Phase == PhaseSchedules && x.havePending:
		for _, e := range x.order {
			if !e.listed {
				n++
			}
		}
	}
	if x.sweepLeft != nil {
		n = max(n, x.count(ctx, *x.sweepLeft, 0))
	}
	return n
}

// walk goes page by page through both phases from cp, updating cp as it
// goes. It returns errBudget when the budget is spent (or ctx is done).
func (x *run) walk(ctx context.Context, cp *Checkpoint) error {
	for {
		if err := x.inBudget(ctx); err != nil {
			return err
		}
		var (
			n    int
			next string
			item func(i int)
		)
		switch cp.Phase {
		case PhaseTasks:
			if x.pending == nil && cp.Cursor == "" && cp.Offset == 0 {
				// This run sees the whole phase: collect.
				x.pending, x.pendingSince = map[string]*pendingEntry{}, x.d.Clock.Now()
			}
			page, err := x.d.Pending.ListPending(ctx, task.PendingRequest{Cursor: cp.Cursor, Limit: x.cfg.PageSize})
			if err != nil {
				return fmt.Errorf("reconcile: list pending tasks: %w", err)
			}
			n, next = len(page.Tasks), page.Cursor
			item = func(i int) {
				t := page.Tasks[i]
				if confirmed, pending := x.task(ctx, t); pending {
					x.collect(t, confirmed)
				}
			}
		case PhaseSchedules:
			if !x.havePending {
				if err := x.loadPending(ctx); err != nil {
					return err
				}
				x.listedWhole = cp.Cursor == "" && cp.Offset == 0
			}
			if err := x.wait(ctx); err != nil {
				return errBudget
			}
			page, err := x.d.Schedules.List(ctx, task.PageRequest{Cursor: cp.Cursor, Limit: x.cfg.PageSize})
			if err != nil {
				return fmt.Errorf("reconcile: list schedules: %w", err)
			}
			n, next = len(page.Schedules), page.Cursor
			item = func(i int) { x.schedule(ctx, page.Schedules[i]) }
		default:
			x.d.Log.WarnContext(ctx, "unknown checkpoint phase; starting over", "phase", cp.Phase)
			*cp = Checkpoint{Phase: PhaseTasks}
			continue
		}
		for ; cp.Offset < n; cp.Offset++ {
			if err := x.inBudget(ctx); err != nil {
				return err
			}
			item(cp.Offset)
		}
		cp.Cursor, cp.Offset = next, 0
		if next == "" {
			if cp.Phase == PhaseSchedules {
				if x.listedWhole {
					x.restoreMissing(ctx)
				}
				return nil
			}
			cp.Phase = PhaseSchedules
			x.havePending = x.pending != nil
			x.listedWhole = x.havePending
		}
		if err := x.d.Checkpoints.Save(ctx, *cp); err != nil {
			x.d.Log.WarnContext(ctx, "saving checkpoint failed; going on", "error", err)
		}
	}
}

func (x *run) inBudget(ctx context.Context) error {
	if ctx.Err() != nil || !x.d.Clock.Now().Before(x.deadline) {
		return errBudget
	}
	return nil
}

// overdue handles a task of the overdue sweep: Pending and due at least
// the grace period ago, or Expired and not notified (the listing may be
// stale; every write re-reads or is conditional).
func (x *run) overdue(ctx context.Context, t task.Task) {
	x.res.TasksChecked++
	log := x.d.Log.With("userId", t.UserID, "taskId", t.TaskID, "dueAt", task.FormatTime(t.DueAt))
	switch t.Status {
	case task.StatusExpired:
		// Its notification is not recorded. Within the grace period an
		// expiry attempt may still be at work (or retried by the
		// scheduler); after it, nothing else will retry.
		if x.d.Clock.Now().Sub(t.ExpiredAt) > x.cfg.Grace {
			x.expire(ctx, log, t, "unnotified expired task")
		}
	case task.StatusPending:
		// The listing compares due times as stored strings, so a writer's
		// spelling with a negative offset ("…T19:23:49-05:00") is listed
		// before its instant; the firing core would refuse it as early.
		// It is not overdue yet: leave it to its schedule.
		if t.DueAt.After(x.cut) {
			return
		}
		// The expiry's conditional write (still Pending, same deadline)
		// decides, so a stale listing cannot expire a moved deadline.
		x.expire(ctx, log, t, "overdue task")
	}
}

// collect adds a listed Pending task to the tasks the schedules phase
// knows, when this run collects them.
func (x *run) collect(t task.Task, confirmed bool) {
	if x.pending == nil || t.Status != task.StatusPending {
		return
	}
	e := &pendingEntry{userID: t.UserID, taskID: t.TaskID, confirmed: confirmed}
	x.pending[task.ScheduleName(t.TaskID)] = e
	x.order = append(x.order, e)
}

// task checks one task of the tasks phase, and reports whether its
// schedule is confirmed, and whether the task is still Pending as listed
// (the schedules phase keeps the schedule of a task it collected). Tasks due by the cut are the overdue sweep's;
// Expired ones are too (they were due before they expired). A Pending
// one listed here past the cut is one the sweep did not reach: the index
// sorts the due attribute as stored, and a writer's spelling with a
// positive offset ("T09:00:00+01:00" for 08:00Z) or a lower-case "t"
// sorts after the sweep's bound (that offset, or up to a day). It is
// expired here, so a lost schedule costs such a task at most one pass;
// then its schedule, if any, is an orphan that the schedules phase deletes.
func (x *run) task(ctx context.Context, t task.Task) (confirmed, pending bool) {
	x.res.TasksChecked++
	now := x.d.Clock.Now()
	if t.Status == task.StatusPending && !t.DueAt.After(x.cut) {
		return false, !x.expire(ctx, x.d.Log.With("userId", t.UserID, "taskId", t.TaskID, "dueAt", task.FormatTime(t.DueAt)),
			t, "overdue task the sweep did not list")
	}
	pending = t.Status == task.StatusPending
	if !pending || !t.DueAt.After(now) {
		// Overdue, or due within the grace period: its schedule is firing
		// now, and the next run's sweep expires it if that fails.
		return false, pending
	}
	if t.ScheduleConfirmed() {
		return true, true // no scheduler call: the schedules phase sees it deleted
	}
	log := x.d.Log.With("userId", t.UserID, "taskId", t.TaskID, "dueAt", task.FormatTime(t.DueAt))
	fresh, ok, err := x.ensureSchedule(ctx, log, t)
	if err != nil {
		x.fail(ctx, log, "repair schedule", err)
		return false, true
	}
	if !ok {
		return false, true
	}
	if err := x.ensureReminder(ctx, log, fresh); err != nil {
		x.fail(ctx, log, "repair reminder schedule", err)
		return false, true
	}
	if now.Sub(fresh.UpdatedAt) >= x.cfg.Settle {
		switch err := x.d.Tasks.MarkScheduled(ctx, fresh.UserID, fresh.TaskID, fresh.DueAt); {
		case errors.Is(err, task.ErrConditionFailed):
			// Changed meanwhile: the next pass checks it again.
		case err != nil:
			x.fail(ctx, log, "record the schedule", err)
		default:
			x.res.SchedulesConfirmed++
			if fresh.ScheduleRepair {
				x.res.RepairFlagsCleared++
			}
			return true, true
		}
		return false, true
	}
	// Changed recently: a reschedule may still be on its way, so the
	// schedule stays unconfirmed and is checked again next pass.
	if fresh.ScheduleRepair {
		if err := x.d.Tasks.SetScheduleRepair(ctx, fresh.UserID, fresh.TaskID, false); err != nil {
			x.fail(ctx, log, "clear repair mark", err)
			return false, true
		}
		x.res.RepairFlagsCleared++
		log.InfoContext(ctx, "repair mark cleared")
	}
	return false, true
}

// expire runs the expiry use case on a listed task, and reports whether
// it expired it (or re-notified it). A notification that
// another attempt is publishing right now (task.ErrNotifyInProgress) is
// not a failure: that attempt records it, or the next pass takes over.
func (x *run) expire(ctx context.Context, log *slog.Logger, t task.Task, what string) (expired bool) {
	out, err := x.d.Expirer.Expire(ctx, task.ExpireRequest{UserID: t.UserID, TaskID: t.TaskID, DueAt: t.DueAt})
	if errors.Is(err, task.ErrNotifyInProgress) {
		log.InfoContext(ctx, what+": its notification is in progress elsewhere; the next pass checks again")
		return false
	}
	if err != nil {
		x.fail(ctx, log, "expire "+what, err)
		return false
	}
	if out == task.Expired || out == task.Renotified {
		x.res.TasksExpired++
		log.InfoContext(ctx, what+" expired", "outcome", out)
		return true
	}
	return false
}

// ensureSchedule gives a Pending task the schedule task.ScheduleFor says
// it must have, and returns the task as it was when it checked. A task
// marked for repair is known to lack one: it is created without reading
// first. ok is false when the task turned out not to need one (it is gone
// or no longer Pending: the cancellation pipeline handles it).
func (x *run) ensureSchedule(ctx context.Context, log *slog.Logger, t task.Task) (fresh task.Task, ok bool, err error) {
	want := task.ScheduleFor(t)
	var have task.Schedule
	missing := t.ScheduleRepair
	if !missing {
		have, err = x.get(ctx, want.Name)
		missing = errors.Is(err, task.ErrScheduleNotFound)
		if err != nil && !missing {
			return t, false, err
		}
		if !missing && matches(have, want) {
			return t, true, nil
		}
	}
	// Drift. Re-read the task before writing: the listing may predate a
	// deadline change that the worker has already applied.
	fresh, err = x.d.Tasks.Get(ctx, t.UserID, t.TaskID)
	if errors.Is(err, task.ErrNotFound) {
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("re-read task: %w", err)
	}
	if fresh.Status != task.StatusPending || !fresh.DueAt.After(x.d.Clock.Now()) {
		return fresh, false, nil
	}
	want = task.ScheduleFor(fresh)
	if !missing && matches(have, want) {
		return fresh, true, nil
	}
	if missing {
		err = x.create(ctx, want)
		if err == nil {
			x.res.SchedulesCreated++
			log.InfoContext(ctx, "missing schedule created", "at", task.FormatTime(want.At))
			return fresh, true, nil
		}
		if !errors.Is(err, task.ErrScheduleExists) {
			return fresh, false, fmt.Errorf("create schedule: %w", err)
		}
		// One exists, maybe for another deadline: move it.
	}
	err = x.update(ctx, want, have.At)
	if errors.Is(err, task.ErrScheduleNotFound) {
		// Fired or deleted meanwhile.
		if err = x.create(ctx, want); errors.Is(err, task.ErrScheduleExists) {
			err = nil
		}
	}
	if err != nil {
		return fresh, false, fmt.Errorf("move schedule: %w", err)
	}
	x.res.SchedulesMoved++
	log.InfoContext(ctx, "schedule moved to the task's deadline", "from", task.FormatTime(have.At),
		"to", task.FormatTime(want.At))
	return fresh, true, nil
}

// ensureReminder gives a Pending task, checked by ensureSchedule, the
// reminder schedule task.ReminderFor says it must have when its time is
// still ahead. A reminder schedule the task no longer wants (no reminder,
// or its time passed) is left alone: it fires, its claim fails, and it
// deletes itself; the cancellation worker deletes it on every change.
// Reminder schedules are named with their own prefix, which the schedules
// phase does not list, so they are never taken for orphans.
func (x *run) ensureReminder(ctx context.Context, log *slog.Logger, t task.Task) error {
	want, ok := task.ReminderFor(t, x.d.Clock.Now())
	if !ok {
		return nil
	}
	have, err := x.get(ctx, want.Name)
	switch {
	case err == nil && matches(have, want):
		return nil
	case err == nil:
		err = x.update(ctx, want, have.At)
		if errors.Is(err, task.ErrScheduleNotFound) {
			err = x.create(ctx, want) // fired or deleted meanwhile
		}
	case errors.Is(err, task.ErrScheduleNotFound):
		err = x.create(ctx, want)
		if errors.Is(err, task.ErrScheduleExists) {
			err = x.update(ctx, want, time.Time{}) // made meanwhile, for a time not known
		}
	}
	if err != nil {
		return err
	}
	x.res.SchedulesCreated++
	log.InfoContext(ctx, "reminder schedule repaired", "at", task.FormatTime(want.At))
	return nil
}

// matches reports whether have fires when want does, with the same
// deadline in its payload (a payload naming another deadline would make
// the expiry skip the task). An empty payload (not reported) is not held
// against it.
func matches(have, want task.Schedule) bool {
	return have.At.Equal(want.At) && (have.Payload.IsZero() || have.Payload.Equal(want.Payload))
}

// loadPending reads the Pending tasks of the whole index (table reads, no
// scheduler call): the schedules phase needs no call for their schedules.
func (x *run) loadPending(ctx context.Context) error {
	x.pending, x.order, x.pendingSince = map[string]*pendingEntry{}, nil, x.d.Clock.Now()
	req := task.PendingRequest{Limit: task.MaxPageSize}
	for {
		page, err := x.d.Pending.ListPending(ctx, req)
		if err != nil {
			return fmt.Errorf("reconcile: list pending tasks: %w", err)
		}
		for _, t := range page.Tasks {
			x.collect(t, t.ScheduleConfirmed())
		}
		if page.Cursor == "" {
			x.havePending = true
			return nil
		}
		req.Cursor = page.Cursor
	}
}

// schedule deletes a schedule whose task is gone or not Pending. The
// schedule of a Pending task costs nothing: the tasks phase checked it.
func (x *run) schedule(ctx context.Context, s task.Schedule) {
	x.res.SchedulesChecked++
	if e, ok := x.pending[s.Name]; ok {
		e.listed = true
		return
	}
	log := x.d.Log.With("schedule", s.Name)
	taskID, ok := task.TaskIDFromScheduleName(s.Name)
	if !ok {
		log.WarnContext(ctx, "not a task schedule; left alone")
		return
	}
	if made, _ := task.IDTime(taskID); made.After(x.pendingSince) {
		// Made after the Pending tasks were read: most likely Pending,
		// and not worth a call in this pass (the next one sees it). A
		// clock skew between the API and the reconciler only moves a
		// schedule to the next pass, or costs it a read.
		return
	}
	userID := s.Payload.Key.Partition
	if userID == "" {
		// Listings omit the target input: read the schedule.
		full, err := x.get(ctx, s.Name)
		if errors.Is(err, task.ErrScheduleNotFound) {
			return
		}
		if err != nil {
			x.fail(ctx, log, "read schedule", err)
			return
		}
		s.At = full.At
		if userID = full.Payload.Key.Partition; userID == "" {
			x.fail(ctx, log, "find the schedule's owner", errors.New("payload has no user id"))
			return
		}
	}
	t, err := x.d.Tasks.Get(ctx, userID, taskID)
	switch {
	case errors.Is(err, task.ErrNotFound):
	case err != nil:
		x.fail(ctx, log, "read task", err)
		return
	case t.Status == task.StatusPending:
		return // created after the pending tasks were read
	}
	if err := x.delete(ctx, s.Name, s.At); err != nil && !errors.Is(err, task.ErrScheduleNotFound) {
		x.fail(ctx, log, "delete orphan schedule", err)
		return
	}
	x.res.SchedulesDeleted++
	log.InfoContext(ctx, "orphan schedule deleted", "taskId", taskID, "taskStatus", t.Status)
}

// restoreMissing creates the schedule of every confirmed Pending task that
// the whole listing did not show (deleted by hand, or lost), after
// re-reading the task. A schedule listed late (created during the
// listing) is found by its create: the same client token succeeds, and
// another gives task.ErrScheduleExists; both leave it as it is.
func (x *run) restoreMissing(ctx context.Context) {
	for _, e := range x.order {
		if e.listed || !e.confirmed {
			continue
		}
		if x.inBudget(ctx) != nil {
			x.missingLeft++
			continue
		}
		log := x.d.Log.With("userId", e.userID, "taskId", e.taskID)
		t, err := x.d.Tasks.Get(ctx, e.userID, e.taskID)
		switch {
		case errors.Is(err, task.ErrNotFound):
			continue
		case err != nil:
			x.fail(ctx, log, "re-read task", err)
			continue
		case t.Status != task.StatusPending || !t.ScheduleConfirmed() || !t.DueAt.After(x.d.Clock.Now()):
			continue // finished, changed, or firing: not this pass's
		}
		switch err := x.create(ctx, task.ScheduleFor(t)); {
		case errors.Is(err, task.ErrScheduleExists):
		case err != nil:
			x.fail(ctx, log, "restore missing schedule", err)
		default:
			x.res.SchedulesCreated++
			log.InfoContext(ctx, "confirmed schedule was missing: created", "at", task.FormatTime(t.DueAt))
		}
	}
}

func (x *run) fail(ctx context.Context, log *slog.Logger, what string, err error) {
	x.res.Errors++
	log.WarnContext(ctx, what+" failed; the next pass retries", "error", err)
}

// Rate-limited scheduler calls.

func (x *run) wait(ctx context.Context) error {
	if err := x.limiter.Wait(ctx); err != nil {
		return err
	}
	x.res.SchedulerCalls++
	return nil
}

func (x *run) get(ctx context.Context, name string) (task.Schedule, error) {
	if err := x.wait(ctx); err != nil {
		return task.Schedule{}, err
	}
	return x.d.Schedules.Get(ctx, name, time.Time{})
}

func (x *run) create(ctx context.Context, s task.Schedule) error {
	if err := x.wait(ctx); err != nil {
		return err
	}
	return x.d.Scheduler.Create(ctx, s)
}

func (x *run) update(ctx context.Context, s task.Schedule, from time.Time) error {
	if err := x.wait(ctx); err != nil {
		return err
	}
	return x.d.Scheduler.Update(ctx, s, from)
}

func (x *run) delete(ctx context.Context, name string, at time.Time) error {
	if err := x.wait(ctx); err != nil {
		return err
	}
	return x.d.Scheduler.Delete(ctx, name, at)
}

// report logs the result and records it as metrics.
func (r *Reconciler) report(ctx context.Context, res Result, err error) {
	m := r.d.Metrics
	completed := 0
	if res.Completed {
		completed = 1
	}
	for _, c := range []struct {
		name string
		n    int
	}{
		{MetricSchedulesCreated, res.SchedulesCreated}, {MetricSchedulesMoved, res.SchedulesMoved},
		{MetricSchedulesDeleted, res.SchedulesDeleted}, {MetricTasksExpired, res.TasksExpired},
		{MetricRepairFlagsCleared, res.RepairFlagsCleared}, {MetricSchedulesConfirmed, res.SchedulesConfirmed},
		{MetricErrors, res.Errors}, {MetricTasksChecked, res.TasksChecked},
		{MetricSchedulesChecked, res.SchedulesChecked}, {MetricSchedulerCalls, res.SchedulerCalls},
		{MetricRepaired, res.Repaired()}, {MetricLeftOver, res.LeftOver},
		{MetricPassesCompleted, completed},
	} {
		m.Add(c.name, float64(c.n))
	}
	attrs := []any{"schedulesCreated", res.SchedulesCreated, "schedulesMoved", res.SchedulesMoved,
		"schedulesDeleted", res.SchedulesDeleted, "tasksExpired", res.TasksExpired,
		"repairFlagsCleared", res.RepairFlagsCleared, "schedulesConfirmed", res.SchedulesConfirmed,
		"tasksChecked", res.TasksChecked, "schedulesChecked", res.SchedulesChecked,
		"schedulerCalls", res.SchedulerCalls, "leftOver", res.LeftOver, "errors", res.Errors,
		"completed", res.Completed, "phase", res.Checkpoint.Phase, "offset", res.Checkpoint.Offset}
	if err != nil {
		r.d.Log.ErrorContext(ctx, "reconcile run failed", append(attrs, "error", err)...)
		return
	}
	if res.LeftOver > 0 {
		r.d.Log.WarnContext(ctx, "reconcile run left work over: a pass does not fit one run", attrs...)
		return
	}
	r.d.Log.InfoContext(ctx, "reconcile run done", attrs...)
}
