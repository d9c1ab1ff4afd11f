// Package reconcile is the core's reconciler: it repairs the drift
// between an item table and its timer, in both directions, as a recurring
// bounded job, for any item schema (contract.Schema, read through Items)
// and every timer (timer.Timer and timer.Reader):
//
//   - an armed item with no schedule, or one at the wrong time, gets a
//     correct one;
//   - a schedule whose item is gone, no longer armed, or armed for another
//     due time (a stale Step Functions execution) is removed;
//   - an armed item due more than the grace period ago, and a fired item
//     whose delivery is not recorded, are fired through the firing core
//     and the adopter's target (Firer), which claims them once.
//
// An adopter's rules (Policy) may decide first what becomes of an overdue
// item, a stale firing or an armed one; the reconciler does the rest.
//
// Each run sweeps the overdue items, walks the items, then what the timer
// lists, paced by a rate limit, and stops at its budget with a checkpoint
// the next run resumes from. Every repair re-reads or is conditional, so
// a stale listing or a redone page is harmless. See docs/reconciler.md.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timer"
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

// Item is an item as the reconciler reads it: the contract's view of it
// (key, state, due time, reminder, delivery), and what a store may record
// besides.
type Item struct {
	contract.Item
	// FiredAt is when the claim fired the item (zero when the store does
	// not say; ClaimAt stands in for it).
	FiredAt time.Time
	// Updated is the item's last change (zero when the store does not
	// record one: the item is then never recorded as confirmed).
	Updated time.Time
	// ScheduledFor is the due time whose schedule was confirmed (zero:
	// none), and Repair says the writer failed to create the schedule.
	// Only a store with Marks keeps them.
	ScheduledFor time.Time
	Repair       bool
}

// Confirmed reports whether the item's schedule is vouched for: recorded
// as confirmed for its current due time, and no failure recorded since.
func (it Item) Confirmed() bool {
	return !it.Repair && !it.ScheduledFor.IsZero() && it.ScheduledFor.Equal(it.Due)
}

// firedAt is when the item was fired, as well as the store knows.
func (it Item) firedAt() time.Time {
	if !it.FiredAt.IsZero() {
		return it.FiredAt
	}
	return it.ClaimAt
}

// ErrItemNotFound: no item with that key.
var ErrItemNotFound = errors.New("item not found")

// ListRequest asks for one page of the items the reconciler owes work.
type ListRequest struct {
	Cursor string
	Limit  int
	// DueBy, when set, keeps only the items due at or before it (the
	// overdue ones). A store may list more (it may compare due times as
	// stored); the reconciler checks each item's due time itself.
	DueBy time.Time
}

// ItemPage is one page of items. Cursor is "" on the last page.
type ItemPage struct {
	Items  []Item
	Cursor string
}

// Items is the reconciler's view of the item table, for any schema.
type Items interface {
	// List pages through the armed items, and the fired ones whose
	// delivery is not recorded. Cursor is opaque.
	List(ctx context.Context, req ListRequest) (ItemPage, error)
	// Get reads one item with a consistent read; ErrItemNotFound if none.
	Get(ctx context.Context, k contract.Key) (Item, error)
}

// Marks is an Items that records what the reconciler confirmed, so later
// passes trust it without a timer call (the to-do table does). Optional:
// without it every armed item's schedule is read on every pass.
type Marks interface {
	// MarkScheduled records that the item's schedule is confirmed for due,
	// and clears its repair mark, only if the item is armed with that due
	// time; fire.ErrConditionFailed otherwise (missing item included).
	MarkScheduled(ctx context.Context, k contract.Key, due time.Time) error
	// SetScheduleRepair sets or clears the item's repair mark.
	SetScheduleRepair(ctx context.Context, k contract.Key, repair bool) error
}

// Counter counts what Items.List would list from req.Cursor on, without
// reading the items. Optional: without it Result.LeftOver is a lower
// bound (1 when a run stops early).
type Counter interface {
	Count(ctx context.Context, req ListRequest) (int, error)
}

// Firer fires an item the way the timer's firing does: the firing core's
// claim on the item table, then the adopter's target (fire.Core with its
// Deliverer; *task.Firer for the to-do app). An error wrapping
// fire.ErrInProgress means another attempt holds the claim.
type Firer interface {
	Fire(ctx context.Context, p contract.Payload) (fire.Outcome, error)
}

// Why is what the reconciler found an item to be when it asks a Policy.
type Why int

// The cases a Policy is asked about.
const (
	// Overdue: armed and due at least the grace period ago (its fire was
	// lost, or came when the target could not take it).
	Overdue Why = iota + 1
	// Stale: fired at least the grace period ago, its delivery not
	// recorded (the attempt died, or is stuck).
	Stale
	// Ahead: armed and due later: its schedule is about to be checked.
	Ahead
)

// Action is what a Policy did, or leaves to the reconciler.
type Action int

