package ttlmarker

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// ttlBatch is a stream batch of TTL deletions of markers carrying the
// given payloads, sequence numbers 1, 2, ...
func ttlBatch(t *testing.T, payloads ...string) json.RawMessage {
	t.Helper()
	var ev events.DynamoDBEvent
	for i, p := range payloads {
		ev.Records = append(ev.Records, events.DynamoDBEventRecord{
			EventSource: "aws:dynamodb", EventName: "REMOVE",
			UserIdentity: &events.DynamoDBUserIdentity{Type: timerspec.TTLIdentityType, PrincipalID: timerspec.TTLIdentityPrincipal},
			Change: events.DynamoDBStreamRecord{SequenceNumber: string(rune('1' + i)),
				OldImage: map[string]events.DynamoDBAttributeValue{timerspec.MarkerPayloadAttr: events.NewStringAttribute(p)}},
		})
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInvoke: a payload, or any event that is no DynamoDB stream batch,
// goes to handle as it is; a batch's marker payloads go one by one, and
// the first failure is the batch item failure that ends the batch.
func TestInvoke(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		raw       json.RawMessage
		fail      string // the payload whose handling fails
		handled   []string
		failures  []string
		observed  []bool
		wantError bool
	}{
		{name: "a payload", raw: json.RawMessage(`{"tenantId":"t","jobId":"j"}`), handled: []string{`{"tenantId":"t","jobId":"j"}`}},
		{name: "an SQS batch is no stream batch", raw: json.RawMessage(`{"Records":[{"eventSource":"aws:sqs"}]}`),
			handled: []string{`{"Records":[{"eventSource":"aws:sqs"}]}`}},
		{name: "a failing payload", raw: json.RawMessage(`"x"`), fail: `"x"`, handled: []string{`"x"`}, wantError: true},
		{name: "a batch", raw: ttlBatch(t, "a", "b"), handled: []string{"a", "b"}, observed: []bool{true, true}},
		{name: "a failure ends the batch", raw: ttlBatch(t, "a", "b", "c"), fail: "b",
			handled: []string{"a", "b"}, failures: []string{"2"}, observed: []bool{true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var handled []string
			var observed []bool
			resp, err := timerkind.Invoke(context.Background(), tc.raw, func(_ context.Context, p json.RawMessage) error {
				handled = append(handled, string(p))
				if string(p) == tc.fail {
					return boom
				}
				return nil
			}, func(ok bool) { observed = append(observed, ok) })
			if (err != nil) != tc.wantError {
				t.Fatalf("error %v, want one: %v", err, tc.wantError)
			}
			if !slices.Equal(handled, tc.handled) || !slices.Equal(observed, tc.observed) {
				t.Fatalf("handled %q observed %v, want %q %v", handled, observed, tc.handled, tc.observed)
			}
			var failures []string
			if r, ok := resp.(events.DynamoDBEventResponse); ok {
				for _, f := range r.BatchItemFailures {
					failures = append(failures, f.ItemIdentifier)
				}
			}
			if !slices.Equal(failures, tc.failures) {
				t.Fatalf("batch item failures %v, want %v", failures, tc.failures)
			}
		})
	}
}
