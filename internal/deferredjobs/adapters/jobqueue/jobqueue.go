// Package jobqueue sends deferred jobs (job.Job as JSON) to the
// construct's standard SQS queue, one message per job.
package jobqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/internal/deferredjobs/jobdispatch"
)

// API is the part of the SQS client the queue uses.
type API interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var _ API = (*sqs.Client)(nil)

// Queue is an jobdispatch.Queue on SQS.
type Queue struct {
	api API
	url string
}

var _ jobdispatch.Queue = (*Queue)(nil)

// New returns the queue at url.
func New(api API, url string) (*Queue, error) {
	if api == nil || url == "" {
		return nil, errors.New("jobqueue: an SQS client and the queue URL are required")
	}
	return &Queue{api: api, url: url}, nil
}

// Send implements jobdispatch.Queue.
func (q *Queue) Send(ctx context.Context, j job.Job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if _, err := q.api.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(string(b))}); err != nil {
		return fmt.Errorf("send job of %s: %w", j.Tenant, err)
	}
	return nil
}