// The actions. The policy makes its own item writes (conditional, like
// every repair); the reconciler then does the timer's part.
const (
	// Proceed: the reconciler's own repair (Overdue and Stale: fire it
	// through the Firer; Ahead: check its schedule).
	Proceed Action = iota
	// Leave: nothing this pass.
	Leave
	// Moved: the policy moved the item's due time; the reconciler moves
	// its schedule there (Move from the old due time, Arm if none).
	Moved
	// Rearmed: the policy put the item back in an armed state; the
	// reconciler re-reads it and handles it as listed, once.
	Rearmed
	// Ended: the policy ended the item (delivered, given up); no timer
	// work.
	Ended
	// Withdrawn: the policy ended the item and its schedule must go; the
	// reconciler deletes it.
	Withdrawn
)

// Decision is a Policy's answer: what it did, and a short outcome label
// ("retimed", "failed") for the log.
type Decision struct {
	Action  Action
	Outcome string
}

// Policy is an adopter's rules for the items the reconciler would repair:
// fire an overdue item now or move it, settle a stale firing from what
// the target recorded or arm it again, give up after some attempts,
// withdraw an item its owner cancelled. Optional (Deps.Policy): without
// one every overdue or stale item is fired and every armed one's
// schedule checked.
type Policy interface {
	Decide(ctx context.Context, it Item, why Why) (Decision, error)
}

// RunPolicy is a Policy told when a run starts (it may cache reads for
// the length of one run).
type RunPolicy interface {
	Policy
	StartRun(ctx context.Context)
}

// Namer is a timer.Timer that names an item's schedule its own way
// (campaign schedules are camp-<task id>), not Schema.ScheduleName.
// Optional: the reconciler asks Deps.Scheduler for it.
type Namer interface {
	ScheduleName(k contract.Key) string
}

