// Package pipeline wires the to-do app's pipeline in one process, on the
// core's in-process engine (internal/core/inproc) and the to-do app's
// memory adapters, with the real code at every stage:
//
//	task.Service (the API's use cases)
//	  -> memory.Store change feed (the DynamoDB stream)
//	  -> cancel.Processor, inproc.Queue, cancel.Worker (the core)
//	  -> the timer's stand-in (inmem.NewTimer)
//	  -> task.Firer (the expiry function and the to-do app's target)
//	  -> memory.Outbox (SNS)
//	reconcile.Reconciler, run on demand.
//
// Tests, `make dev` and the simulation drive it with Step and Drain.
package pipeline

import (
	"context"
	"log/slog"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/inproc"
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
	e := inproc.NewEngine(opts.Options)
	if e.Scheduler != nil {
		e.Scheduler.ListPrefix = task.ScheduleNamePrefix
	}
	p := &Pipeline{Engine: e, Store: memory.NewStore(), Outbox: &memory.Outbox{}}
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	var err error
	if p.Service, err = task.NewService(task.Deps{Store: p.Store, Scheduler: e.Timer,
		Clock: e.Clock, IDs: opts.IDs, Log: log}); err != nil {
		return nil, err
	}
	if p.Firer, err = task.InProcess(task.InProcessConfig{Store: p.Store, Notifier: p.Outbox, Clock: e.Clock,
		WebURL: opts.WebURL, Log: log}); err != nil {
		return nil, err
	}
	if err := e.Wire(inproc.Wiring{Schema: task.Schema, Feed: p.Store, Fire: p.expire,
		Items: task.NewReconcileView(p.Store, p.Store), Firer: p.Firer}); err != nil {
		return nil, err
	}
	return p, nil
}

// expire is what the expiry function does with a schedule's input: the
// firing core, then the to-do app's target (Firer). A reminder's outcomes
// count under the expiry's names ("expired" for a reminder delivered,
// "skipped").
func (p *Pipeline) expire(ctx context.Context, s contract.Schedule) (string, error) {
	pl, err := task.DecodeSchedule([]byte(task.EncodePayload(s.Payload)))
	if err != nil {
		return "", err
	}
	if pl.IsReminder() {
		out, err := p.Firer.Remind(ctx, task.RemindRequest{UserID: pl.Key.Partition, TaskID: pl.Key.Sort,
			DueAt: pl.Due, RemindAt: pl.Remind})
		return string(out), err
	}
	out, err := p.Firer.Expire(ctx, task.ExpireRequest{UserID: pl.Key.Partition, TaskID: pl.Key.Sort, DueAt: pl.Due})
	return string(out), err
}
