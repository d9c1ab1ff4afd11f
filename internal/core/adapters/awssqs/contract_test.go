package awssqs_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/unschedule/unschedule/internal/core/adapters/awssqs"
	"github.com/unschedule/unschedule/internal/core/cancel/queuetest"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.RunWithMoto(m)) }

// motoQueue is the adapter on a moto FIFO queue, with the receive and
// delete calls the worker's event source mapping makes.
type motoQueue struct {
	*awssqs.Enqueuer
	api *sqs.Client
	url string
	dlq string

	mu       sync.Mutex
	inFlight map[string]bool // receipt handles received and not deleted
}

func (q *motoQueue) Receive(t *testing.T, max int) []queuetest.QueueDelivery {
	t.Helper()
	out, err := q.api.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(q.url), MaxNumberOfMessages: int32(max),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{
			types.MessageSystemAttributeNameMessageGroupId, types.MessageSystemAttributeNameApproximateReceiveCount,
		},
	})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	var ds []queuetest.QueueDelivery
	for _, m := range out.Messages {
		n, err := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
		if err != nil {
			t.Fatalf("receive count: %v", err)
		}
		h := aws.ToString(m.ReceiptHandle)
		q.inFlight[h] = true
		ds = append(ds, queuetest.QueueDelivery{Body: []byte(aws.ToString(m.Body)), ReceiveCount: n, Handle: h,
			GroupID: m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]})
	}
	return ds
}

func (q *motoQueue) Ack(t *testing.T, d queuetest.QueueDelivery) {
	t.Helper()
	if _, err := q.api.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{
		QueueUrl: aws.String(q.url), ReceiptHandle: aws.String(d.Handle),
	}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.inFlight, d.Handle)
}

// LapseVisibility ends the visibility timeout of every message in flight
// at once (ChangeMessageVisibility to 0) rather than sleeping through it.
func (q *motoQueue) LapseVisibility(t *testing.T) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	for h := range q.inFlight {
		if _, err := q.api.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{
			QueueUrl: aws.String(q.url), ReceiptHandle: aws.String(h), VisibilityTimeout: 0,
		}); err != nil {
			t.Fatalf("change visibility: %v", err)
		}
		delete(q.inFlight, h)
	}
}

func (q *motoQueue) DeadLetters(t *testing.T) [][]byte {
	t.Helper()
	out, err := q.api.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.dlq), MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatalf("receive from the dead-letter queue: %v", err)
	}
	var bodies [][]byte
	for _, m := range out.Messages {
		bodies = append(bodies, []byte(aws.ToString(m.Body)))
	}
	return bodies
}

// createFIFO creates a FIFO queue as the cancellation construct declares
// it and returns its URL and ARN.
func createFIFO(t *testing.T, api *sqs.Client, name string, attrs map[string]string) (url, arn string) {
	t.Helper()
	ctx := context.Background()
	all := map[string]string{
		string(types.QueueAttributeNameFifoQueue):                 "true",
		string(types.QueueAttributeNameContentBasedDeduplication): "false",
		string(types.QueueAttributeNameVisibilityTimeout):         "30",
	}
	maps.Copy(all, attrs)
	out, err := api.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: all})
	if err != nil {
		t.Fatalf("create queue %s: %v", name, err)
	}
	a, err := api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatalf("queue arn of %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl), a.Attributes[string(types.QueueAttributeNameQueueArn)]
}

// TestQueueContractMoto runs the queue contract on the adapter against
// moto's SQS, each case on a fresh account.
func TestQueueContractMoto(t *testing.T) {
	testenv.SharedMoto(t) // skip (or fail under CI=true) once, before the cases
	queuetest.QueueContract(t, queuetest.QueueBackend{Moto: true, New: func(t *testing.T) queuetest.ContractQueue {
		api := testenv.SharedMoto(t).SQSClient()
		dlq, dlqArn := createFIFO(t, api, "cancellations-dlq.fifo", nil)
		url, _ := createFIFO(t, api, "cancellations.fifo", map[string]string{
			string(types.QueueAttributeNameRedrivePolicy): fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`,
				dlqArn, queuetest.ContractMaxReceiveCount),
		})
		e, err := awssqs.New(api, url)
		if err != nil {
			t.Fatal(err)
		}
		return &motoQueue{Enqueuer: e, api: api, url: url, dlq: dlq, inFlight: map[string]bool{}}
	}})
}
