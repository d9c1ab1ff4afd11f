// Package awssqs puts cancellation messages on the SQS FIFO queue.
package awssqs

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/unschedule/unschedule/internal/core/cancel"
)

// MaxBatch is the most entries one SendMessageBatch takes.
const MaxBatch = 10

// API is the part of the SQS client the enqueuer uses.
type API interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// Enqueuer is a cancel.Enqueuer on a FIFO queue. The queue must have
// content-based deduplication off: every message carries its own
// deduplication id.
type Enqueuer struct {
	api      API
	queueURL string
}

var _ cancel.Enqueuer = (*Enqueuer)(nil)

// New returns an Enqueuer for the queue at queueURL.
func New(api API, queueURL string) (*Enqueuer, error) {
	if api == nil || queueURL == "" {
		return nil, errors.New("awssqs: an SQS client and a queue URL are required")
	}
	return &Enqueuer{api: api, queueURL: queueURL}, nil
}

// Enqueue implements cancel.Enqueuer. It sends batches of up to ten, in
// order, with the message's GroupID and DedupID. After a batch with a
// failed entry it sends no more, and reports the rest as not sent: a later
// message of the same task must not overtake one that failed.
func (e *Enqueuer) Enqueue(ctx context.Context, msgs []cancel.Message) ([]cancel.Failed, error) {
	var failed []cancel.Failed
	for start := 0; start < len(msgs); start += MaxBatch {
		chunk := msgs[start:min(start+MaxBatch, len(msgs))]
		if len(failed) > 0 {
			for _, m := range chunk {
				failed = append(failed, cancel.Failed{Message: m, Err: cancel.ErrNotSent})
			}
			continue
		}
		f, err := e.send(ctx, chunk)
		if err != nil {
			return nil, err
		}
		failed = append(failed, f...)
	}
	return failed, nil
}

func (e *Enqueuer) send(ctx context.Context, chunk []cancel.Message) ([]cancel.Failed, error) {
	entries := make([]types.SendMessageBatchRequestEntry, len(chunk))
	for i, m := range chunk {
		entries[i] = types.SendMessageBatchRequestEntry{
			Id:                     aws.String(strconv.Itoa(i)),
			MessageBody:            aws.String(string(m.Encode())),
			MessageGroupId:         aws.String(m.GroupID()),
			MessageDeduplicationId: aws.String(m.DedupID()),
		}
	}
	out, err := e.api.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(e.queueURL), Entries: entries})
	if err != nil {
		return nil, fmt.Errorf("sqs send message batch: %w", err)
	}
	ok := make(map[string]bool, len(out.Successful))
	for _, s := range out.Successful {
		ok[aws.ToString(s.Id)] = true
	}
	reasons := make(map[string]error, len(out.Failed))
	for _, f := range out.Failed {
		reasons[aws.ToString(f.Id)] = fmt.Errorf("sqs rejected the message: %s (sender fault %v): %s",
			aws.ToString(f.Code), f.SenderFault, aws.ToString(f.Message))
	}
	var failed []cancel.Failed
	for i, m := range chunk {
		id := strconv.Itoa(i)
		if ok[id] {
			continue
		}
		err := reasons[id]
		if err == nil {
			err = errors.New("sqs reported neither success nor failure for the message")
		}
		failed = append(failed, cancel.Failed{Message: m, Err: err})
	}
	return failed, nil
}
