package ops

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/unschedule/unschedule/internal/todo/tableschema"
)

// TestDecodeFailureRecords: each failure queue's record, as AWS writes
// it, is read to its item key (where it names one) and its reason.
func TestDecodeFailureRecords(t *testing.T) {
	schema := tableschema.Todo()
	payload := `{"userId":"user-1","taskId":"01JD","dueAt":"2030-01-01T13:00:00Z"}`
	tests := []struct {
		name       string
		kind       QueueKind
		body       string
		attrs      map[string]string
		key, cause string
	}{
		{"a cancellation dead letter", QueueDeadLetters, `{"action":"cancel","pk":"user-1","sk":"01JD","eventId":"e9"}`, nil,
			"user-1/01JD", "cancel (event e9): the worker gave up on it"},
		{"a poisoned one", QueueDeadLetters, `{"pk":`, nil, "", "not a cancellation message: the worker cannot read it (poisoned); delete it by hand"},
		{"a scheduler dead letter", QueueSchedulerDeadLetters, payload,
			map[string]string{"ERROR_CODE": "AWS.Lambda.FunctionNotFound", "ERROR_MESSAGE": "Function does not exist"},
			"user-1/01JD", "AWS.Lambda.FunctionNotFound: Function does not exist"},
		{"an asynchronous failure", QueueAsyncFailures, `{"version":"1.0","timestamp":"2030-01-01T13:00:05.000Z",
			"requestContext":{"requestId":"r1","functionArn":"arn:aws:lambda:us-east-1:1:function:expiry:$LATEST","condition":"RetriesExhausted","approximateInvokeCount":3},
			"requestPayload":` + payload + `,"responseContext":{"statusCode":200,"functionError":"Unhandled"},
			"responsePayload":{"errorMessage":"notify: throttled","errorType":"errorString"}}`, nil,
			"user-1/01JD", "RetriesExhausted after 3 invocations: notify: throttled"},
		{"a stream failure", QueueStreamFailures, `{"requestContext":{"requestId":"r2","functionArn":"arn:fn","condition":"RetryAttemptsExhausted","approximateInvokeCount":6},
			"responseContext":{"statusCode":200,"functionError":"Unhandled"},"version":"1.0","timestamp":"2030-01-01T13:00:00.000Z",
			"DDBStreamBatchInfo":{"shardId":"shardId-0001","startSequenceNumber":"100","endSequenceNumber":"101","approximateArrivalOfFirstRecord":"2030-01-01T12:00:00Z",
			"approximateArrivalOfLastRecord":"2030-01-01T12:00:00Z","batchSize":2,"streamArn":"arn:stream"}}`, nil,
			"", "RetryAttemptsExhausted: 2 records of shard shardId-0001, sequence 100 to 101"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sqstypes.Message{MessageId: aws.String("m1"), Body: aws.String(tt.body), MessageAttributes: map[string]sqstypes.MessageAttributeValue{}}
			for k, v := range tt.attrs {
				m.MessageAttributes[k] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
			}
			l := decode(Queue{Name: "q", Kind: tt.kind, Schema: &schema}, m)
			if l.Key != tt.key || l.Reason != tt.cause {
				t.Errorf("decode = key %q, reason %q; want %q, %q", l.Key, l.Reason, tt.key, tt.cause)
			}
		})
	}
}
