// Command cancelworker consumes the cancellation FIFO queue: it creates
// the schedules of items that a writer other than the API put, deletes
// the schedules of items that left their armed states or were removed,
// and moves (or recreates) the schedules of items whose due time changed.
// See cancel.Worker.
//
// The timer is UNSCHEDULE_TIMER (envvars.TimerKind):
// EventBridgeScheduler (unset) reads the variables below; StepFunctions
// reads STATE_MACHINE_ARN; TTL reads TABLE_NAME and TTL_ATTRIBUTE.
//
// Environment: SCHEDULE_GROUP, SCHEDULE_TARGET_ARN, SCHEDULER_ROLE_ARN,
// SCHEDULER_DLQ_ARN, optional SCHEDULE_RETRIES, SCHEDULE_MAX_EVENT_AGE and
// UNSCHEDULE_ITEM_SCHEMA (contract.EnvVar).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

func main() {
	log := lambdaenv.Logger()
	cfg := lambdaenv.Must(loadTimer(os.Getenv))
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	sched := lambdaenv.Must(timers.New(aws, cfg.Config))
	rec := metrics.New(FunctionName, os.Stdout)
	worker := lambdaenv.Must(cancel.NewWorker(cfg.Schema, sched, rec, log))
	lambda.Start((&handler{worker: worker, metrics: rec, log: log}).handle)
}
