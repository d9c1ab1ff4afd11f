package bench

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/pipeline"
)

// Path is a task lifecycle whose AWS calls are counted.
type Path string

// The lifecycles priced per million. Each starts with a POST /tasks.
const (
	// PathExpire: the task is left alone and expires at its deadline; its
	// owner gets one email.
	PathExpire Path = "expire"
	// PathCancel: the task is completed before its deadline; its schedule
	// is deleted and it never fires.
	PathCancel Path = "cancel"
	// PathReschedule: the deadline is moved once (PATCH dueAt), the
	// schedule follows, and the task expires at the new deadline.
	PathReschedule Path = "reschedule"
)

// Paths lists the lifecycles in report order.
var Paths = []Path{PathExpire, PathCancel, PathReschedule}

// Usage is what one lifecycle makes AWS do, counted on the in-process
// pipeline (internal/tooling/pipeline: the real handler code on the memory
// adapters), on one timer (the timer).
type Usage struct {
	// APIRequests: REST API calls (API Gateway requests, and invocations
	// of the api function).
	APIRequests int
	// Invocations of each function, by its folder under lambdas/.
	Invocations map[string]int
	// DynamoDB requests by store operation; each is one request unit
	// (items are well under 1 KB; a failed conditional write still
	// consumes its write).
	DynamoWrites, DynamoReads map[string]int
	// SchedulerCalls: EventBridge Scheduler API calls by operation (not
	// billed; counted for the record).
	SchedulerCalls map[string]int
	// SchedulerInvocations: schedules that fired (billed).
	SchedulerInvocations int
	// Step Functions timer: executions started (StartExecution that
	// starts one; an update stops one and starts one), stopped
	// (StopExecution, not billed), and the state transitions they make
	// (billed): the Wait state of every execution started, and the
	// LambdaInvoke state of every execution whose Wait ended.
	Executions, ExecutionStops, StateTransitions int
	// TTL timer: marker writes (PutItem on arm and move, DeleteItem on
	// cancel; one write unit each, counted in DynamoWrites too) and the
	// TTL deletions the stream delivers to the expiry function (the
	// deletion itself is free, and so are a Lambda trigger's stream
	// reads: StreamReads is counted, priced at zero).
	MarkerWrites, StreamReads int
	// SQSRequests: FIFO queue requests: SendMessageBatch from the stream
	// processor, and the worker's event source mapping's ReceiveMessage
	// and DeleteMessageBatch for each batch it delivered.
	SQSRequests int
	// SNSPublishes and the email deliveries they make (one subscription
	// per user matches its filter policy).
	SNSPublishes, EmailDeliveries int
	// AppLogBytes: JSON log bytes the handler code wrote (CloudWatch Logs
	// ingestion; platform log lines are estimated separately).
	AppLogBytes int
}

// Total returns the sum of a by-operation count (in key order, so a
// float sum is the same every time).
func Total[V int | float64](m map[string]V) V {
	var n V
	for _, k := range Keys(m) {
		n += m[k]
	}
	return n
}

// Keys returns m's keys, sorted.
func Keys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// storeReads are the memory.Store operations that only read; any other
// operation counts as a write (an operation added later is priced as the
// dearer kind until it is listed here).
var storeReads = map[string]bool{"Get": true, "List": true, "ListPending": true, "CountPending": true,
	"CountUserPending": true}

type countingWriter struct {
	mu sync.Mutex
	n  int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.n += len(p)
	w.mu.Unlock()
	return len(p), nil
}

// Timers lists the timers priced, in report order.
var Timers = []timerspec.Name{timerspec.EventBridgeScheduler, timerspec.StepFunctions, timerspec.TTL}

