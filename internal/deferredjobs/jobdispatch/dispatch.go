// Package jobdispatch is the deferred-jobs dispatcher's rule: it is the
// scheduling core's Target (constructs/scheduleonwrite), so the expiry
// function invokes it once the conditional claim of a tenant's item
// succeeded, with the item's payload; it queues that tenant's job for the
// window on the job queue.
package jobdispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/internal/core/logfield"
)

// Queue sends one job.
type Queue interface {
	Send(ctx context.Context, j job.Job) error
}

// Recorder counts metrics (internal/core/metrics.Recorder).
type Recorder interface {
	Add(name string, n float64)
}

// Metrics names the outcomes' metrics.
type Metrics struct {
	Queued, Malformed, QueueFailed string
}

// Dispatcher turns fired items into jobs.
type Dispatcher struct {
	queue   Queue
	log     *slog.Logger
	rec     Recorder
	metrics Metrics
}

// NewDispatcher returns a dispatcher to q.
func NewDispatcher(q Queue, log *slog.Logger, rec Recorder, m Metrics) (*Dispatcher, error) {
	if q == nil || log == nil || rec == nil {
		return nil, errors.New("jobdispatch: queue, logger and recorder are required")
	}
	return &Dispatcher{queue: q, log: log, rec: rec, metrics: m}, nil
}

// Handle queues the job of one fired item. Both failures are returned:
// the expiry function then records no delivery and its firing is retried
// (a payload that is no job fails every retry, and is alarmed on).
func (d *Dispatcher) Handle(ctx context.Context, payload []byte) error {
	j, err := job.FromPayload(payload)
	if err != nil {
		d.rec.Add(d.metrics.Malformed, 1)
		d.log.Error("not a deferred job", "error", err)
		return err
	}
	// The item's key as its writer spells it (job.Item.Key), which
	// unschedule why --logs queries in logfield.Key.
	log := d.log.With(logfield.Key, job.Item{Tenant: j.Tenant, Window: j.Window}.Key().String(), "tenant", j.Tenant, "window", j.Window)
	if err := d.queue.Send(ctx, j); err != nil {
		d.rec.Add(d.metrics.QueueFailed, 1)
		log.Error("queue refused a job", "error", err)
		return fmt.Errorf("queue the job of %s: %w", j.Tenant, err)
	}
	d.rec.Add(d.metrics.Queued, 1)
	log.Info("job queued")
	return nil
}
