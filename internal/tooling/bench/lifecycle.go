package bench

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
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

// The lifecycles priced per million, each from a POST /tasks: the task
// expires at its deadline; is completed before it; has its deadline moved
// once, then expires.
const (
	PathExpire     Path = "expire"
	PathCancel     Path = "cancel"
	PathReschedule Path = "reschedule"
)

// Paths lists the lifecycles in report order.
var Paths = []Path{PathExpire, PathCancel, PathReschedule}

// Usage is what one lifecycle makes AWS do on one timer, counted on the
// in-process pipeline (internal/tooling/pipeline). DynamoDB requests are
// by store operation, one request unit each; SchedulerCalls (free) by
// operation. Step Functions: executions started (a move stops one and
// starts one), stopped, and the billed state transitions (each started
// execution's Wait, each fired one's LambdaInvoke). TTL: marker writes
// (in DynamoWrites too) and the free StreamReads of the TTL deletions.
// docs/PERFORMANCE.md states what the counts assume.
type Usage struct {
	APIRequests int
	// Invocations of each function, by its folder under lambdas/.
	Invocations                                  map[string]int
	DynamoWrites, DynamoReads                    map[string]int
	SchedulerCalls                               map[string]int
	SchedulerInvocations                         int
	Executions, ExecutionStops, StateTransitions int
	MarkerWrites, StreamReads                    int
	// SQSRequests: the processor's SendMessageBatch, and per batch the
	// worker mapping's ReceiveMessage and DeleteMessageBatch.
	SQSRequests                   int
	SNSPublishes, EmailDeliveries int
	// AppLogBytes: the JSON log bytes the handler code wrote.
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
func Keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

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

// CountLifecycle runs one lifecycle of path through the in-process
// pipeline on timer, one task at a time (every batch holds one record: the
// upper bound), and counts its AWS usage; the reconciler is not run.
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
	// No reminder: the cost model prices the deadline's lifecycle.
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
			u.Invocations["todofire"] += r.Fired // it runs its target inside
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
	if path != PathExpire {
		patch := task.Patch{Complete: true}
		switch path {
		case PathCancel:
		case PathReschedule:
			end = due.Add(time.Hour)
			patch = task.Patch{DueAt: &end}
		default:
			return u, fmt.Errorf("unknown path %q", path)
		}
		at := t0.Add(10 * time.Minute)
		p.Clock.Set(at)
		if _, err := p.Service.Update(ctx, user, tk.TaskID, patch); err != nil {
			return u, fmt.Errorf("%s: %w", path, err)
		}
		u.APIRequests++
		if err := step(at); err != nil {
			return u, err
		}
	}
	if err := step(end.Add(time.Second)); err != nil {
		return u, err
	}
	u.Invocations["api"] = u.APIRequests
	u.StateTransitions += u.Executions // the Wait state of each execution
	// Each record the stream mapping's filters pass invokes the processor.
	changes, _ := p.Store.Changes(0)
	for _, c := range changes {
		if passesStreamFilter(c) {
			u.Invocations["streamprocessor"]++
		}
	}
	u.SchedulerCalls = map[string]int{}
	if p.Scheduler != nil {
		maps.Copy(u.SchedulerCalls, p.Scheduler.Calls)
	}
	u.SNSPublishes = len(p.Outbox.Sent())
	u.EmailDeliveries = u.SNSPublishes
	u.AppLogBytes = logs.n
	return u, nil
}

// passesStreamFilter: whether the cancellation stream mapping's filters
// (constructs/cancellation.StreamFilters) let c through: an INSERT's new
// image, a MODIFY's either image or a REMOVE's old one is armed.
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