// CountLifecycle runs one lifecycle of path through the whole in-process
// pipeline on the timer timer, one task at a time (so every
// stream and queue batch holds one record: the upper bound for
// batching), and counts its AWS usage. The reconciler is not run: it is a
// fixed cost per period, not per task.
func CountLifecycle(ctx context.Context, path Path, timer timerspec.Name) (Usage, error) {
	u := Usage{Invocations: map[string]int{}, DynamoWrites: map[string]int{}, DynamoReads: map[string]int{}}
	logs := &countingWriter{}
	p, err := pipeline.New(pipeline.Options{Options: inproc.Options{Timer: timer, Log: slog.New(slog.NewJSONHandler(logs, nil))}})
	if err != nil {
		return u, err
	}
	p.Store.Fail = func(op string) error {
		if storeReads[op] {
			u.DynamoReads[op]++
		} else {
			u.DynamoWrites[op]++
		}
		return nil
	}
	switch l := p.Timer.(type) {
	case *inmem.Executions:
		l.Fail = func(op, _ string) error {
			switch op {
			case "Arm":
				u.Executions++
			case "Move":
				u.Executions++
				u.ExecutionStops++
			case "Disarm":
				u.ExecutionStops++
			}
			return nil
		}
	case *inmem.TTLMarkers:
		l.Fail = func(op, _ string) error {
			if op == "Arm" || op == "Move" || op == "Disarm" {
				u.MarkerWrites++
				u.DynamoWrites["marker "+op]++
			}
			return nil
		}
	}
	sent := 0
	p.Queue.Fail = func(cancel.Message) error { sent++; return nil }
	t0 := p.Clock.Now()
	due := t0.Add(time.Hour)
	user := "user-1"
	// No reminder: the cost model prices the deadline's lifecycle. A
	// reminder (the API's default is 1 h) adds, when its time is ahead,
	// a CreateSchedule, and at its time an invocation, two writes and a
	// publish, or a DeleteSchedule when the task ends before it.
	tk, err := p.Service.Create(ctx, user, task.NewTask{Title: "water the plants", DueAt: due, Reminder: task.ReminderNone})
	if err != nil {
		return u, fmt.Errorf("create: %w", err)
	}
	u.APIRequests++
	step := func(at time.Time) error {
		for i := 0; i < inproc.MaxSteps; i++ {
			sentBefore := sent
			r := p.Step(ctx, at)
			if sent > sentBefore {
				u.SQSRequests++ // one SendMessageBatch per processor invocation
			}
			if r.Delivered > 0 {
				u.Invocations["cancelworker"]++
				u.SQSRequests += 2 // ReceiveMessage and DeleteMessageBatch
			}
			// The to-do app's firing function, which runs its target
			// inside it (lambdas/todofire).
			u.Invocations["todofire"] += r.Fired
			switch timer {
			case timerspec.StepFunctions:
				u.StateTransitions += r.Fired // the LambdaInvoke state
			case timerspec.TTL:
				u.StreamReads += r.Fired
			default:
				u.SchedulerInvocations += r.Fired
			}
			if !r.Moved() {
				return nil
			}
		}
		return inproc.ErrNotSettled
	}
	if err := step(t0); err != nil {
		return u, err
	}
	end := due
	switch path {
	case PathExpire:
	case PathCancel:
		at := t0.Add(10 * time.Minute)
		p.Clock.Set(at)
		if _, err := p.Service.Update(ctx, user, tk.TaskID, task.Patch{Complete: true}); err != nil {
			return u, fmt.Errorf("complete: %w", err)
		}
		u.APIRequests++
		if err := step(at); err != nil {
			return u, err
		}
	case PathReschedule:
		at := t0.Add(10 * time.Minute)
		p.Clock.Set(at)
		end = due.Add(time.Hour)
		if _, err := p.Service.Update(ctx, user, tk.TaskID, task.Patch{DueAt: &end}); err != nil {
			return u, fmt.Errorf("reschedule: %w", err)
		}
		u.APIRequests++
		if err := step(at); err != nil {
			return u, err
		}
	default:
		return u, fmt.Errorf("unknown path %q", path)
	}
	if err := step(end.Add(time.Second)); err != nil {
		return u, err
	}
	u.Invocations["api"] = u.APIRequests
	u.StateTransitions += u.Executions // the Wait state of each execution
	// The stream mapping's filters (constructs/cancellation.StreamFilters)
	// pass the records whose image is armed: an INSERT's new image, a
	// MODIFY's either image, a REMOVE's old one. Each passing record
	// invokes the processor; filtered records are free.
	changes, _ := p.Store.Changes(0)
	for _, c := range changes {
		if passesStreamFilter(c) {
			u.Invocations["streamprocessor"]++
		}
	}
	u.SchedulerCalls = map[string]int{}
	if p.Scheduler != nil {
		for op, n := range p.Scheduler.Calls {
			u.SchedulerCalls[op] = n
		}
	}
	u.SNSPublishes = len(p.Outbox.Sent())
	u.EmailDeliveries = u.SNSPublishes
	u.AppLogBytes = logs.n
	return u, nil
}

// passesStreamFilter: whether the cancellation stream mapping's filters
// let c through (its images' state is one of the schema's armed states).
func passesStreamFilter(c changefeed.Change) bool {
	armed := func(it *contract.Item) bool {
		return it != nil && slices.Contains(task.Schema.ArmedStates, it.State)
	}
	switch c.Kind {
	case changefeed.Insert:
		return armed(c.New)
	case changefeed.Modify:
		return armed(c.Old) || armed(c.New)
	default:
		return armed(c.Old)
	}
}
