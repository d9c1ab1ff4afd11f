package awssns_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/todotest"
	"github.com/unschedule/unschedule/internal/tooling/memory/snsfake"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.RunWithMoto(m)) }

func topicArns(prefix string, shards int) []string {
	out := make([]string, shards)
	for i := range out {
		out[i] = prefix + "notifications-" + strconv.Itoa(i)
	}
	return out
}

// fakeNotifier is the publisher on the in-memory SNS model, with email
// subscribers confirmed at once.
type fakeNotifier struct {
	*awssns.Publisher
	sns *snsfake.SNS
	n   int
}

func (f *fakeNotifier) Subscribe(t *testing.T, topicArn, policy string) string {
	t.Helper()
	f.n++
	inbox := "inbox-" + strconv.Itoa(f.n) + "@example.com"
	in := &sns.SubscribeInput{TopicArn: aws.String(topicArn), Protocol: aws.String("email"), Endpoint: aws.String(inbox)}
	if policy != "" {
		in.Attributes = map[string]string{"FilterPolicy": policy}
	}
	if _, err := f.sns.Subscribe(context.Background(), in); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if err := f.sns.Confirm(topicArn, inbox); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	return inbox
}

func (f *fakeNotifier) Delivered(_ *testing.T, inbox string) []todotest.NotifierDelivery {
	var out []todotest.NotifierDelivery
	for _, d := range f.sns.Deliveries() {
		if d.Endpoint == inbox {
			out = append(out, todotest.NotifierDelivery{Subject: d.Subject, Message: d.Message})
		}
	}
	return out
}

func TestNotifierContractFake(t *testing.T) {
	todotest.NotifierContract(t, todotest.NotifierBackend{New: func(t *testing.T, shards int) (todotest.ContractNotifier, []string) {
		topics := topicArns("arn:aws:sns:us-east-1:123456789012:", shards)
		f := snsfake.New(topics...)
		p, err := awssns.NewPublisher(f, topics)
		if err != nil {
			t.Fatal(err)
		}
		return &fakeNotifier{Publisher: p, sns: f}, topics
	}})
}

// motoNotifier is the publisher on moto's SNS. Each subscriber is an SQS
// queue: moto delivers to it in process, applying the filter policy, so
// reading the queue observes SNS's routing.
type motoNotifier struct {
	*awssns.Publisher
	sns  *sns.Client
	sqs  *sqs.Client
	n    int
	seen map[string][]todotest.NotifierDelivery // by queue URL
}

func (m *motoNotifier) Subscribe(t *testing.T, topicArn, policy string) string {
	t.Helper()
	ctx := context.Background()
	m.n++
	q, err := m.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("inbox-" + strconv.Itoa(m.n))})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	attrs, err := m.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatalf("queue arn: %v", err)
	}
	in := &sns.SubscribeInput{TopicArn: aws.String(topicArn), Protocol: aws.String("sqs"),
		Endpoint: aws.String(attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)])}
	if policy != "" {
		in.Attributes = map[string]string{"FilterPolicy": policy}
	}
	if _, err := m.sns.Subscribe(ctx, in); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	return aws.ToString(q.QueueUrl)
}

// Delivered reads and deletes what reached the queue since the last call,
// and returns everything the inbox received. The body is SNS's JSON
// envelope (raw message delivery is off).
func (m *motoNotifier) Delivered(t *testing.T, inbox string) []todotest.NotifierDelivery {
	t.Helper()
	ctx := context.Background()
	for {
		out, err := m.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(inbox), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if len(out.Messages) == 0 {
			return m.seen[inbox]
		}
		for _, msg := range out.Messages {
			var env struct{ Subject, Message string }
			if err := json.Unmarshal([]byte(aws.ToString(msg.Body)), &env); err != nil {
				t.Fatalf("sns envelope %s: %v", aws.ToString(msg.Body), err)
			}
			m.seen[inbox] = append(m.seen[inbox], todotest.NotifierDelivery{Subject: env.Subject, Message: env.Message})
			if _, err := m.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(inbox), ReceiptHandle: msg.ReceiptHandle}); err != nil {
				t.Fatalf("delete: %v", err)
			}
		}
	}
}

func TestNotifierContractMoto(t *testing.T) {
	testenv.SharedMoto(t) // skip (or fail under CI=true) once, before the cases
	todotest.NotifierContract(t, todotest.NotifierBackend{New: func(t *testing.T, shards int) (todotest.ContractNotifier, []string) {
		moto := testenv.SharedMoto(t)
		api := moto.SNSClient()
		var topics []string
		for _, name := range topicArns("", shards) {
			out, err := api.CreateTopic(context.Background(), &sns.CreateTopicInput{Name: aws.String(name)})
			if err != nil {
				t.Fatalf("create topic: %v", err)
			}
			topics = append(topics, aws.ToString(out.TopicArn))
		}
		p, err := awssns.NewPublisher(api, topics)
		if err != nil {
			t.Fatal(err)
		}
		return &motoNotifier{Publisher: p, sns: api, sqs: moto.SQSClient(), seen: map[string][]todotest.NotifierDelivery{}}, topics
	}})
}
