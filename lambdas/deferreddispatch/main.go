// Command deferreddispatch turns TTL deletions of deferred-job markers
// (the stream mapping is filtered to them) into one job message each on
// the job queue.
//
// Environment: JOB_QUEUE_URL.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/unschedule/unschedule/internal/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/adapters/jobqueue"
	dispatch "github.com/unschedule/unschedule/internal/deferredjobs"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	url := env.Require(envvars.JobQueueURL)
	lambdaenv.Must(0, env.Err())
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	q := lambdaenv.Must(jobqueue.New(sqs.NewFromConfig(aws), url))
	rec := metrics.New(metrics.FunctionDeferredDispatch, nil)
	d := lambdaenv.Must(dispatch.NewDispatcher(q, log, rec, dispatch.Metrics{
		Queued: metrics.DeferredJobsQueued, Malformed: metrics.DeferredJobsMalformed,
		QueueFailed: metrics.DeferredJobsQueueFailed, Ignored: metrics.DeferredJobsIgnored,
	}))
	lambda.Start(func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		defer func() { _ = rec.Flush() }()
		return d.Handle(ctx, ev)
	})
}
