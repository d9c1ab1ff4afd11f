package ttlmarker

import (
	"encoding/json"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// The TTL timer: one marker item per item, whose TTL deletion (within
// timerspec.TTLPrecision of the due time) reaches the firing function as
// a DynamoDB stream batch (Decode).
func init() {
	timerkind.Register(timerkind.Kind{
		Name: timerspec.TTL, Spellings: []string{"ttl"},
		Load: func(e *lambdaenv.Env) timerkind.Settings {
			c := ConfigFromEnv(e)
			return timerkind.Settings{Schema: c.Schema, Label: "ttl:" + c.TTLAttr, Adapter: c}
		},
		New: func(cfg aws.Config, s timerkind.Settings) (timerkind.Timer, error) {
			return New(dynamodb.NewFromConfig(cfg), s.Adapter.(Config))
		},
		Decode:         decode,
		Describe:       describe,
		Memory:         func(o timerkind.MemoryOptions) timerkind.Standin { return inmem.NewTTLMarkers(o.Delay) },
		FiresWithin:    timerspec.TTLPrecision,
		DuplicateFault: "ttl-deletion-delivered-twice",
	})
}

// decode reads a DynamoDB stream batch: its markers' TTL deletions are
// the firings, named by sequence number, and a failed one is a batch item
// failure (the mapping has ReportBatchItemFailures: for a stream, Lambda
// reads the itemIdentifier as the sequence number:
// https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html).
func decode(raw json.RawMessage) (timerkind.Batch, bool) {
	ev, ok := streamEvent(raw)
	if !ok {
		return timerkind.Batch{}, false
	}
	b := timerkind.Batch{Answer: func(failed []string) any {
		var resp events.DynamoDBEventResponse
		for _, id := range failed {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: id})
		}
		return resp
	}}
	for _, d := range PayloadsFromEvent(ev) {
		b.Firings = append(b.Firings, timerkind.Firing{ID: d.SequenceNumber, Payload: d.Payload})
	}
	return b, true
}

// describe says what a marker due at is at now. A marker past its time
// is still read until DynamoDB deletes it: "typically within two days of
// expiration", best effort
// (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html).
func describe(_ string, at, now time.Time) string {
	if !at.After(now) {
		return "a TTL marker past its time (" + contract.FormatTime(at) + "), not deleted yet: DynamoDB deletes expired items best effort, typically within two days"
	}
	return "a TTL marker, deleted by DynamoDB after " + contract.FormatTime(at)
}
