// Package inproc is the scheduling core's pipeline in one process, for
// tests, the simulation, `make dev` and an adopter's test kit
// (contract/pipelinetest): an SQS FIFO queue in memory (Queue) and the
// core's stages wired on the stand-ins of internal/core/inmem (an item
// table with its change feed, each timer) on a virtual clock, with the
// core's own code at every stage:
//
//	an item table's change feed (the DynamoDB stream)
//	  -> cancel.Processor (the stream processor)
//	  -> Queue (the SQS FIFO queue)
//	  -> cancel.Worker (the cancellation worker)
//	  -> the timer's stand-in (inmem.NewTimer)
//	  -> Fire (the firing function: the claim, then the target)
//	reconcile.Reconciler, run on demand.
//
// It knows no adopter: NewForSchema wires any schema's inmem.Items table and a
// target; an adopter with its own store (the to-do app's tooling) builds
// the Engine with NewEngine and hands Wire its feed and its firing.
// Options.Hooks (hooks.go) let the simulation drive this same pipeline
// with faults: shards, replays, stalled workers, odd firings.
package inproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	// The built-in timer kinds, whose stand-ins NewTimer picks.
	_ "github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// Options configure an Engine. The zero value works.
type Options struct {
	// Start is the virtual clock's first reading. Default: 2030-01-01
	// 00:00:00 UTC.
	Start time.Time
	// Queue configures the FIFO queue. Default: see QueueConfig.
	Queue QueueConfig
	// Reconcile configures the reconciler. Default: see reconcile.Config.
	Reconcile reconcile.Config
	// StreamBatchSize is how many change records one stream batch holds.
	// Default: 100.
	StreamBatchSize int
	// StreamShards is how many shards the stream spreads the records over
	// (by ShardKey's hash): each shard keeps its records' order, and
	// records of different shards may be processed in any order. Default: 1.
	StreamShards int
	// ShardKey is what picks a record's shard. Default: the item's key.
	ShardKey func(changefeed.Change) string
	// QueueBatchSize is how many messages one worker batch holds.
	// Default: 10.
	QueueBatchSize int
	// FireAttempts is how often a fired schedule's firing is tried before
	// it goes to the dead-letter list. Default: 3.
	FireAttempts int
	// FireRetryDelay is how long after a failed firing it is tried again.
	// Default: 1 minute.
	FireRetryDelay time.Duration
	// Timer is the timer whose in-memory stand-in fires the items
	// (inmem.NewTimer): EventBridge Scheduler (zero value), Step Functions (a
	// timer per execution) or TTL (a lazy sweeper).
	Timer timerspec.Name
	// TTLDelay picks how long after its due time the TTL sweeper deletes
	// a marker (Timer TTL). Default: none.
	TTLDelay func() time.Duration
	// SchedulerMinutes (Timer EventBridgeScheduler) fires a schedule as
	// EventBridge Scheduler does through its adapter: on the whole minute
	// at or after its time (awsscheduler.ScheduleTime), SchedulerLateness
	// into that minute. Default: false, at its time to the second.
	SchedulerMinutes bool
	// SchedulerLateness is how far into its minute a schedule fires with
	// SchedulerMinutes: the scheduler invokes "with 60 second precision",
	// anywhere from 0 to 59 s into the minute
	// (https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html).
	// Default: 0.
	SchedulerLateness time.Duration
	// Metrics receives every stage's metrics. Default: none.
	Metrics *metrics.Recorder
	// Log receives every stage's logs. Default: slog.Default().
	Log *slog.Logger
	// Hooks inject faults between the stages. Default: none.
	Hooks Hooks
}

