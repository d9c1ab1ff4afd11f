// Package pipeline wires the to-do app's pipeline in one process: the
// core's in-process engine (internal/core/inproc, whose package doc
// draws its stages) fed by memory.Store's change feed and firing
// task.Firer into memory.Outbox, with task.Service as the API's use
// cases. Tests, `make dev` and the simulation drive it.
package pipeline

import (
	"context"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// Options configure a Pipeline. The zero value works.
type Options struct {
	inproc.Options
	// IDs makes task ids and tokens. Default: task.RandomIDs.
	IDs task.IDs
	// WebURL is the web app's URL used in notification links. Default: "".
	WebURL string
	// Store wraps the store the service and the firer write through (a
	// fault-injection harness's faults). Default: Store itself.
	Store func(task.Store) task.Store
	// Notifier publishes the notifications. Default: Outbox.
	Notifier task.Notifier
	// Wire adjusts the wiring before the engine is wired: a harness's own
	// enqueuer, timer port (which the service then arms through too),
	// firing or reconciler view. Default: none.
	Wire func(p *Pipeline, w inproc.Wiring) inproc.Wiring
}

// Pipeline is the to-do app's pipeline in one process: the core's engine
// (its stages, exposed for tests and fault injection) and the to-do
// app's store, outbox, service and firer.
type Pipeline struct {
	*inproc.Engine
	Store   *memory.Store
	Outbox  *memory.Outbox
	Service *task.Service
	// Firer is what the expiry function and the reconciler run: the
	// firing core over Store, delivering to the to-do app's target
	// (task.NotifyTarget on Outbox, as the notify function in AWS).
	Firer *task.Firer
}

// New builds the to-do app's pipeline on empty memory adapters.
func New(opts Options) (*Pipeline, error) {
	opts.Options = opts.Options.WithDefaults()
	e := inproc.NewEngine(opts.Options)
	if e.Scheduler != nil {
		e.Scheduler.ListPrefix = task.ScheduleNamePrefix
	}
	p := &Pipeline{Engine: e, Store: memory.NewStore(), Outbox: &memory.Outbox{}}
	var store task.Store = p.Store
	if opts.Store != nil {
		store = opts.Store(store)
	}
	var notifier task.Notifier = p.Outbox
	if opts.Notifier != nil {
		notifier = opts.Notifier
	}
	var err error
	if p.Firer, err = task.InProcess(task.InProcessConfig{Store: store, Notifier: notifier, Clock: e.Clock,
		WebURL: opts.WebURL, Log: opts.Log}); err != nil {
		return nil, err
	}
	w := inproc.Wiring{Schema: task.Schema, Feed: p.Store, Fire: p.expire,
		Items: task.NewReconcileView(p.Store, p.Store), Firer: p.Firer}
	if opts.Wire != nil {
		w = opts.Wire(p, w)
	}
	var arm timer.Timer = e.Timer
	if w.Timer != nil {
		arm = w.Timer
	}
	if p.Service, err = task.NewService(task.Deps{Store: store, Timer: arm,
		Clock: e.Clock, IDs: opts.IDs, Log: opts.Log}); err != nil {
		return nil, err
	}
	if err := e.Wire(w); err != nil {
		return nil, err
	}
	return p, nil
}

// expire is what the expiry function does with a schedule's input: the
// firing core, then the to-do app's target (Firer).
func (p *Pipeline) expire(ctx context.Context, s contract.Schedule) (string, error) {
	_, out, err := Expire(ctx, p.Firer, p.Firer, s)
	return out, err
}

// Expire is what the expiry function does with a schedule's input:
// the reminder it names (r), or the expiry (e). A reminder's outcomes
// count under the expiry's names ("expired" for a reminder delivered,
// "skipped"). id is the task's, "" when the input is not readable.
func Expire(ctx context.Context, e task.Expirer, r *task.Firer, s contract.Schedule) (id, out string, err error) {
	pl, err := task.DecodeSchedule([]byte(task.EncodePayload(s.Payload)))
	if err != nil {
		return "", "", err
	}
	if pl.IsReminder() {
		o, err := r.Remind(ctx, task.RemindRequest{UserID: pl.Key.Partition, TaskID: pl.Key.Sort,
			DueAt: pl.Due, RemindAt: pl.Remind})
		return pl.Key.Sort, string(o), err
	}
	o, err := e.Expire(ctx, task.ExpireRequest{UserID: pl.Key.Partition, TaskID: pl.Key.Sort, DueAt: pl.Due})
	return pl.Key.Sort, string(o), err
}
