package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/adapters/checkpoint"
	"github.com/unschedule/unschedule/internal/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/domain/cancel"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/metrics"
	"github.com/unschedule/unschedule/internal/tableschema"
)

// FunctionName is the Function dimension of this function's metrics.
const FunctionName = metrics.FunctionStreamProcessor

// MetricMalformedRecords counts stream records that could not be decoded.
const MetricMalformedRecords = metrics.MalformedRecords

// config is what the function reads from its environment.
type config struct {
	QueueURL string
}

// loadConfig reads the environment through getenv.
func loadConfig(getenv func(string) string) (config, error) {
	c := config{QueueURL: getenv("QUEUE_URL")}
	if c.QueueURL == "" {
		return c, errors.New("QUEUE_URL is empty: set it to the cancellation FIFO queue's URL")
	}
	return c, nil
}

type processor interface {
	Process(ctx context.Context, changes []task.Change) []cancel.Failure
}

type counter interface {
	Add(name string, n float64)
	Flush() error
}

type handler struct {
	proc    processor
	metrics counter
	log     *slog.Logger
}

// handle decodes the batch, hands it to the processor and reports the
// records whose message was not enqueued, by sequence number, so the
// stream retries from the lowest of them.
//
// A record that does not decode is logged, counted and skipped: a
// malformed image can never decode, and failing it would block the shard
// until the record ages out. Skipping it costs at most a schedule left
// behind, which fires harmlessly (expiry's conditional write) and which
// the reconciler deletes. The reconciler's checkpoint item and the users'
// notification settings items, which share the table, are skipped by key.
func (h *handler) handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	defer func() {
		if err := h.metrics.Flush(); err != nil {
			h.log.WarnContext(ctx, "writing metrics failed", "error", err)
		}
	}()
	seq := make(map[string]string, len(ev.Records))
	changes := make([]task.Change, 0, len(ev.Records))
	for _, r := range ev.Records {
		userID, taskID := key(r) // read before decoding: the checkpoint and settings items are no tasks
		if checkpoint.IsReserved(userID) || tableschema.IsReservedSortKey(taskID) {
			continue
		}
		c, err := dynamo.DecodeStreamRecord(r)
		if err != nil {
			h.metrics.Add(MetricMalformedRecords, 1)
			h.log.ErrorContext(ctx, "stream record does not decode; skipped", "eventId", r.EventID,
				"sequenceNumber", r.Change.SequenceNumber, "taskId", taskID, "error", err)
			continue
		}
		seq[c.EventID] = r.Change.SequenceNumber
		changes = append(changes, c)
	}
	var resp events.DynamoDBEventResponse
	for _, f := range h.proc.Process(ctx, changes) {
		resp.BatchItemFailures = append(resp.BatchItemFailures,
			events.DynamoDBBatchItemFailure{ItemIdentifier: seq[f.EventID]})
	}
	return resp, nil
}

// key reads the item key of a record ("" for a missing or non-string
// attribute).
func key(r events.DynamoDBEventRecord) (userID, taskID string) {
	str := func(name string) string {
		v, ok := r.Change.Keys[name]
		if !ok || v.DataType() != events.DataTypeString {
			return ""
		}
		return v.String()
	}
	return str(tableschema.PartitionKey), str(tableschema.SortKey)
}
