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
}

// WithDefaults fills the unset options.
func (opts Options) WithDefaults() Options {
	if opts.Start.IsZero() {
		opts.Start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if opts.StreamBatchSize <= 0 {
		opts.StreamBatchSize = 100
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

	opts      Options
	log       *slog.Logger
	feed      ChangeFeed
	fire      FireFunc
	streamPos int
	retries   []Invocation
	dead      []Invocation
}

// NewEngine builds the clock, the timer's stand-in, the queue and the
// checkpoint store; Wire then adds the stages that read the adopter's
// table.
func NewEngine(opts Options) *Engine {
	opts = opts.WithDefaults()
	e := &Engine{Clock: NewClock(opts.Start), Checkpoints: &inmem.Checkpoints{}, opts: opts, log: opts.Log}
	e.Timer = inmem.NewTimer(opts.Timer, e.Clock.Now, opts.TTLDelay)
	e.Scheduler, _ = e.Timer.(*inmem.Scheduler)
	e.Queue = NewQueue(e.Clock, opts.Queue)
	return e
}

// Wire adds the stream processor, the worker and the reconciler for w's
// schema, and reads w's feed and fires with w's firing.
func (e *Engine) Wire(w Wiring) error {
	var err error
	if e.Processor, err = cancel.NewProcessor(w.Schema, e.Queue, e.opts.Metrics, e.log); err != nil {
		return err
	}
	if e.Worker, err = cancel.NewWorker(w.Schema, e.Timer, e.opts.Metrics, e.log); err != nil {
		return err
	}
	e.Worker.SetClock(e.Clock.Now)
	if e.Reconciler, err = reconcile.New(e.opts.Reconcile, reconcile.Deps{Schema: w.Schema, Items: w.Items,
		Scheduler: e.Timer, Schedules: e.Timer, Firer: w.Firer, Checkpoints: e.Checkpoints,
		Clock: e.Clock, Sleep: e.Clock.Sleep, Metrics: e.opts.Metrics, Log: e.log}); err != nil {
		return err
	}
	e.feed, e.fire = w.Feed, w.Fire
	return nil
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

// PumpStream hands the next batch of change records to the stream
// processor, as the Lambda event source mapping does: when records fail,
// the stream resumes from the lowest failed one next time.
func (e *Engine) PumpStream(ctx context.Context) Report {
	all, _ := e.feed.Changes(e.streamPos)
	if len(all) > e.opts.StreamBatchSize {
		all = all[:e.opts.StreamBatchSize]
	}
	if len(all) == 0 {
		return Report{}
	}
	failures := e.Processor.Process(ctx, all)
	next := e.streamPos + len(all)
	failed := map[string]bool{}
	for _, f := range failures {
		failed[f.EventID] = true
	}
	for i, c := range all {
		if failed[c.EventID] {
			next = e.streamPos + i
			break
		}
	}
	advanced := next - e.streamPos
	e.streamPos = next
	return Report{Records: len(all), RecordsFailed: len(failures), StreamAdvanced: advanced}
}

// ReplayStream moves the stream back by n records, so they are delivered
// again (a stream replays records after a shard or function failure).
func (e *Engine) ReplayStream(n int) {
	e.streamPos = max(0, e.streamPos-n)
}

// DeliverQueue hands one batch of visible queue messages to the worker, as
// the SQS event source mapping does, and acknowledges those that did not
// fail.
func (e *Engine) DeliverQueue(ctx context.Context) Report {
	batch := e.Queue.Receive(e.opts.QueueBatchSize)
	if len(batch) == 0 {
		return Report{}
	}
	ds := make([]cancel.Delivery, len(batch))
	for i, r := range batch {
		ds[i] = cancel.Delivery{ID: r.MessageID, GroupID: r.GroupID, Body: r.Body}
	}
	failed := map[string]bool{}
	for _, id := range e.Worker.HandleBatch(ctx, ds) {
		failed[id] = true
	}
	for _, r := range batch {
		if !failed[r.MessageID] {
			e.Queue.Ack(r)
		}
	}
	return Report{Delivered: len(batch), DeliveriesFailed: len(failed)}
}

// FireSchedules fires the schedules due now, and retries failed firings,
// as the timer does: each runs the firing with its payload. A failing
// firing is retried after Options.FireRetryDelay, up to
// Options.FireAttempts, then dead-lettered.
func (e *Engine) FireSchedules(ctx context.Context) Report {
	now := e.Clock.Now()
	var due []Invocation
	waiting := e.retries[:0]
	for _, inv := range e.retries {
		if inv.NextAttempt.After(now) {
			waiting = append(waiting, inv)
		} else {
			due = append(due, inv)
		}
	}
	e.retries = waiting
	for _, s := range e.Timer.Fire(e.fireHorizon(now)) {
		due = append(due, Invocation{Schedule: s})
	}
	r := Report{Fired: len(due)}
	for _, inv := range due {
		inv.Attempts++
		out, err := e.fire(ctx, inv.Schedule)
		if err != nil {
			inv.Err = err
			e.log.WarnContext(ctx, "firing failed", "schedule", inv.Schedule.Name,
				"attempt", inv.Attempts, "error", err)
			if inv.Attempts >= e.opts.FireAttempts {
				e.dead = append(e.dead, inv)
			} else {
				inv.NextAttempt = now.Add(e.opts.FireRetryDelay)
				e.retries = append(e.retries, inv)
			}
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
func (e *Engine) Retrying() []Invocation { return append([]Invocation(nil), e.retries...) }

// DeadInvocations returns the firings that used up their attempts.
func (e *Engine) DeadInvocations() []Invocation { return append([]Invocation(nil), e.dead...) }

// Reconcile sets the clock to now and runs the reconciler once. Its
// rate-limit waits advance the clock.
func (e *Engine) Reconcile(ctx context.Context, now time.Time) (reconcile.Result, error) {
	e.Clock.Set(now)
	return e.Reconciler.Run(ctx)
}
