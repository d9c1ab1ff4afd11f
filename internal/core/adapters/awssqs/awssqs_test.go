package awssqs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/unschedule/unschedule/internal/core/cancel"
)

const queueURL = "https://sqs.example/123/cancel.fifo"

type fakeSQS struct {
	batches [][]types.SendMessageBatchRequestEntry
	urls    []string
	reject  map[string]bool // by dedup id
	err     error
}

func (f *fakeSQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.batches = append(f.batches, in.Entries)
	f.urls = append(f.urls, aws.ToString(in.QueueUrl))
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		if f.reject[aws.ToString(e.MessageDeduplicationId)] {
			out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InternalError"),
				Message: aws.String("try again")})
			continue
		}
		out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String("m-" + *e.Id)})
	}
	return out, nil
}

func msgs(n int) []cancel.Message {
	out := make([]cancel.Message, n)
	for i := range out {
		out[i] = cancel.Message{Action: cancel.ActionCancel, Partition: "u", Sort: fmt.Sprintf("01JBQ1R8ZK3W4X5Y6Z7A8B%04d", i%3),
			EventID: fmt.Sprintf("ev%02d", i)}
	}
	return out
}

func TestEnqueue(t *testing.T) {
	in := msgs(23)
	tests := []struct {
		name        string
		api         *fakeSQS
		msgs        []cancel.Message
		wantBatches []int
		wantFailed  []string // event ids
		wantErr     bool
	}{
		{"one batch", &fakeSQS{}, in[:3], []int{3}, nil, false},
		{"split in tens, in order", &fakeSQS{}, in, []int{10, 10, 3}, nil, false},
		{"a rejected entry fails, later batches are not sent", &fakeSQS{reject: map[string]bool{in[4].DedupID(): true}},
			in, []int{10}, append([]string{"ev04"}, evs(10, 23)...), false},
		{"a failed call is an error", &fakeSQS{err: errors.New("503")}, in[:3], nil, nil, true},
		{"nothing to send", &fakeSQS{}, nil, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.api, queueURL)
			if err != nil {
				t.Fatal(err)
			}
			failed, err := e.Enqueue(context.Background(), tt.msgs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			var sizes []int
			var sent []cancel.Message
			for i, b := range tt.api.batches {
				sizes = append(sizes, len(b))
				if tt.api.urls[i] != queueURL {
					t.Errorf("queue url %q", tt.api.urls[i])
				}
				for _, entry := range b {
					m, err := cancel.Parse([]byte(aws.ToString(entry.MessageBody)))
					if err != nil {
						t.Fatalf("body does not parse: %v", err)
					}
					if got := aws.ToString(entry.MessageGroupId); got != m.Key().String() {
						t.Errorf("group id %q, want the item key %q", got, m.Key())
					}
					if got, want := aws.ToString(entry.MessageDeduplicationId), m.Key().String()+"-"+m.EventID; got != want {
						t.Errorf("dedup id %q, want %q", got, want)
					}
					sent = append(sent, m)
				}
			}
			if !slices.Equal(sizes, tt.wantBatches) {
				t.Errorf("batch sizes %v, want %v", sizes, tt.wantBatches)
			}
			if !tt.wantErr && len(tt.wantFailed) == 0 && !slices.Equal(sent, tt.msgs) {
				t.Errorf("sent %v, want %v in order", sent, tt.msgs)
			}
			var got []string
			for _, f := range failed {
				if f.Err == nil {
					t.Errorf("failure of %s has no reason", f.Message.EventID)
				}
				got = append(got, f.Message.EventID)
			}
			if !slices.Equal(got, tt.wantFailed) {
				t.Errorf("failed %v, want %v", got, tt.wantFailed)
			}
		})
	}
}

func evs(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("ev%02d", i))
	}
	return out
}

func TestNewValidates(t *testing.T) {
	if _, err := New(&fakeSQS{}, ""); err == nil {
		t.Error("New without a queue URL succeeded")
	}
	if _, err := New(nil, queueURL); err == nil {
		t.Error("New without a client succeeded")
	}
}
