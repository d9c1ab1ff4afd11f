// Package deferredjobs is the dispatcher's rule: a TTL deletion of a
// marker becomes one job message; anything else on the stream is no job.
package deferredjobs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/deferredjobs"
)

// TTL deletions on a DynamoDB stream are REMOVE records whose userIdentity
// is {"type": "Service", "principalId": "dynamodb.amazonaws.com"}; a
// delete by a user or an application has no userIdentity.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html
// Lambda filters on those fields of the record (the pattern's keys are
// the record's top-level fields: eventName, userIdentity, dynamodb):
// https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html
// The DynamoDB page above shows this very filter on userIdentity for TTL
// archiving, while the Lambda page notes that DynamoDB mappings filter on
// the "dynamodb" key only; should a deployment drop or refuse the
// userIdentity part, IsTTLDelete below still keeps a user's delete from
// becoming a job. In a global table only the region that ran TTL sets
// userIdentity, so the marker table is a single-region table.
const (
	TTLIdentityType      = "Service"
	TTLIdentityPrincipal = "dynamodb.amazonaws.com"
)

// TTLDeleteFilter is the event source mapping's filter pattern: TTL
// deletions only. The construct synthesizes exactly this pattern (a synth
// test pins it) and the dynalite test evaluates it.
func TTLDeleteFilter() map[string]any {
	return map[string]any{
		"eventName": []any{"REMOVE"},
		"userIdentity": map[string]any{
			"type":        []any{TTLIdentityType},
			"principalId": []any{TTLIdentityPrincipal},
		},
	}
}

// TTLDeleteFilterJSON is TTLDeleteFilter as the JSON string Lambda stores.
func TTLDeleteFilterJSON() string {
	b, _ := json.Marshal(TTLDeleteFilter())
	return string(b)
}

// IsTTLDelete is the same rule in Go: the dispatcher re-checks it, so a
// mapping without the filter still queues no job for a user's delete.
func IsTTLDelete(r events.DynamoDBEventRecord) bool {
	return r.EventName == string(events.DynamoDBOperationTypeRemove) && r.UserIdentity != nil &&
		r.UserIdentity.Type == TTLIdentityType && r.UserIdentity.PrincipalID == TTLIdentityPrincipal
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
