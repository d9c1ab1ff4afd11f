package jobqueue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/unschedule/unschedule/deferredjobs/job"
)

type fakeSQS struct {
	in  []*sqs.SendMessageInput
	err error
}

func (f *fakeSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	f.in = append(f.in, in)
	return &sqs.SendMessageOutput{}, f.err
}

func TestSend(t *testing.T) {
	f := &fakeSQS{}
	q, err := New(f, "https://queue")
	if err != nil {
		t.Fatal(err)
	}
	j := job.Job{Tenant: "shop-1", Window: time.Date(2027, 3, 1, 3, 0, 0, 0, time.UTC)}
	if err := q.Send(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	got, err := job.ParseJob(*f.in[0].MessageBody)
	if err != nil || got != j || *f.in[0].QueueUrl != "https://queue" {
		t.Fatalf("round trip %+v %v", got, err)
	}
	boom := errors.New("boom")
	f.err = boom
	if err := q.Send(context.Background(), j); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, err := New(nil, "x"); err == nil {
		t.Fatal("nil client accepted")
	}
}
