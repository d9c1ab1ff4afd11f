package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/checkpoint"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

// FunctionName is the Function dimension of this function's metrics.
const FunctionName = metrics.FunctionStreamProcessor

// MetricMalformedRecords counts stream records that could not be decoded.
const MetricMalformedRecords = metrics.MalformedRecords

// config is what the function reads from its environment.
type config struct {
	QueueURL string
	// Schema names the table's attributes (contract.EnvVar; the to-do
	// app's when unset).
	Schema contract.Schema
}

// loadConfig reads the environment through getenv.
func loadConfig(getenv func(string) string) (config, error) {
	e := lambdaenv.New(getenv)
	c := config{QueueURL: e.Require(envvars.QueueURL), Schema: e.Schema()}
	if err := e.Err(); err != nil {
		return c, fmt.Errorf("%w (QUEUE_URL: the cancellation FIFO queue's URL)", err)
	}
	return c, nil
}

type processor interface {
	Process(ctx context.Context, changes []changefeed.Change) []cancel.Failure
}

type counter interface {
	Add(name string, n float64)
	Flush() error
}

type handler struct {
	schema  contract.Schema
	proc    processor
	metrics counter
	log     *slog.Logger
}

// handle decodes the batch with the schema, hands it to the processor
// and reports the records whose message was not enqueued, by sequence
// number, so the stream retries from the lowest of them.
//
// A record that does not decode (it lacks its key as the schema names
// it) is logged, counted and skipped: it can never decode, and failing it
// would block the shard until the record ages out. Skipping it costs at
// most a schedule left behind, which fires harmlessly (the conditional
// claim). Items that carry no state (the reconciler's checkpoint, an
// adopter's own items such as the to-do app's settings) are never armed,
// so the processor ignores them; their keys are also skipped before
// decoding (the checkpoint's reserved key on every table, and the
// schema's ReservedSortKeyPrefix), so even a damaged or keys-only record
// of theirs sends nothing.
func (h *handler) handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	defer func() {
		if err := h.metrics.Flush(); err != nil {
			h.log.WarnContext(ctx, "writing metrics failed", "error", err)
		}
	}()
	seq := make(map[string]string, len(ev.Records))
	changes := make([]changefeed.Change, 0, len(ev.Records))
	for _, r := range ev.Records {
		k := dynamo.StreamKey(h.schema, r)
		if checkpoint.IsReserved(k.Partition) || h.schema.Reserved(k) {
			continue
		}
		c, err := dynamo.DecodeStreamRecord(h.schema, r)
		if err != nil {
			h.metrics.Add(MetricMalformedRecords, 1)
			h.log.ErrorContext(ctx, "stream record does not decode; skipped", "eventId", r.EventID,
				"sequenceNumber", r.Change.SequenceNumber, logfield.Key, k.String(), "error", err)
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
