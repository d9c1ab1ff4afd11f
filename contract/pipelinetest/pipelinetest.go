// Package pipelinetest runs the whole schedule-on-write pipeline in one
// process, on a fake clock, with an adopter's own schema and target, so
// that the adopter's tests can write items as their writer does and see
// when, and how often, their target runs:
//
//	items -> change feed (the table's stream) -> stream processor ->
//	FIFO queue -> cancellation worker -> timer (EventBridge Scheduler,
//	Step Functions or TTL) -> firing (the conditional claim) ->
//	the target
//
// Every stage is the library's own code (the same as the deployed
// functions run), on in-memory stand-ins of DynamoDB, SQS and the timer.
// Nothing runs until the clock moves: Put, Update and Delete run the stream path
// at the current instant, and Advance moves the clock and delivers what
// comes due on the way, with each timer's documented lateness.
package pipelinetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// Timer names the timer that fires items at their due time, one per
// timer of constructs/scheduleonwrite: Scheduler (NewSchedulerTimer),
// StepFunctions (NewStepFunctionsTimer) and TTL (NewTTLTimer). Timers
// lists them all.
type Timer string

// String is the timer's name, as UNSCHEDULE_TIMER spells it.
func (t Timer) String() string { return string(t) }

// The timers.
const (
	// Scheduler is EventBridge Scheduler: a schedule fires on the whole
	// minute at or after the due time, Config.Late into that minute.
	Scheduler Timer = Timer(timerspec.EventBridgeScheduler)
	// StepFunctions is a Standard execution per item: it fires at the
	// due time, to the second.
	StepFunctions Timer = Timer(timerspec.StepFunctions)
	// TTL is a marker item's TTL deletion: it fires Config.Late after the
	// due time.
	TTL Timer = Timer(timerspec.TTL)
)

// Timers lists the timers, for a test that runs on each.
var Timers = []Timer{Scheduler, StepFunctions, TTL}

// Target is the adopter's code that runs at an item's due time: the
// firing calls it only after its claim succeeded, and records the
// delivery only after it returned nil. An error makes the firing retry.
type Target func(ctx context.Context, p contract.Payload) error

// LambdaTarget adapts your target function's Lambda handler to a Target:
// it hands h the payload as the firing function invokes a target
// function, the JSON of contract.Schema.EncodePayload, such as
// {"tenantId":"acme","jobId":"j1","runAt":"2030-01-01T01:00:00Z"}, decoded
// into h's input as the Lambda runtime does (lambda.NewHandler). h has any
// shape lambda.Start accepts: func(), func(ctx), func(in), func(ctx, in),
// each returning nothing, error, or (out, error); in and out are any
// JSON types (a struct of your own, json.RawMessage, map[string]string).
// The firing fails, and is retried, when h returns an error. A handler of
// another shape panics here, with what to change.
func LambdaTarget(s contract.Schema, h any) Target {
	if err := checkHandler(h); err != nil {
		panic(fmt.Sprintf("pipelinetest: LambdaTarget: %v: pass a handler lambda.Start accepts, "+
			"such as func(ctx context.Context, in T) (out U, err error) or func(ctx context.Context, in T) error", err))
	}
	s = s.WithDefaults()
	handler := lambda.NewHandler(h)
	return func(ctx context.Context, p contract.Payload) error {
		_, err := handler.Invoke(ctx, []byte(s.EncodePayload(p)))
		return err
	}
}

// checkHandler applies lambda.NewHandler's rules to h's shape, which
// NewHandler itself reports only when the handler is invoked: a function
// of at most two arguments (of two, the first a context.Context), that
// returns at most two values (of two, the second an error; of one, an
// error).
func checkHandler(h any) error {
	if h == nil {
		return errors.New("the handler is nil")
	}
	if _, ok := h.(lambda.Handler); ok {
		return nil
	}
	t := reflect.TypeOf(h)
	if t.Kind() != reflect.Func {
		return fmt.Errorf("the handler is a %s, not a function", t)
	}
	ctxType, errType := reflect.TypeFor[context.Context](), reflect.TypeFor[error]()
	isCtx := func(a reflect.Type) bool {
		return a.Kind() == reflect.Interface && a.Implements(ctxType) && ctxType.Implements(a)
	}
	switch {
	case t.NumIn() > 2:
		return fmt.Errorf("the handler %s takes %d arguments, at most 2", t, t.NumIn())
	case t.NumIn() == 2 && !isCtx(t.In(0)):
		return fmt.Errorf("the handler %s takes two arguments, but the first is not a context.Context", t)
	case t.NumIn() == 1 && t.In(0).Kind() == reflect.Interface && t.In(0).NumMethod() > 0 && !isCtx(t.In(0)):
		return fmt.Errorf("the handler %s takes an interface that is not context.Context", t)
	case t.NumOut() > 2:
		return fmt.Errorf("the handler %s returns %d values, at most 2", t, t.NumOut())
	case t.NumOut() == 2 && !t.Out(1).Implements(errType):
		return fmt.Errorf("the handler %s returns two values, but the second is not an error", t)
	case t.NumOut() == 1 && !t.Out(0).Implements(errType):
		return fmt.Errorf("the handler %s returns one value, which is not an error", t)
	}
	return nil
}

