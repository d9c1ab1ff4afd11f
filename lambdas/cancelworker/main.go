// Command cancelworker consumes the cancellation FIFO queue: it deletes
// the schedules of completed or removed tasks, and moves (or recreates)
// the schedules of tasks whose deadline changed. See cancel.Worker.
//
// Environment: SCHEDULE_GROUP, EXPIRY_FUNCTION_ARN, SCHEDULER_ROLE_ARN,
// SCHEDULER_DLQ_ARN.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/domain/cancel"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
)

func main() {
	log := lambdaenv.Logger()
	cfg := lambdaenv.Must(loadConfig(os.Getenv))
	aws := lambdaenv.Must(awsconfig.LoadDefaultConfig(context.Background()))
	sched := lambdaenv.Must(awsscheduler.New(scheduler.NewFromConfig(aws), cfg))
	rec := metrics.New(FunctionName, os.Stdout)
	worker := lambdaenv.Must(cancel.NewWorker(sched, rec, log))
	lambda.Start((&handler{worker: worker, metrics: rec, log: log}).handle)
}
