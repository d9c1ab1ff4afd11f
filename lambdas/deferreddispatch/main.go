// Command deferreddispatch is the deferred-jobs construct's Target of the
// scheduling core: the expiry function invokes it with a tenant's item
// once its claim succeeded, and it queues that tenant's job for the
// window on the job queue.
//
// Environment: JOB_QUEUE_URL.
package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/deferredjobs/adapters/jobqueue"
	"github.com/unschedule/unschedule/internal/deferredjobs/jobdispatch"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	url := env.Require(job.EnvJobQueueURL)
	lambdaenv.Must(0, env.Err())
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	q := lambdaenv.Must(jobqueue.New(sqs.NewFromConfig(aws), url))
	rec := metrics.New(job.FunctionDispatch, nil)
	d := lambdaenv.Must(jobdispatch.NewDispatcher(q, log, rec, jobdispatch.Metrics{
		Queued: job.MetricQueued, Malformed: job.MetricMalformed, QueueFailed: job.MetricQueueFailed,
	}))
	lambda.Start(func(ctx context.Context, payload json.RawMessage) error {
		defer func() { _ = rec.Flush() }()
		return d.Handle(ctx, payload)
	})
}