// Config configures a Pipeline.
type Config struct {
	// Schema is the item contract, as the constructs get it; unset fields
	// take their defaults (contract.Schema.WithDefaults). Required: at
	// least the key attributes, the due attribute and the states.
	Schema contract.Schema
	// Target runs at each item's due time. Required.
	Target Target
	// Timer fires the items. Default: Scheduler.
	Timer Timer
	// Start is the fake clock's first reading. Default: 2030-01-01
	// 00:00:00 UTC.
	Start time.Time
	// Late is how late the timer fires on top of what it always adds:
	// with Scheduler, how far into its minute a schedule fires (the
	// scheduler's "60 second precision": 0 to 59 s); with TTL, how long
	// after the due time the marker is deleted (AWS: "typically within
	// two days"). StepFunctions fires to the second and takes none.
	// Default: 0, the earliest the timer fires.
	Late time.Duration
}

// Call is one run of the target.
type Call struct {
	// At is the fake clock's reading when the target ran.
	At time.Time
	// Payload is what the target got.
	Payload contract.Payload
	// Err is what the target returned.
	Err error
}

// TB is the part of testing.TB a Pipeline uses: *testing.T and
// *testing.B satisfy it.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Pipeline is the pipeline of one schema and target, on a fake clock.
// It is not safe for concurrent use.
type Pipeline struct {
	t     TB
	p     *inproc.Pipeline
	late  time.Duration
	mu    sync.Mutex
	calls []Call
	ctx   context.Context
}