// Config bounds a run.
type Config struct {
	// Grace is how long past its due time an armed item may stay before
	// the reconciler fires it, and how long after its firing a fired item
	// may stay without a recorded delivery before the reconciler delivers
	// it. Keep it longer than the firing's claim lease (FIRE_LEASE_SECONDS). Default: 5
	// minutes.
	Grace time.Duration
	// StaleAfter is how long after its due time and its firing a fired
	// item whose delivery is not recorded is taken for stale (fired
	// again, or handed to the Policy as Stale). A Policy that checks its
	// own lease may set it shorter. Default: Grace.
	StaleAfter time.Duration
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
	if c.StaleAfter <= 0 {
		c.StaleAfter = c.Grace
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
	// Schema names the items' attributes and their schedules'.
	Schema contract.Schema
	// Items is the item table (a Marks and a Counter too, optionally).
	Items Items
	// Scheduler and Schedules are the timer: what arms, moves and disarms
	// an item's schedule (execution, marker), and what reads them.
	Scheduler timer.Timer
	Schedules timer.Reader
	// Firer fires an overdue item.
	Firer Firer
	// Policy, optional, decides on overdue, stale and armed items first.
	Policy      Policy
	Checkpoints Checkpoints
	// Clock defaults to the wall clock.
	Clock clock.Reader
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
	marks   Marks
	limiter *Limiter
}

// New checks the dependencies and returns a Reconciler.
func New(cfg Config, d Deps) (*Reconciler, error) {
	for name, ok := range map[string]bool{
		"Items": d.Items != nil, "Scheduler": d.Scheduler != nil,
		"Schedules": d.Schedules != nil, "Firer": d.Firer != nil, "Checkpoints": d.Checkpoints != nil,
	} {
		if !ok {
			return nil, fmt.Errorf("reconcile: Deps.%s is required", name)
		}
	}
	if err := d.Schema.Validate(); err != nil {
		return nil, fmt.Errorf("reconcile: Deps.Schema: %w", err)
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
	marks, _ := d.Items.(Marks)
	return &Reconciler{cfg: cfg, d: d, marks: marks, limiter: NewLimiter(cfg.RatePerSec, d.Clock, d.Sleep)}, nil
}

// Result is what one run did.
type Result struct {
	SchedulesCreated   int
	SchedulesMoved     int
	SchedulesDeleted   int
	ItemsFired         int
	RepairFlagsCleared int
	// SchedulesConfirmed counts the tasks whose schedule the run checked
	// and recorded as confirmed (Task.ScheduledFor): later passes trust
	// them.
	SchedulesConfirmed int
	// ItemsChecked counts the tasks the run looked at (overdue sweep and
	// tasks phase); SchedulesChecked the schedules it listed.
	ItemsChecked     int
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
	// ItemsMoved, ItemsRearmed and ItemsEnded count the Policy's Moved,
	// Rearmed, and Ended or Withdrawn decisions.
	ItemsMoved, ItemsRearmed, ItemsEnded int
	// Completed: the run finished a full pass (the checkpoint is reset).
	// False: it stopped at its budget and Checkpoint is where the next run
	// resumes.
	Completed  bool
	Checkpoint Checkpoint
}

// Repaired is the number of repairs the run made: schedules created,
// moved and deleted, and items fired.
func (r Result) Repaired() int {
	return r.SchedulesCreated + r.SchedulesMoved + r.SchedulesDeleted + r.ItemsFired
}

// Metric names, one per Result count, written once per run.
const (
	MetricSchedulesCreated   = metrics.SchedulesCreated
	MetricSchedulesMoved     = metrics.SchedulesMoved
	MetricSchedulesDeleted   = metrics.SchedulesDeleted
	MetricItemsFired         = metrics.ItemsFired
	MetricRepairFlagsCleared = metrics.RepairFlagsCleared
	MetricSchedulesConfirmed = metrics.SchedulesConfirmed
	MetricErrors             = metrics.ReconcilerErrors
	// MetricItemsChecked, MetricSchedulesChecked, MetricRepaired and
	// MetricLeftOver are a run's cost, work and backlog: LeftOver above
	// zero means a pass did not fit one run.
	MetricItemsChecked     = metrics.ItemsChecked
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
	// cut is the overdue sweep's bound: items due at or before it are the
	// sweep's, in this run or the next.
	cut time.Time
	// sweepLeft is the request of the page where the overdue sweep
	// stopped, when it did not finish (its handled items have left the
	// listing, unless they failed and are still due).
	sweepLeft *ListRequest
	// pending holds the armed items by schedule name, for the schedules
	// phase: collected by an items phase that runs whole in this run, else
	// read from the table when the run enters the schedules phase. order
	// keeps them in listing order; havePending says they are all there.
	pending     map[string]*pendingEntry
	order       []*pendingEntry
	havePending bool
	// listedWhole: the schedules listing started at its first page in
	// this run, so an unlisted confirmed schedule is really missing.
	listedWhole bool
	// missingLeft counts the missing schedules the run had no budget for.
	missingLeft int
	// swept holds the items the overdue sweep handled: the items phase
	// leaves them alone (a target fired asynchronously, or a policy's
	// Leave, may still list them armed and overdue).
	swept map[contract.Key]bool
}

type pendingEntry struct {
	key       contract.Key
	due       time.Time
	confirmed bool
	listed    bool
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
	if p, ok := r.d.Policy.(RunPolicy); ok {
		p.StartRun(ctx)
	}
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

// armed reports whether the item must have a schedule.
func (x *run) armed(it Item) bool { return x.d.Schema.Armed(it.Item) }

// undelivered reports whether the item was fired and its delivery is
// not recorded.
func (x *run) undelivered(it Item) bool { return it.State == x.d.Schema.FiredState && !it.Delivered }

// sweepOverdue fires the items due at or before the cut, from the first
// page. It returns errBudget when the budget is spent.
func (x *run) sweepOverdue(ctx context.Context) error {
	req := ListRequest{Limit: x.cfg.PageSize, DueBy: x.cut}
	for {
		if err := x.inBudget(ctx); err != nil {
			x.sweepLeft = &req
			return err
		}
		page, err := x.d.Items.List(ctx, req)
		if err != nil {
			return fmt.Errorf("reconcile: list overdue items: %w", err)
		}
		for _, it := range page.Items {
			if err := x.inBudget(ctx); err != nil {
				x.sweepLeft = &req
				return err
			}
			x.overdue(ctx, it)
		}
		if page.Cursor == "" {
			return nil
		}
		req.Cursor = page.Cursor
	}
}

// count is how many items are listed from req on, less the skip already
// handled; 0 when the store cannot count (Run reports at least 1).
func (x *run) count(ctx context.Context, req ListRequest, skip int) int {
	c, ok := x.d.Items.(Counter)
	if !ok {
		return 0
	}
	n, err := c.Count(ctx, req)
	if err != nil {
		x.d.Log.WarnContext(ctx, "counting the work left failed", "error", err)
		return 0
	}
	return max(0, n-skip)
}

// leftOver is the work the run had not reached: the larger of what the
// overdue sweep left and what the pass left from cp on (the pass's count
// includes the overdue items it has not read).
func (x *run) leftOver(ctx context.Context, cp Checkpoint) int {
	n := x.missingLeft
	switch {
	case cp.Phase == PhaseTasks:
		n += x.count(ctx, ListRequest{Cursor: cp.Cursor, Limit: x.cfg.PageSize}, cp.Offset)
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
				x.pending = map[string]*pendingEntry{}
			}
			page, err := x.d.Items.List(ctx, ListRequest{Cursor: cp.Cursor, Limit: x.cfg.PageSize})
			if err != nil {
				return fmt.Errorf("reconcile: list armed items: %w", err)
			}
			n, next = len(page.Items), page.Cursor
			item = func(i int) {
				it := page.Items[i]
				if confirmed, armed := x.item(ctx, it); armed {
					x.collect(it, confirmed)
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
			page, err := x.d.Schedules.List(ctx, timer.PageRequest{Cursor: cp.Cursor, Limit: x.cfg.PageSize})
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

func (x *run) logger(it Item) *slog.Logger {
	return x.d.Log.With(logfield.Key, it.Key.String(), "dueAt", contract.FormatTime(it.Due))
}

// overdue handles an item of the overdue sweep: armed and due at least
// the grace period ago, or fired and its delivery not recorded (the
// listing may be stale; every write re-reads or is conditional).
func (x *run) overdue(ctx context.Context, it Item) {
	x.res.ItemsChecked++
	switch {
	case x.undelivered(it):
		// Within the grace period a firing attempt may still be at work
		// (or retried by the timer); after it, nothing else will retry.
		// Not before its due time (a listing by the due time as stored
		// may list a negative offset early): the core refuses that.
		if x.stale(it) {
			x.sweep(it)
			if x.ask(ctx, x.logger(it), it, Stale, false) {
				x.fire(ctx, x.logger(it), it, "undelivered fired item")
			}
		}
	case x.armed(it):
		// A store may compare due times as stored strings, so a writer's
		// spelling with a negative offset ("…T19:23:49-05:00") is listed
		// before its instant; the firing core would refuse it as early.
		// It is not overdue yet: leave it to its schedule.
		if it.Due.After(x.cut) {
			return
		}
		// The claim's conditional write (still armed, same due time)
		// decides, so a stale listing cannot fire a moved due time.
		x.sweep(it)
		if x.ask(ctx, x.logger(it), it, Overdue, false) {
			x.fire(ctx, x.logger(it), it, "overdue item")
		}
	}
}

// scheduleName is the name of the item's schedule: the Scheduler's when
// it is a Namer, else the schema's.
func (x *run) scheduleName(k contract.Key) string {
	if n, ok := x.d.Scheduler.(Namer); ok {
		return n.ScheduleName(k)
	}
	return x.d.Schema.ScheduleName(k)
}

// scheduleFor is the schedule an armed item must have.
func (x *run) scheduleFor(it contract.Item) timer.Schedule {
	s := x.d.Schema.ScheduleFor(it)
	s.Name = x.scheduleName(it.Key)
	return s
}

// stale reports whether a fired, undelivered item is StaleAfter past its
// due time and its firing: no attempt is at work on it any more.
func (x *run) stale(it Item) bool {
	now := x.d.Clock.Now()
	return !it.Due.After(now.Add(-x.cfg.StaleAfter)) && now.Sub(it.firedAt()) > x.cfg.StaleAfter
}

// sweep records that the overdue sweep handled it.
func (x *run) sweep(it Item) {
	if x.swept == nil {
		x.swept = map[contract.Key]bool{}
	}
	x.swept[it.Key] = true
}

// collect adds a listed armed item to the items the schedules phase
// knows, when this run collects them.
func (x *run) collect(it Item, confirmed bool) {
	if x.pending == nil || !x.armed(it) {
		return
	}
	e := &pendingEntry{key: it.Key, due: it.Due, confirmed: confirmed}
	x.pending[x.scheduleName(it.Key)] = e
	x.order = append(x.order, e)
}

// item checks one item of the items phase, and reports whether its
// schedule is confirmed, and whether the item is still armed as listed
// (the schedules phase keeps the schedule of an item it collected).
// Items due by the cut are the overdue sweep's; fired ones are too. An
// armed one listed here past the cut is one the sweep did not reach: a
// store that compares the due attribute as stored sorts a writer's
// spelling with a positive offset ("T09:00:00+01:00" for 08:00Z) or a
// lower-case "t" after the sweep's bound. It is fired here, so a lost
// schedule costs such an item at most one pass; then its schedule, if
// any, is an orphan that the schedules phase deletes.
func (x *run) item(ctx context.Context, it Item) (confirmed, armed bool) {
	x.res.ItemsChecked++
	now := x.d.Clock.Now()
	if x.swept[it.Key] {
		return false, x.armed(it) // handled by this run's sweep
	}
	if x.undelivered(it) {
		// The sweep's listing may not reach it either (a store that
		// compares due times as stored strings sorts a positive offset
		// after the sweep's bound): its delivery is retried here.
		// Not before its due time: a writer may have moved it to the
		// fired state early, and the firing core refuses an early firing.
		if x.stale(it) && x.ask(ctx, x.logger(it), it, Stale, false) {
			x.fire(ctx, x.logger(it), it, "undelivered fired item the sweep did not list")
		}
		return false, false
	}
	armed = x.armed(it)
	if armed && !it.Due.After(x.cut) {
		if !x.ask(ctx, x.logger(it), it, Overdue, false) {
			return false, false
		}
		return false, !x.fire(ctx, x.logger(it), it, "overdue item the sweep did not list")
	}
	if !armed || !it.Due.After(now) {
		// Overdue, or due within the grace period: its schedule is firing
		// now, and the next run's sweep fires it if that fails.
		return false, armed
	}
	log := x.logger(it)
	if x.d.Policy != nil {
		d, ok := x.decide(ctx, log, it, Ahead)
		if !ok || d.Action != Proceed {
			// Left, or handled by the policy (a moved or rearmed item's
			// schedule made sure of): keep its schedule unless withdrawn.
			return false, ok && d.Action != Withdrawn && d.Action != Ended
		}
	}
	if it.Confirmed() {
		return true, true // no timer call: the schedules phase sees it deleted
	}
	fresh, ok, err := x.ensureSchedule(ctx, log, it)
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
	if x.marks == nil {
		return false, true // nothing records a confirmation: checked every pass
	}
	if !fresh.Updated.IsZero() && now.Sub(fresh.Updated) >= x.cfg.Settle {
		switch err := x.marks.MarkScheduled(ctx, fresh.Key, fresh.Due); {
		case errors.Is(err, fire.ErrConditionFailed):
			// Changed meanwhile: the next pass checks it again.
		case err != nil:
			x.fail(ctx, log, "record the schedule", err)
		default:
			x.res.SchedulesConfirmed++
			if fresh.Repair {
				x.res.RepairFlagsCleared++
			}
			return true, true
		}
		return false, true
	}
	// Changed recently: a reschedule may still be on its way, so the
	// schedule stays unconfirmed and is checked again next pass.
	if fresh.Repair {
		if err := x.marks.SetScheduleRepair(ctx, fresh.Key, false); err != nil {
			x.fail(ctx, log, "clear repair mark", err)
			return false, true
		}
		x.res.RepairFlagsCleared++
		log.InfoContext(ctx, "repair mark cleared")
	}
	return false, true
}

// fire fires a listed item through the firer, and reports whether it
// fired it (or delivered an undelivered firing). A delivery that another
// attempt is making right now (fire.ErrInProgress) is not a failure:
// that attempt records it, or the next pass takes over.
func (x *run) fire(ctx context.Context, log *slog.Logger, it Item, what string) (fired bool) {
	out, err := x.d.Firer.Fire(ctx, contract.Payload{Key: it.Key, Due: it.Due})
	if errors.Is(err, fire.ErrInProgress) {
		log.InfoContext(ctx, what+": its delivery is in progress elsewhere; the next pass checks again")
		return false
	}
	if err != nil {
		x.fail(ctx, log, "fire "+what, err)
		return false
	}
	if out == fire.Fired || out == fire.Redelivered {
		x.res.ItemsFired++
		log.InfoContext(ctx, what+" fired", "outcome", out)
		return true
	}
	return false
}

// ask asks the Policy about it and does the timer's part of its
// decision; it reports whether the reconciler's own repair is to follow
// (always, without a policy). again is set for an item the policy has
// just rearmed, so a policy cannot make a run loop on one item.
func (x *run) ask(ctx context.Context, log *slog.Logger, it Item, why Why, again bool) (proceed bool) {
	if x.d.Policy == nil {
		return true
	}
	d, ok := x.decide(ctx, log, it, why)
	if !ok {
		return false
	}
	if d.Action == Rearmed && !again {
		x.rearmed(ctx, log, it)
	}
	return d.Action == Proceed
}

// decide asks the Policy, counts its outcome, and does the timer's part
// of Moved and Withdrawn; ok is false when it failed (counted).
func (x *run) decide(ctx context.Context, log *slog.Logger, it Item, why Why) (d Decision, ok bool) {
	d, err := x.d.Policy.Decide(ctx, it, why)
	if err != nil {
		x.fail(ctx, log, "apply the policy", err)
		return d, false
	}
	if d.Outcome != "" {
		log.InfoContext(ctx, "policy decided", "outcome", d.Outcome)
	}
	switch d.Action {
	case Rearmed:
		x.res.ItemsRearmed++
	case Ended:
		x.res.ItemsEnded++
	case Moved:
		x.res.ItemsMoved++
		x.moveSchedule(ctx, log, it)
	case Withdrawn:
		x.res.ItemsEnded++
		name := x.scheduleName(it.Key)
		switch err := x.delete(ctx, name, it.Due); {
		case errors.Is(err, timer.ErrNotFound):
		case err != nil:
			x.fail(ctx, log, "delete withdrawn item's schedule", err)
		default:
			x.res.SchedulesDeleted++
		}
	}
	return d, true
}

// moveSchedule moves the schedule of an item the policy moved from
// it.Due to its new due time (re-read).
func (x *run) moveSchedule(ctx context.Context, log *slog.Logger, it Item) {
	fresh, err := x.d.Items.Get(ctx, it.Key)
	switch {
	case errors.Is(err, ErrItemNotFound):
		return
	case err != nil:
		x.fail(ctx, log, "re-read moved item", err)
		return
	case !x.armed(fresh) || !fresh.Due.After(x.d.Clock.Now()):
		return
	}
	want := x.scheduleFor(fresh.Item)
	err = x.update(ctx, want, it.Due)
	if errors.Is(err, timer.ErrNotFound) {
		if err = x.create(ctx, want); errors.Is(err, timer.ErrExists) {
			err = nil
		}
	}
	if err != nil {
		// The item is due soon: the next pass finds it overdue.
		x.fail(ctx, log, "move the moved item's schedule", err)
		return
	}
	x.res.SchedulesMoved++
	log.InfoContext(ctx, "moved item's schedule moved", "to", contract.FormatTime(want.At))
}

// rearmed handles an item the policy put back in an armed state, as it
// is now: overdue, it is asked about (and fired) again; due later, its
// schedule is made sure of.
func (x *run) rearmed(ctx context.Context, log *slog.Logger, it Item) {
	fresh, err := x.d.Items.Get(ctx, it.Key)
	switch {
	case errors.Is(err, ErrItemNotFound):
		return
	case err != nil:
		x.fail(ctx, log, "re-read rearmed item", err)
		return
	case !x.armed(fresh):
		return
	}
	now := x.d.Clock.Now()
	switch {
	case !fresh.Due.After(x.cut):
		if x.ask(ctx, log, fresh, Overdue, true) {
			x.fire(ctx, log, fresh, "rearmed overdue item")
		}
	case fresh.Due.After(now):
		if !x.ask(ctx, log, fresh, Ahead, true) {
			return
		}
		if _, _, err := x.ensureSchedule(ctx, log, fresh); err != nil {
			x.fail(ctx, log, "repair rearmed item's schedule", err)
		}
	}
}

// ensureSchedule gives an armed item the schedule the schema says it
// must have, and returns the item as it was when it checked. An item
// marked for repair is known to lack one: it is created without reading
// first. ok is false when the item turned out not to need one (it is
// gone or no longer armed: the cancellation pipeline handles it).
func (x *run) ensureSchedule(ctx context.Context, log *slog.Logger, it Item) (fresh Item, ok bool, err error) {
	want := x.scheduleFor(it.Item)
	var have timer.Schedule
	missing := it.Repair
	if !missing {
		have, err = x.get(ctx, want.Name, want.At)
		missing = errors.Is(err, timer.ErrNotFound)
		if err != nil && !missing {
			return it, false, err
		}
		if !missing && matches(have, want) {
			return it, true, nil
		}
	}
	// Drift. Re-read the item before writing: the listing may predate a
	// due time change that the worker has already applied.
	fresh, err = x.d.Items.Get(ctx, it.Key)
	if errors.Is(err, ErrItemNotFound) {
		return it, false, nil
	}
	if err != nil {
		return it, false, fmt.Errorf("re-read item: %w", err)
	}
	if !x.armed(fresh) || !fresh.Due.After(x.d.Clock.Now()) {
		return fresh, false, nil
	}
	want = x.scheduleFor(fresh.Item)
	if !missing && matches(have, want) {
		return fresh, true, nil
	}
	if missing {
		err = x.create(ctx, want)
		if err == nil {
			x.res.SchedulesCreated++
			log.InfoContext(ctx, "missing schedule created", "at", contract.FormatTime(want.At))
			return fresh, true, nil
		}
		if !errors.Is(err, timer.ErrExists) {
			return fresh, false, fmt.Errorf("create schedule: %w", err)
		}
		// One exists, maybe for another due time: move it.
	}
	err = x.update(ctx, want, have.At)
	if errors.Is(err, timer.ErrNotFound) {
		// Fired or deleted meanwhile.
		if err = x.create(ctx, want); errors.Is(err, timer.ErrExists) {
			err = nil
		}
	}
	if err != nil {
		return fresh, false, fmt.Errorf("move schedule: %w", err)
	}
	x.res.SchedulesMoved++
	log.InfoContext(ctx, "schedule moved to the item's due time", "from", contract.FormatTime(have.At),
		"to", contract.FormatTime(want.At))
	return fresh, true, nil
}

// ensureReminder gives an armed item, checked by ensureSchedule, the
// reminder schedule the schema says it must have when its time is still
// ahead. A reminder schedule the item no longer wants (no reminder, or
// its time passed) is left alone: it fires, its claim fails, and it
// deletes itself; the cancellation worker deletes it on every change.
// Reminder schedules are named with their own prefix, which the
// schedules phase does not take for the due-time schedules', so they are
// never taken for orphans.
func (x *run) ensureReminder(ctx context.Context, log *slog.Logger, it Item) error {
	want, ok := x.d.Schema.ReminderFor(it.Item)
	if !ok || !want.At.After(x.d.Clock.Now()) {
		return nil
	}
	have, err := x.get(ctx, want.Name, want.At)
	switch {
	case err == nil && matches(have, want):
		return nil
	case err == nil:
		err = x.update(ctx, want, have.At)
		if errors.Is(err, timer.ErrNotFound) {
			err = x.create(ctx, want) // fired or deleted meanwhile
		}
	case errors.Is(err, timer.ErrNotFound):
		err = x.create(ctx, want)
		if errors.Is(err, timer.ErrExists) {
			err = x.update(ctx, want, time.Time{}) // made meanwhile, for a time not known
		}
	}
	if err != nil {
		return err
	}
	x.res.SchedulesCreated++
	log.InfoContext(ctx, "reminder schedule repaired", "at", contract.FormatTime(want.At))
	return nil
}

// matches reports whether have fires when want does, with the same due
// time in its payload (a payload naming another due time would make the
// claim skip the item). An empty payload (not reported) is not held
// against it.
func matches(have, want timer.Schedule) bool {
	return have.At.Equal(want.At) && (have.Payload.IsZero() || have.Payload.Equal(want.Payload))
}

// loadPending reads the armed items of the whole table (table reads, no
// timer call): the schedules phase needs no call for their schedules.
func (x *run) loadPending(ctx context.Context) error {
	x.pending, x.order = map[string]*pendingEntry{}, nil
	req := ListRequest{Limit: x.cfg.PageSize}
	for {
		page, err := x.d.Items.List(ctx, req)
		if err != nil {
			return fmt.Errorf("reconcile: list armed items: %w", err)
		}
		for _, it := range page.Items {
			x.collect(it, it.Confirmed())
		}
		if page.Cursor == "" {
			x.havePending = true
			return nil
		}
		req.Cursor = page.Cursor
	}
}

// schedule checks one listed schedule. The schedule of an armed item
// costs nothing when the listing cannot tell its due time (the tasks
// phase checked it); one listed with another due time than the item's
// (a timer that holds one per due time: a stale execution) is removed,
// and the item's own made sure of. A schedule whose item is gone or not
// armed is deleted.
func (x *run) schedule(ctx context.Context, s timer.Schedule) {
	x.res.SchedulesChecked++
	if e, ok := x.pending[s.Name]; ok {
		e.listed = true
		if s.At.IsZero() || s.At.Equal(e.due) {
			return
		}
		x.misplaced(ctx, e, s)
		return
	}
	log := x.d.Log.With("schedule", s.Name)
	if !strings.HasPrefix(s.Name, x.d.Schema.ScheduleNamePrefix) ||
		(x.d.Schema.Reminds() && strings.HasPrefix(s.Name, x.d.Schema.ReminderNamePrefix)) {
		log.WarnContext(ctx, "not an item's due-time schedule; left alone")
		return
	}
	if s.Payload.IsZero() {
		// Listings may omit the target input: read the schedule.
		full, err := x.get(ctx, s.Name, s.At)
		if errors.Is(err, timer.ErrNotFound) {
			return
		}
		if err != nil {
			x.fail(ctx, log, "read schedule", err)
			return
		}
		s.At, s.Payload = full.At, full.Payload
		if s.Payload.Key == (contract.Key{}) {
			x.fail(ctx, log, "find the schedule's item", errors.New("payload has no key"))
			return
		}
	}
	log = log.With(logfield.Key, s.Payload.Key.String())
	it, err := x.d.Items.Get(ctx, s.Payload.Key)
	switch {
	case errors.Is(err, ErrItemNotFound):
	case err != nil:
		x.fail(ctx, log, "read item", err)
		return
	case x.armed(it) && (it.Due.Equal(s.At) || s.At.IsZero()):
		return // armed after the armed items were read
	case x.armed(it):
		// Armed after the read, for another due time: this one is stale.
		x.misplaced(ctx, &pendingEntry{key: it.Key, due: it.Due}, s)
		return
	}
	if err := x.delete(ctx, s.Name, s.At); err != nil && !errors.Is(err, timer.ErrNotFound) {
		x.fail(ctx, log, "delete orphan schedule", err)
		return
	}
	x.res.SchedulesDeleted++
	log.InfoContext(ctx, "orphan schedule deleted", "state", it.State)
}

// misplaced handles a listed schedule at another due time than its
// item's, as read: after a fresh read, a schedule still at the wrong
// time is deleted, and the item's own is created when it is still ahead
// (on a timer that holds one per name, the delete removed it).
func (x *run) misplaced(ctx context.Context, e *pendingEntry, s timer.Schedule) {
	log := x.d.Log.With("schedule", s.Name, logfield.Key, e.key.String(), "at", contract.FormatTime(s.At))
	it, err := x.d.Items.Get(ctx, e.key)
	switch {
	case errors.Is(err, ErrItemNotFound):
	case err != nil:
		x.fail(ctx, log, "re-read item", err)
		return
	case x.armed(it) && it.Due.Equal(s.At):
		return // moved meanwhile: this one is right
	}
	switch err := x.delete(ctx, s.Name, s.At); {
	case errors.Is(err, timer.ErrNotFound):
		// Gone meanwhile, or a Step Functions restart chain longer than
		// the adapter follows: it fires, and the claim skips it.
	case err != nil:
		x.fail(ctx, log, "delete misplaced schedule", err)
		return
	default:
		x.res.SchedulesDeleted++
		log.InfoContext(ctx, "misplaced schedule deleted")
	}
	if err != nil || !x.armed(it) || !it.Due.After(x.d.Clock.Now()) {
		return
	}
	// The item's own: on a timer that holds one per name the delete
	// removed it; on one that holds one per due time it may run already.
	want := x.scheduleFor(it.Item)
	switch have, err := x.get(ctx, want.Name, want.At); {
	case err == nil && matches(have, want):
		return
	case err != nil && !errors.Is(err, timer.ErrNotFound):
		x.fail(ctx, log, "read the item's schedule", err)
		return
	}
	switch err := x.create(ctx, want); {
	case err == nil:
		x.res.SchedulesCreated++
	case errors.Is(err, timer.ErrExists):
	default:
		x.fail(ctx, log, "create the item's schedule", err)
	}
}

// restoreMissing creates the schedule of every confirmed armed item that
// the whole listing did not show (deleted by hand, or lost), after
// re-reading the item. A schedule listed late (created during the
// listing) is found by its create: the same client token succeeds, and
// another gives timer.ErrExists; both leave it as it is.
func (x *run) restoreMissing(ctx context.Context) {
	for _, e := range x.order {
		if e.listed || !e.confirmed {
			continue
		}
		if x.inBudget(ctx) != nil {
			x.missingLeft++
			continue
		}
		log := x.d.Log.With(logfield.Key, e.key.String())
		it, err := x.d.Items.Get(ctx, e.key)
		switch {
		case errors.Is(err, ErrItemNotFound):
			continue
		case err != nil:
			x.fail(ctx, log, "re-read item", err)
			continue
		case !x.armed(it) || !it.Confirmed() || !it.Due.After(x.d.Clock.Now()):
			continue // finished, changed, or firing: not this pass's
		}
		switch err := x.create(ctx, x.scheduleFor(it.Item)); {
		case errors.Is(err, timer.ErrExists):
		case err != nil:
			x.fail(ctx, log, "restore missing schedule", err)
		default:
			x.res.SchedulesCreated++
			log.InfoContext(ctx, "confirmed schedule was missing: created", "at", contract.FormatTime(it.Due))
		}
	}
}

func (x *run) fail(ctx context.Context, log *slog.Logger, what string, err error) {
	x.res.Errors++
	log.WarnContext(ctx, what+" failed; the next pass retries", "error", err)
}

// Rate-limited timer calls.

func (x *run) wait(ctx context.Context) error {
	if err := x.limiter.Wait(ctx); err != nil {
		return err
	}
	x.res.SchedulerCalls++
	return nil
}

func (x *run) get(ctx context.Context, name string, at time.Time) (timer.Schedule, error) {
	if err := x.wait(ctx); err != nil {
		return timer.Schedule{}, err
	}
	return x.d.Schedules.Get(ctx, name, at)
}

func (x *run) create(ctx context.Context, s timer.Schedule) error {
	if err := x.wait(ctx); err != nil {
		return err
	}
	return x.d.Scheduler.Arm(ctx, s)
}

func (x *run) update(ctx context.Context, s timer.Schedule, from time.Time) error {
	if err := x.wait(ctx); err != nil {
		return err
	}
	return x.d.Scheduler.Move(ctx, s, from)
}

func (x *run) delete(ctx context.Context, name string, at time.Time) error {
	if err := x.wait(ctx); err != nil {
		return err
	}
	return x.d.Scheduler.Disarm(ctx, name, at)
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
		{MetricSchedulesDeleted, res.SchedulesDeleted}, {MetricItemsFired, res.ItemsFired},
		{MetricRepairFlagsCleared, res.RepairFlagsCleared}, {MetricSchedulesConfirmed, res.SchedulesConfirmed},
		{MetricErrors, res.Errors}, {MetricItemsChecked, res.ItemsChecked},
		{MetricSchedulesChecked, res.SchedulesChecked}, {MetricSchedulerCalls, res.SchedulerCalls},
		{MetricRepaired, res.Repaired()}, {MetricLeftOver, res.LeftOver},
		{MetricPassesCompleted, completed},
	} {
		m.Add(c.name, float64(c.n))
	}
	attrs := []any{"schedulesCreated", res.SchedulesCreated, "schedulesMoved", res.SchedulesMoved,
		"schedulesDeleted", res.SchedulesDeleted, "tasksExpired", res.ItemsFired,
		"repairFlagsCleared", res.RepairFlagsCleared, "schedulesConfirmed", res.SchedulesConfirmed,
		"tasksChecked", res.ItemsChecked, "schedulesChecked", res.SchedulesChecked,
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

// The reconciler's checkpoint item lives in the item table under a
// reserved partition key, which no Cognito sub can equal. The constructs
// filter it out of the stream and scope the reconciler's PutItem to it.
const (
	CheckpointPartition = "#reconciler"
	CheckpointSort      = "checkpoint"
)