// WithDefaults fills the unset options.
func (opts Options) WithDefaults() Options {
	if opts.Start.IsZero() {
		opts.Start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if opts.StreamBatchSize <= 0 {
		opts.StreamBatchSize = 100
	}
	if opts.StreamShards <= 0 {
		opts.StreamShards = 1
	}
	if opts.QueueBatchSize <= 0 {
		opts.QueueBatchSize = 10
	}
	if opts.FireAttempts <= 0 {
		opts.FireAttempts = 3
	}
	if opts.FireRetryDelay <= 0 {
		opts.FireRetryDelay = time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return opts
}

// Invocation is a fired schedule whose firing failed and is retried.
type Invocation struct {
	Schedule contract.Schedule
	Attempts int
	Err      error
	// NextAttempt is when it is tried again.
	NextAttempt time.Time
}

// ChangeFeed is an item table's change feed (inmem.Items, or an adopter's
// store): the changes from position from on, and the next position.
type ChangeFeed interface {
	Changes(from int) ([]changefeed.Change, int)
}

// FireFunc is what the firing function does with a fired schedule's
// input; it returns the outcome's name (fire.Outcome, or an adopter's
// name for it), counted in Report.Outcomes.
type FireFunc func(ctx context.Context, s contract.Schedule) (string, error)

// Wiring is what an adopter hands Wire: its schema, its table's change
// feed, its firing, and the reconciler's view of its table and firer.
type Wiring struct {
	Schema contract.Schema
	Feed   ChangeFeed
	Fire   FireFunc
	// Items is the reconciler's view of the table; Firer fires an overdue
	// item as the firing function does.
	Items reconcile.Items
	Firer reconcile.Firer
	// Enqueuer is what the stream processor sends through. Default: the
	// Engine's Queue.
	Enqueuer cancel.Enqueuer
	// Timer is the timer the worker and the reconciler call (a wrapper
	// of the Engine's Timer that injects faults). Default: the Engine's
	// Timer.
	Timer TimerPort
}

// TimerPort is a timer as the worker, the reconciler and an adopter's
// API call it: what arms, moves and disarms, and what reads back.
type TimerPort interface {
	timer.Timer
	timer.Reader
}

// Engine is the pipeline in one process. Its fields are the stages,
// exposed for tests and fault injection.
type Engine struct {
	Clock *Clock
	// Scheduler is the EventBridge Scheduler stand-in (nil with another
	// Timer); Timer is the stand-in of the timer in use, which every stage
	// calls.
	Scheduler   *inmem.Scheduler
	Timer       inmem.TimerScheduler
	Processor   *cancel.Processor
	Queue       *Queue
	Worker      *cancel.Worker
	Reconciler  *reconcile.Reconciler
	Checkpoints *inmem.Checkpoints

	opts    Options
	hooks   Hooks
	log     *slog.Logger
	feed    ChangeFeed
	fire    FireFunc
	deps    reconcile.Deps
	feedPos int
	shards  []shard
	// pending are the invocations waiting for their time: late or
	// duplicate deliveries, and retries.
	pending []Invocation
	dead    []Invocation
}

// NewEngine builds the clock, the timer's stand-in, the queue and the
// checkpoint store; Wire then adds the stages that read the adopter's
// table.
func NewEngine(opts Options) *Engine {
	opts = opts.WithDefaults()
	e := &Engine{Clock: NewClock(opts.Start), Checkpoints: &inmem.Checkpoints{}, opts: opts, hooks: opts.Hooks,
		log: opts.Log, shards: make([]shard, opts.StreamShards)}
	e.Timer = inmem.NewTimer(opts.Timer, e.Clock.Now, opts.TTLDelay)
	e.Scheduler, _ = e.Timer.(*inmem.Scheduler)
	e.Queue = NewQueue(e.Clock, opts.Queue)
	return e
}

// Wire adds the stream processor, the worker and the reconciler for w's
// schema, and reads w's feed and fires with w's firing.
func (e *Engine) Wire(w Wiring) error {
	if w.Enqueuer == nil {
		w.Enqueuer = e.Queue
	}
	if w.Timer == nil {
		w.Timer = e.Timer
	}
	var err error
	if e.Processor, err = cancel.NewProcessor(w.Schema, w.Enqueuer, e.opts.Metrics, e.log); err != nil {
		return err
	}
	if e.Worker, err = cancel.NewWorker(w.Schema, w.Timer, e.opts.Metrics, e.log); err != nil {
		return err
	}
	e.Worker.SetClock(e.Clock.Now)
	e.deps = reconcile.Deps{Schema: w.Schema, Items: w.Items, Scheduler: w.Timer, Schedules: w.Timer, Firer: w.Firer,
		Clock: e.Clock, Sleep: e.Clock.Sleep, Metrics: e.opts.Metrics, Log: e.log}
	if e.Reconciler, err = e.newReconciler(e.opts.Reconcile, e.Checkpoints); err != nil {
		return err
	}
	e.feed, e.fire = w.Feed, w.Fire
	return nil
}

// NewReconciler builds another reconciler of the wired table with its
// own configuration and checkpoints (a full pass beside the budgeted
// runs).
func (e *Engine) NewReconciler(cfg reconcile.Config) (*reconcile.Reconciler, error) {
	return e.newReconciler(cfg, &inmem.Checkpoints{})
}

func (e *Engine) newReconciler(cfg reconcile.Config, cp *inmem.Checkpoints) (*reconcile.Reconciler, error) {
	d := e.deps
	d.Checkpoints = cp
	return reconcile.New(cfg, d)
}

// Pipeline is the pipeline of any schema's inmem.Items table, firing a target.
type Pipeline struct {
	*Engine
	// Items is the table: items written by plain puts (Items.Put, as a
	// writer that is not ours would) are scheduled, moved and cancelled
	// by the stream path. Fire is the firing core that runs the target.
	Items *inmem.Items
	Fire  *fire.Core
}

// NewForSchema builds the pipeline of any schema's table on empty
// stand-ins: the firing core runs target after each successful claim,
// and the reconciler reads the table as a Scan would (inmem.Armed).
func NewForSchema(s contract.Schema, target fire.Deliverer, opts Options) (*Pipeline, error) {
	e := NewEngine(opts)
	p := &Pipeline{Engine: e, Items: inmem.NewItems(s)}
	if e.Scheduler != nil {
		e.Scheduler.ListPrefix = s.ScheduleNamePrefix
	}
	var err error
	if p.Fire, err = fire.New(fire.Config{Schema: s, Store: p.Items, Now: e.Clock.Now, Log: e.log}); err != nil {
		return nil, err
	}
	err = e.Wire(Wiring{Schema: s, Feed: p.Items, Items: inmem.Armed{Items: p.Items}, Firer: fire.Firing{Core: p.Fire, Target: target},
		Fire: func(ctx context.Context, sc contract.Schedule) (string, error) {
			// What the firing function does with a schedule's input.
			pl, err := s.DecodePayload([]byte(s.EncodePayload(sc.Payload)))
			if err != nil {
				return "", err
			}
			var out fire.Outcome
			if pl.IsReminder() {
				out, err = p.Fire.Remind(ctx, pl, p.Items, target)
			} else {
				out, err = p.Fire.Fire(ctx, pl, target)
			}
			return string(out), err
		}})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Report counts what a Step moved.
type Report struct {
	// Records: change-feed records handed to the stream processor.
	Records int
	// RecordsFailed: records the processor could not enqueue; the stream
	// delivers them again from the lowest one.
	RecordsFailed int
	// StreamAdvanced: how far the stream position moved.
	StreamAdvanced int
	// Delivered: queue messages handed to the worker.
	Delivered int
	// DeliveriesFailed: messages the worker failed; delivered again after
	// the visibility timeout.
	DeliveriesFailed int
	// Fired: schedules that fired, plus retried firings.
	Fired int
	// Outcomes counts the firings' outcomes by name (FireFunc).
	Outcomes map[string]int
}

// Moved reports whether the step made progress: the stream moved on, or a
// message was delivered, or a schedule fired. A stream batch that failed
// as a whole is not progress (it would fail again at the same instant).
func (r Report) Moved() bool { return r.StreamAdvanced+r.Delivered+r.Fired > 0 }

func (r *Report) add(o Report) {
	r.Records += o.Records
	r.RecordsFailed += o.RecordsFailed
	r.StreamAdvanced += o.StreamAdvanced
	r.Delivered += o.Delivered
	r.DeliveriesFailed += o.DeliveriesFailed
	r.Fired += o.Fired
	for k, v := range o.Outcomes {
		if r.Outcomes == nil {
			r.Outcomes = map[string]int{}
		}
		r.Outcomes[k] += v
	}
}

// Step sets the clock to now (never backwards) and runs each stage once:
// one stream batch, one queue batch, then the schedules due at now.
func (e *Engine) Step(ctx context.Context, now time.Time) Report {
	e.Clock.Set(now)
	var r Report
	r.add(e.PumpStream(ctx))
	r.add(e.DeliverQueue(ctx))
	r.add(e.FireSchedules(ctx))
	return r
}

// MaxSteps bounds Drain.
const MaxSteps = 10000

// ErrNotSettled: Drain ran MaxSteps steps and the pipeline still moved.
var ErrNotSettled = errors.New("pipeline: not settled")

// Drain steps at now until a step moves nothing, and returns the sum.
// Failed deliveries wait for their visibility timeout, so they are not
// retried at the same instant: drain again later to retry them.
func (e *Engine) Drain(ctx context.Context, now time.Time) (Report, error) {
	var total Report
	for i := 0; i < MaxSteps; i++ {
		r := e.Step(ctx, now)
		total.add(r)
		if !r.Moved() {
			return total, nil
		}
	}
	return total, fmt.Errorf("%w after %d steps", ErrNotSettled, MaxSteps)
}

// PumpStream hands the next batch of each shard's change records to the
// stream processor, as the Lambda event source mapping does: when records
// fail, the shard resumes from the lowest failed one next time.
func (e *Engine) PumpStream(ctx context.Context) Report {
	var r Report
	for i := range e.shards {
		r.add(e.PumpShard(ctx, i))
	}
	return r
}

// PumpShard hands the next batch of shard i to the stream processor
// (Hooks.StreamBatch and Hooks.StreamHandled may replay or redeliver).
func (e *Engine) PumpShard(ctx context.Context, i int) Report {
	e.ingest()
	sh := &e.shards[i]
	n := e.opts.StreamBatchSize
	if e.hooks.StreamBatch != nil {
		back, bound := e.hooks.StreamBatch(sh.pos, len(sh.recs)-sh.pos)
		sh.pos = max(0, sh.pos-back)
		if bound > 0 {
			n = bound
		}
	}
	all := sh.recs[sh.pos:min(len(sh.recs), sh.pos+n)]
	if len(all) == 0 {
		return Report{}
	}
	failures := e.Processor.Process(ctx, all)
	next := sh.pos + len(all)
	failed := map[string]bool{}
	for _, f := range failures {
		failed[f.EventID] = true
	}
	for i, c := range all {
		if failed[c.EventID] {
			next = sh.pos + i
			break
		}
	}
	if e.hooks.StreamHandled != nil && e.hooks.StreamHandled(all, failures) {
		next = sh.pos
	}
	advanced := next - sh.pos
	sh.pos = next
	return Report{Records: len(all), RecordsFailed: len(failures), StreamAdvanced: advanced}
}

// ReplayStream moves each shard back by n records, so they are delivered
// again (a stream replays records after a shard or function failure).
func (e *Engine) ReplayStream(n int) {
	e.ingest()
	for i := range e.shards {
		e.shards[i].pos = max(0, e.shards[i].pos-n)
	}
}

// DeliverQueue hands one batch of visible queue messages to the worker, as
// the SQS event source mapping does, and acknowledges those that did not
// fail.
func (e *Engine) DeliverQueue(ctx context.Context) Report {
	batch := e.Queue.Receive(e.opts.QueueBatchSize)
	if len(batch) == 0 {
		return Report{}
	}
	var r Report
	if e.hooks.WorkerStall != nil {
		if d := e.hooks.WorkerStall(); d > 0 {
			// This worker stalls; what became visible meanwhile goes to a
			// second worker first.
			e.Clock.Advance(d)
			if second := e.Queue.Receive(e.opts.QueueBatchSize); len(second) > 0 {
				r.add(Report{Delivered: len(second), DeliveriesFailed: e.handle(ctx, second)})
			}
		}
	}
	r.add(Report{Delivered: len(batch), DeliveriesFailed: e.handle(ctx, batch)})
	return r
}

// FireSchedules fires the schedules due now (Hooks.Deliveries may delay,
// duplicate or drop their invocations), then runs the invocations whose
// time came, as the timer does: each runs the firing with its payload. A
// failing firing is retried after Options.FireRetryDelay
// (Hooks.RetryDelay), up to Options.FireAttempts, then dead-lettered (logged).
func (e *Engine) FireSchedules(ctx context.Context) Report {
	now := e.Clock.Now()
	horizon := e.fireHorizon(now)
	if e.hooks.FireEarly != nil {
		horizon = horizon.Add(e.hooks.FireEarly())
	}
	for _, s := range e.Timer.Fire(horizon) {
		delays := []time.Duration{0}
		if e.hooks.Deliveries != nil {
			delays = e.hooks.Deliveries(s)
		}
		for _, d := range delays {
			e.Invoke(s, now.Add(d), 0)
		}
	}
	var due []Invocation
	waiting := e.pending[:0]
	for _, inv := range e.pending {
		if inv.NextAttempt.After(now) {
			waiting = append(waiting, inv)
		} else {
			due = append(due, inv)
		}
	}
	e.pending = waiting
	r := Report{Fired: len(due)}
	for _, inv := range due {
		inv.Attempts++
		out, err := e.fire(ctx, inv.Schedule)
		if err != nil {
			inv.Err = err
			e.log.WarnContext(ctx, "firing failed", "schedule", inv.Schedule.Name,
				"attempt", inv.Attempts, "error", err)
			if inv.Attempts >= e.opts.FireAttempts {
				e.log.ErrorContext(ctx, "firing dead-lettered after its attempts", "schedule", inv.Schedule.Name, "attempts", inv.Attempts)
				e.dead = append(e.dead, inv)
				continue
			}
			delay := e.opts.FireRetryDelay
			if e.hooks.RetryDelay != nil {
				delay = e.hooks.RetryDelay(inv.Attempts)
			}
			inv.NextAttempt = e.Clock.Now().Add(delay)
			e.pending = append(e.pending, inv)
			continue
		}
		if r.Outcomes == nil {
			r.Outcomes = map[string]int{}
		}
		r.Outcomes[out]++
	}
	return r
}

// fireHorizon is the latest schedule time that fires at now. With
// SchedulerMinutes, a schedule at t (whole seconds, as the contract
// writes) fires at ScheduleTime(t) plus the lateness, which is at or
// before now exactly when t is at or before the whole minute of now less
// the lateness.
func (e *Engine) fireHorizon(now time.Time) time.Time {
	if !e.opts.SchedulerMinutes || e.Scheduler == nil {
		return now
	}
	return now.Add(-e.opts.SchedulerLateness).Truncate(time.Minute)
}

// Retrying returns the failed firings that wait for their next attempt.
func (e *Engine) Retrying() []Invocation {
	var out []Invocation
	for _, inv := range e.pending {
		if inv.Attempts > 0 {
			out = append(out, inv)
		}
	}
	return out
}

// DeadInvocations returns the firings that used up their attempts.
func (e *Engine) DeadInvocations() []Invocation { return append([]Invocation(nil), e.dead...) }

// Reconcile sets the clock to now and runs the reconciler once. Its
// rate-limit waits advance the clock.
func (e *Engine) Reconcile(ctx context.Context, now time.Time) (reconcile.Result, error) {
	e.Clock.Set(now)
	return e.Reconciler.Run(ctx)
}