// New builds an empty table, queue and timer for c. A bad Config fails
// the test with what to fix.
func New(t TB, c Config) *Pipeline {
	t.Helper()
	if c.Target == nil {
		t.Fatalf("pipelinetest: Config.Target is nil: set it to the function your target runs")
	}
	s := c.Schema.WithDefaults()
	if err := s.Validate(); err != nil {
		t.Fatalf("pipelinetest: Config.Schema: %v", err)
	}
	l, err := timerkind.Parse(string(c.Timer))
	if err != nil {
		t.Fatalf("pipelinetest: Config.Timer %q is unknown: use pipelinetest.Scheduler, StepFunctions, TTL or another registered timer", c.Timer)
	}
	if c.Late < 0 {
		t.Fatalf("pipelinetest: Config.Late is %s: use 0 or more", c.Late)
	}
	if k := timerkind.Must(l); k.Lateness != nil {
		if err := k.Lateness(c.Late); err != nil {
			t.Fatalf("pipelinetest: Config.Late is %s, but %v", c.Late, err)
		}
	}
	p := &Pipeline{t: t, late: c.Late, ctx: context.Background()}
	target := fire.DeliverFunc(func(ctx context.Context, pl contract.Payload) error {
		err := c.Target(ctx, pl)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.calls = append(p.calls, Call{At: p.p.Clock.Now(), Payload: pl, Err: err})
		return err
	})
	p.p, err = inproc.NewForSchema(s, target, inproc.Options{Start: c.Start, Timer: l,
		SchedulerMinutes: true, SchedulerLateness: c.Late, TTLDelay: func() time.Duration { return c.Late },
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("pipelinetest: %v", err)
	}
	return p
}

// Now is the fake clock's reading.
func (p *Pipeline) Now() time.Time { return p.p.Clock.Now() }

// Put writes an item as a plain PutItem would (every attribute a string,
// in the schema's names), then runs the stream path at the current
// instant: an armed item gets its timer, a moved due time moves it, and
// leaving the armed states cancels it.
func (p *Pipeline) Put(item map[string]string) {
	p.t.Helper()
	if err := p.p.Items.Put(item); err != nil {
		p.t.Fatalf("pipelinetest: %v", err)
	}
	p.drain(p.Now())
}

// Update sets and removes attributes of an item as an UpdateItem without
// a condition would ("SET a = :v REMOVE b"; every value a string), then
// runs the stream path at the current instant, as Put does. Like
// DynamoDB, it creates an item that does not exist (with its key and the
// set attributes), and fails the test for what DynamoDB refuses: a key
// attribute in set or remove, an empty attribute name, and an attribute
// both set and removed.
func (p *Pipeline) Update(k contract.Key, set map[string]string, remove ...string) {
	p.t.Helper()
	if err := p.p.Items.Update(k, set, remove...); err != nil {
		p.t.Fatalf("pipelinetest: Update(%s): %v", k, err)
	}
	p.drain(p.Now())
}

// Delete deletes an item as a plain DeleteItem would, then runs the
// stream path at the current instant: its timer is cancelled.
func (p *Pipeline) Delete(k contract.Key) {
	p.t.Helper()
	p.p.Items.Delete(k)
	p.drain(p.Now())
}

// Item reads an item back (nil and false when there is none), with the
// attributes the firing wrote: the fired state, FiredAtAttr, ClaimAtAttr,
// and DeliveredAtAttr once the target succeeded.
func (p *Pipeline) Item(k contract.Key) (map[string]string, bool) {
	return p.p.Items.Attrs(k)
}

// LoseTimer removes what the timer holds for the item (its schedule,
// execution or TTL marker) without telling the pipeline, as a fault or a
// hand in the console would: the item stays armed, and only the
// reconciler (Reconcile) brings its firing back.
func (p *Pipeline) LoseTimer(k contract.Key) {
	p.t.Helper()
	attrs, ok := p.p.Items.Attrs(k)
	if !ok {
		p.t.Fatalf("pipelinetest: LoseTimer(%s): no such item", k)
	}
	it, err := p.p.Fire.Schema().ItemFrom(attrs)
	if err != nil {
		p.t.Fatalf("pipelinetest: LoseTimer(%s): %v", k, err)
	}
	s := p.p.Fire.Schema().ScheduleFor(it)
	if err := p.p.Timer.Disarm(p.ctx, s.Name, s.At); err != nil {
		p.t.Fatalf("pipelinetest: LoseTimer(%s): %v", k, err)
	}
}

// Reconcile runs one pass of the core's reconciler, as its recurring job
// does in AWS: an armed item with no timer gets one, what the timer holds
// for a gone or finished item is removed, and an item overdue by more
// than the grace period (5 minutes) fires now, through the same claim and
// target.
func (p *Pipeline) Reconcile() {
	p.t.Helper()
	if _, err := p.p.Reconciler.Run(p.ctx); err != nil {
		p.t.Fatalf("pipelinetest: reconcile: %v", err)
	}
	p.drain(p.Now())
}

// Advance moves the clock forward by d, stopping at every instant on the
// way where something comes due, and runs what does: timers fire, the
// target runs, a failed firing is retried a minute after each failure,
// twice (Lambda retries the firing function twice), then given up
// (Failed).
func (p *Pipeline) Advance(d time.Duration) {
	p.t.Helper()
	if d < 0 {
		p.t.Fatalf("pipelinetest: Advance(%s): the clock does not go back", d)
	}
	end := p.Now().Add(d)
	for now := p.Now(); ; now = p.next(now, end) {
		p.drain(now)
		if !now.Before(end) {
			return
		}
	}
}

// next is the next instant after now at which the pipeline may move: a
// second later while a queue message waits to be received again; the
// next retry of a failed firing; the earliest a timer may fire (its due
// time plus the lateness; the Scheduler's minute comes a second at a
// time), or end.
func (p *Pipeline) next(now, end time.Time) time.Time {
	soon := now.Add(time.Second)
	if p.p.Queue.Len() > 0 {
		return earliest(soon, end)
	}
	next := end
	for _, r := range p.p.Retrying() {
		next = earliest(next, r.NextAttempt)
	}
	for _, s := range p.p.Timer.All() {
		next = earliest(next, s.At.Add(p.late))
	}
	if next.Before(soon) {
		next = soon
	}
	return earliest(next, end)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func (p *Pipeline) drain(now time.Time) {
	p.t.Helper()
	if _, err := p.p.Drain(p.ctx, now); err != nil {
		p.t.Fatalf("pipelinetest: %v", err)
	}
}

// Calls returns every run of the target so far, failed ones included,
// in order.
func (p *Pipeline) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// Delivered returns the payloads of the target's successful runs, in
// order.
func (p *Pipeline) Delivered() []contract.Payload {
	var out []contract.Payload
	for _, c := range p.Calls() {
		if c.Err == nil {
			out = append(out, c.Payload)
		}
	}
	return out
}

// Failed returns the payloads whose firing failed on every attempt: in
// AWS, the events in the firing function's failure queue.
func (p *Pipeline) Failed() []contract.Payload {
	var out []contract.Payload
	for _, inv := range p.p.DeadInvocations() {
		out = append(out, inv.Schedule.Payload)
	}
	return out
}
