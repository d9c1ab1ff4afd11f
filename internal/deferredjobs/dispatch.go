// Package deferredjobs is the dispatcher's rule: a TTL deletion of a
// marker becomes one job message; anything else on the stream is no job.
package deferredjobs

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/deferredjobs"
)

// IsTTLDelete is deferredjobs.TTLDeleteFilter's rule in Go: the dispatcher re-checks it, so a
// mapping without the filter still queues no job for a user's delete.
func IsTTLDelete(r events.DynamoDBEventRecord) bool {
	return r.EventName == string(events.DynamoDBOperationTypeRemove) && r.UserIdentity != nil &&
		r.UserIdentity.Type == deferredjobs.TTLIdentityType && r.UserIdentity.PrincipalID == deferredjobs.TTLIdentityPrincipal
}

// Queue sends one job.
type Queue interface {
	Send(ctx context.Context, j deferredjobs.Job) error
}

// Recorder counts metrics (internal/metrics.Recorder).
type Recorder interface {
	Add(name string, n float64)
}

// Metric names of the outcomes.
type Metrics struct {
	Queued, Malformed, QueueFailed, Ignored string
}

// Dispatcher turns TTL deletions into jobs.
type Dispatcher struct {
	queue   Queue
	log     *slog.Logger
	rec     Recorder
	metrics Metrics
}

// NewDispatcher returns a dispatcher to q.
func NewDispatcher(q Queue, log *slog.Logger, rec Recorder, m Metrics) (*Dispatcher, error) {
	if q == nil || log == nil || rec == nil {
		return nil, errors.New("deferredjobs: queue, logger and recorder are required")
	}
	return &Dispatcher{queue: q, log: log, rec: rec, metrics: m}, nil
}

// Handle queues one job per TTL-deleted marker. A record the queue
// refused is reported as a batch item failure (retried); a record that
// is no marker is skipped and counted.
func (d *Dispatcher) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	for _, r := range ev.Records {
		if !IsTTLDelete(r) {
			d.rec.Add(d.metrics.Ignored, 1)
			continue
		}
		keys := r.Change.Keys
		job, err := deferredjobs.JobFromKeys(str(keys[deferredjobs.TenantAttr]), str(keys[deferredjobs.WindowAttr]))
		if err != nil {
			d.rec.Add(d.metrics.Malformed, 1)
			d.log.Error("not a marker", "eventID", r.EventID, "error", err)
			continue
		}
		if err := d.queue.Send(ctx, job); err != nil {
			d.rec.Add(d.metrics.QueueFailed, 1)
			d.log.Error("queue refused a job", "tenant", job.Tenant, "error", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
			continue
		}
		d.rec.Add(d.metrics.Queued, 1)
	}
	return resp, nil
}

func str(v events.DynamoDBAttributeValue) string {
	if v.IsNull() || v.DataType() != events.DataTypeString {
		return ""
	}
	return v.String()
}
