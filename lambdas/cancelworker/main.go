// Command cancelworker consumes the cancellation FIFO queue: it deletes
// the schedules of completed or removed tasks, and moves (or recreates)
// the schedules of tasks whose deadline changed. See cancel.Worker.
//
// Environment: SCHEDULE_GROUP, EXPIRY_FUNCTION_ARN, SCHEDULER_ROLE_ARN,
// SCHEDULER_DLQ_ARN.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/cancel"
	"github.com/unschedule/unschedule/internal/metrics"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	fail := func(msg string, err error) {
		log.Error("cancelworker: "+msg, "error", err.Error())
		os.Exit(1)
	}
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		fail("bad configuration", err)
	}
	aws, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		fail("load AWS config", err)
	}
	sched, err := awsscheduler.New(scheduler.NewFromConfig(aws), cfg)
	if err != nil {
		fail("scheduler adapter", err)
	}
	rec := metrics.New(FunctionName, os.Stdout)
	worker, err := cancel.NewWorker(sched, rec, log)
	if err != nil {
		fail("worker", err)
	}
	lambda.Start((&handler{worker: worker, metrics: rec, log: log}).handle)
}
