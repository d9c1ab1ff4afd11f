// Package pipeline wires the whole unscheduling pipeline in one process,
// on the memory adapters and a virtual clock, with the real code at every
// stage:
//
//	task.Service (the API's use cases)
//	  -> memory.Store change feed (the DynamoDB stream)
//	  -> cancel.Processor (the stream processor)
//	  -> Queue (the SQS FIFO queue)
//	  -> cancel.Worker (the cancellation worker)
//	  -> memory.Scheduler (EventBridge Scheduler)
//	  -> Scheduler.Fire -> task.Firer (the expiry function and its target)
//	  -> memory.Outbox (SNS)
//	reconcile.Reconciler, run on demand.
//
// Tests, `make dev` and the simulation drive it with Step and Drain.
package pipeline

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
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// Options configure a Pipeline. The zero value works.
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
	// ExpiryAttempts is how often a fired schedule's expiry is tried before
	// it goes to the scheduler's dead-letter list. Default: 3.
	ExpiryAttempts int
	// ExpiryRetryDelay is how long after a failed expiry it is tried
	// again. Default: 1 minute.
	ExpiryRetryDelay time.Duration
	// Timer is the timer whose in-memory stand-in fires the
	// items (memory.NewTimer): EventBridge Scheduler (zero value), Step
	// Functions (a timer per execution) or TTL (a lazy sweeper).
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
	// IDs makes task ids and tokens. Default: task.RandomIDs.
	IDs task.IDs
	// WebURL is the web app's URL used in notification links. Default: "".
	WebURL string
	// Metrics receives every stage's metrics. Default: none.
	Metrics *metrics.Recorder
	// Log receives every stage's logs. Default: slog.Default().
	Log *slog.Logger
}

// Invocation is a fired schedule whose expiry failed and is retried.
type Invocation struct {
	Schedule contract.Schedule
	Attempts int
	Err      error
	// NextAttempt is when it is tried again.
	NextAttempt time.Time
}

// Pipeline is the whole pipeline in one process. Its fields are the
// stages, exposed for tests and fault injection.
type Pipeline struct {
	Clock *Clock
	Store *memory.Store
	// Scheduler is the EventBridge Scheduler stand-in (nil with another
	// Timer); Timer is the stand-in of the timer in use, which every stage
	// calls.
	Scheduler *memory.Scheduler
	Timer     memory.TimerScheduler
	Outbox    *memory.Outbox
	Service   *task.Service
	// Firer is what the expiry function and the reconciler run: the
	// firing core over Store, delivering to the to-do app's target
	// (task.NotifyTarget on Outbox, as the notify function in AWS).
	Firer       *task.Firer
	Processor   *cancel.Processor
	Queue       *Queue
	Worker      *cancel.Worker
	Reconciler  *reconcile.Reconciler
	Checkpoints *memory.Checkpoints
	// Items and Fire are set instead of Store, Outbox and Service by
	// NewForSchema: any schema's table, and the firing core that runs the
	// target; its Reconciler reads the table as a Scan would
	// (memory.Armed).
	Items *memory.Items
	Fire  *fire.Core

	opts Options
	log  *slog.Logger
	feed interface {
		Changes(from int) ([]changefeed.Change, int)
	}
	fire      func(ctx context.Context, s contract.Schedule) (task.ExpireOutcome, error)
	streamPos int
	retries   []Invocation
	dead      []Invocation
}

// New builds the to-do app's pipeline on empty memory adapters.
func New(opts Options) (*Pipeline, error) {
	opts = opts.withDefaults()
	p := &Pipeline{Clock: NewClock(opts.Start), Store: memory.NewStore(),
		Outbox: &memory.Outbox{}, Checkpoints: &memory.Checkpoints{}, opts: opts, log: opts.Log}
	p.setTimer()
	p.feed, p.fire = p.Store, p.expire
	p.Queue = NewQueue(p.Clock, opts.Queue)
	var err error
	if p.Service, err = task.NewService(task.Deps{Store: p.Store, Scheduler: p.Timer,
		Clock: p.Clock, IDs: opts.IDs, Log: opts.Log}); err != nil {
		return nil, err
	}
	if p.Firer, err = task.InProcess(task.InProcessConfig{Store: p.Store, Notifier: p.Outbox, Clock: p.Clock,
		WebURL: opts.WebURL, Log: opts.Log}); err != nil {
		return nil, err
	}
	if p.Processor, err = cancel.NewProcessor(task.Schema, p.Queue, opts.Metrics, opts.Log); err != nil {
		return nil, err
	}
	if p.Worker, err = cancel.NewWorker(task.Schema, p.Timer, opts.Metrics, opts.Log); err != nil {
		return nil, err
	}
	p.Worker.SetClock(p.Clock.Now)
	if p.Reconciler, err = reconcile.New(opts.Reconcile, reconcile.Deps{Schema: task.Schema,
		Items: task.NewReconcileView(p.Store, p.Store), Scheduler: p.Timer, Schedules: p.Timer, Firer: p.Firer,
		Checkpoints: p.Checkpoints,
		Clock:       p.Clock, Sleep: p.Clock.Sleep, Metrics: opts.Metrics, Log: opts.Log}); err != nil {
		return nil, err
	}
	return p, nil
}

