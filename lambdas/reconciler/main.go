// Command reconciler is the recurring repair job: it gives every Pending
// task a correct schedule, deletes schedules of tasks that are gone or
// finished, and expires (and notifies) Pending tasks long past their
// deadline. See reconcile.Reconciler.
//
// Environment: TABLE_NAME, SCHEDULE_GROUP, EXPIRY_FUNCTION_ARN,
// SCHEDULER_ROLE_ARN, SCHEDULER_DLQ_ARN, TOPIC_ARN_PREFIX and TOPIC_SHARDS
// (as the expiry function), and optionally WEB_URL, GRACE_SEC, RATE_PER_SEC, BUDGET_SEC.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/unschedule/unschedule/internal/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/adapters/awssns"
	"github.com/unschedule/unschedule/internal/adapters/checkpoint"
	"github.com/unschedule/unschedule/internal/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/domain/notify"
	"github.com/unschedule/unschedule/internal/domain/reconcile"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
)

func main() {
	log := lambdaenv.Logger()
	cfg := lambdaenv.Must(loadConfig(os.Getenv))
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	ddb := dynamodb.NewFromConfig(aws)
	store := dynamo.New(ddb, cfg.Table)
	cps := lambdaenv.Must(checkpoint.New(ddb, cfg.Table))
	sched := lambdaenv.Must(awsscheduler.New(scheduler.NewFromConfig(aws), cfg.Scheduler))
	notifier := notify.InUserTimeZone(lambdaenv.Must(awssns.NewPublisher(sns.NewFromConfig(aws), cfg.TopicArns)), store, log)
	svc := lambdaenv.Must(task.NewService(task.Deps{Store: store, Notifier: notifier, WebURL: cfg.WebURL, Log: log}))
	rec := metrics.New(FunctionName, os.Stdout)
	r := lambdaenv.Must(reconcile.New(cfg.Reconcile, reconcile.Deps{Pending: store, Tasks: store, Scheduler: sched,
		Schedules: sched, Expirer: svc, Checkpoints: cps, Metrics: rec, Log: log}))
	lambda.Start((&handler{run: r, metrics: rec, log: log, margin: StopMargin}).handle)
}