// setTimer makes the stand-in of opts.Timer.
func (p *Pipeline) setTimer() {
	p.Timer = memory.NewTimer(p.opts.Timer, p.Clock.Now, p.opts.TTLDelay)
	p.Scheduler, _ = p.Timer.(*memory.Scheduler)
}

func (opts Options) withDefaults() Options {
	if opts.Start.IsZero() {
		opts.Start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if opts.StreamBatchSize <= 0 {
		opts.StreamBatchSize = 100
	}
	if opts.QueueBatchSize <= 0 {
		opts.QueueBatchSize = 10
	}
	if opts.ExpiryAttempts <= 0 {
		opts.ExpiryAttempts = 3
	}
	if opts.ExpiryRetryDelay <= 0 {
		opts.ExpiryRetryDelay = time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return opts
}

// NewForSchema builds the pipeline of any schema's table on empty memory
// adapters: items written by plain puts (Items.Put, as a writer that is
// not ours would) are scheduled, moved and cancelled by the stream path,
// and fired by the firing core, which runs target after each successful
// claim. There is no API, notifier or reconciler.
func NewForSchema(s contract.Schema, target fire.Deliverer, opts Options) (*Pipeline, error) {
	opts = opts.withDefaults()
	p := &Pipeline{Clock: NewClock(opts.Start), Items: memory.NewItems(s), opts: opts, log: opts.Log}
	p.setTimer()
	p.Queue = NewQueue(p.Clock, opts.Queue)
	var err error
	if p.Fire, err = fire.New(fire.Config{Schema: s, Store: p.Items, Now: p.Clock.Now, Log: opts.Log}); err != nil {
		return nil, err
	}
	if p.Processor, err = cancel.NewProcessor(s, p.Queue, opts.Metrics, opts.Log); err != nil {
		return nil, err
	}
	if p.Worker, err = cancel.NewWorker(s, p.Timer, opts.Metrics, opts.Log); err != nil {
		return nil, err
	}
	p.Worker.SetClock(p.Clock.Now)
	if sc, ok := p.Timer.(*memory.Scheduler); ok {
		sc.ListPrefix = s.ScheduleNamePrefix
	}
	p.Checkpoints = &memory.Checkpoints{}
	if p.Reconciler, err = reconcile.New(opts.Reconcile, reconcile.Deps{Schema: s, Items: memory.Armed{Items: p.Items},
		Scheduler: p.Timer, Schedules: p.Timer, Firer: fire.Firing{Core: p.Fire, Target: target},
		Checkpoints: p.Checkpoints, Clock: p.Clock, Sleep: p.Clock.Sleep, Metrics: opts.Metrics, Log: opts.Log}); err != nil {
		return nil, err
	}
	p.feed = p.Items
	p.fire = func(ctx context.Context, sc contract.Schedule) (task.ExpireOutcome, error) {
		// What the expiry function does with a schedule's input.
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
		return fireOutcomes[out], err
	}
	return p, nil
}

// fireOutcomes names the firing core's outcomes as the to-do app's
// (Report.Expired counts either).
var fireOutcomes = map[fire.Outcome]task.ExpireOutcome{
	fire.Fired: task.Expired, fire.Redelivered: task.Renotified, fire.Skipped: task.Skipped,
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
	// Fired: schedules that fired, plus retried expiry invocations.
	Fired int
	// Expired counts expiry outcomes by kind.
	Expired map[task.ExpireOutcome]int
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
	for k, v := range o.Expired {
		if r.Expired == nil {
			r.Expired = map[task.ExpireOutcome]int{}
		}
		r.Expired[k] += v
	}
}

// Step sets the clock to now (never backwards) and runs each stage once:
// one stream batch, one queue batch, then the schedules due at now.
func (p *Pipeline) Step(ctx context.Context, now time.Time) Report {
	p.Clock.Set(now)
	var r Report
	r.add(p.PumpStream(ctx))
	r.add(p.DeliverQueue(ctx))
	r.add(p.FireSchedules(ctx))
	return r
}

// MaxSteps bounds Drain.
const MaxSteps = 10000

// ErrNotSettled: Drain ran MaxSteps steps and the pipeline still moved.
var ErrNotSettled = errors.New("pipeline: not settled")

// Drain steps at now until a step moves nothing, and returns the sum.
// Failed deliveries wait for their visibility timeout, so they are not
// retried at the same instant: drain again later to retry them.
func (p *Pipeline) Drain(ctx context.Context, now time.Time) (Report, error) {
	var total Report
	for i := 0; i < MaxSteps; i++ {
		r := p.Step(ctx, now)
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
func (p *Pipeline) PumpStream(ctx context.Context) Report {
	all, _ := p.feed.Changes(p.streamPos)
	if len(all) > p.opts.StreamBatchSize {
		all = all[:p.opts.StreamBatchSize]
	}
	if len(all) == 0 {
		return Report{}
	}
	failures := p.Processor.Process(ctx, all)
	next := p.streamPos + len(all)
	failed := map[string]bool{}
	for _, f := range failures {
		failed[f.EventID] = true
	}
	for i, c := range all {
		if failed[c.EventID] {
			next = p.streamPos + i
			break
		}
	}
	advanced := next - p.streamPos
	p.streamPos = next
	return Report{Records: len(all), RecordsFailed: len(failures), StreamAdvanced: advanced}
}

// ReplayStream moves the stream back by n records, so they are delivered
// again (a stream replays records after a shard or function failure).
func (p *Pipeline) ReplayStream(n int) {
	p.streamPos = max(0, p.streamPos-n)
}

// DeliverQueue hands one batch of visible queue messages to the worker, as
// the SQS event source mapping does, and acknowledges those that did not
// fail.
func (p *Pipeline) DeliverQueue(ctx context.Context) Report {
	batch := p.Queue.Receive(p.opts.QueueBatchSize)
	if len(batch) == 0 {
		return Report{}
	}
	ds := make([]cancel.Delivery, len(batch))
	for i, r := range batch {
		ds[i] = cancel.Delivery{ID: r.MessageID, GroupID: r.GroupID, Body: r.Body}
	}
	failed := map[string]bool{}
	for _, id := range p.Worker.HandleBatch(ctx, ds) {
		failed[id] = true
	}
	for _, r := range batch {
		if !failed[r.MessageID] {
			p.Queue.Ack(r)
		}
	}
	return Report{Delivered: len(batch), DeliveriesFailed: len(failed)}
}

// FireSchedules fires the schedules due now, and retries failed expiry
// invocations, as the scheduler does: each invokes the expiry use case
// with its payload. A failing invocation is retried after
// Options.ExpiryRetryDelay, up to Options.ExpiryAttempts, then
// dead-lettered.
func (p *Pipeline) FireSchedules(ctx context.Context) Report {
	now := p.Clock.Now()
	var due []Invocation
	waiting := p.retries[:0]
	for _, inv := range p.retries {
		if inv.NextAttempt.After(now) {
			waiting = append(waiting, inv)
		} else {
			due = append(due, inv)
		}
	}
	p.retries = waiting
	for _, s := range p.Timer.Fire(p.fireHorizon(now)) {
		due = append(due, Invocation{Schedule: s})
	}
	r := Report{Fired: len(due)}
	for _, inv := range due {
		inv.Attempts++
		out, err := p.fire(ctx, inv.Schedule)
		if err != nil {
			inv.Err = err
			p.log.WarnContext(ctx, "expiry invocation failed", "schedule", inv.Schedule.Name,
				"attempt", inv.Attempts, "error", err)
			if inv.Attempts >= p.opts.ExpiryAttempts {
				p.dead = append(p.dead, inv)
			} else {
				inv.NextAttempt = now.Add(p.opts.ExpiryRetryDelay)
				p.retries = append(p.retries, inv)
			}
			continue
		}
		if r.Expired == nil {
			r.Expired = map[task.ExpireOutcome]int{}
		}
		r.Expired[out]++
	}
	return r
}

// fireHorizon is the latest schedule time that fires at now. With
// SchedulerMinutes, a schedule at t (whole seconds, as the contract
// writes) fires at ScheduleTime(t) plus the lateness, which is at or
// before now exactly when t is at or before the whole minute of now less
// the lateness.
func (p *Pipeline) fireHorizon(now time.Time) time.Time {
	if !p.opts.SchedulerMinutes || p.Scheduler == nil {
		return now
	}
	return now.Add(-p.opts.SchedulerLateness).Truncate(time.Minute)
}

// expire is what the expiry function does with a schedule's input: the
// firing core, then the to-do app's target (Firer). A reminder's outcomes
// count in Report.Expired under the expiry's names ("expired" for a
// reminder delivered, "skipped").
func (p *Pipeline) expire(ctx context.Context, s contract.Schedule) (task.ExpireOutcome, error) {
	pl, err := task.DecodeSchedule([]byte(task.EncodePayload(s.Payload)))
	if err != nil {
		return "", err
	}
	if pl.IsReminder() {
		out, err := p.Firer.Remind(ctx, task.RemindRequest{UserID: pl.Key.Partition, TaskID: pl.Key.Sort,
			DueAt: pl.Due, RemindAt: pl.Remind})
		return task.ExpireOutcome(out), err
	}
	return p.Firer.Expire(ctx, task.ExpireRequest{UserID: pl.Key.Partition, TaskID: pl.Key.Sort, DueAt: pl.Due})
}

// Retrying returns the failed expiry invocations that wait for their
// next attempt.
func (p *Pipeline) Retrying() []Invocation { return append([]Invocation(nil), p.retries...) }

// DeadInvocations returns the expiry invocations that used up their
// attempts.
func (p *Pipeline) DeadInvocations() []Invocation { return append([]Invocation(nil), p.dead...) }

// Reconcile sets the clock to now and runs the reconciler once. Its
// rate-limit waits advance the clock.
func (p *Pipeline) Reconcile(ctx context.Context, now time.Time) (reconcile.Result, error) {
	p.Clock.Set(now)
	return p.Reconciler.Run(ctx)
}
