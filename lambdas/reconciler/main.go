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
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/adapters/awssns"
	"github.com/unschedule/unschedule/internal/adapters/checkpoint"
	"github.com/unschedule/unschedule/internal/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/metrics"
	"github.com/unschedule/unschedule/internal/reconcile"
	"github.com/unschedule/unschedule/internal/task"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	fail := func(msg string, err error) {
		log.Error("reconciler: "+msg, "error", err.Error())
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
	ddb := dynamodb.NewFromConfig(aws)
	store := dynamo.New(ddb, cfg.Table)
	cps, err := checkpoint.New(ddb, cfg.Table)
	if err != nil {
		fail("checkpoint adapter", err)
	}
	sched, err := awsscheduler.New(scheduler.NewFromConfig(aws), cfg.Scheduler)
	if err != nil {
		fail("scheduler adapter", err)
	}
	notifier, err := awssns.NewPublisher(sns.NewFromConfig(aws), cfg.TopicArns)
	if err != nil {
		fail("SNS adapter", err)
	}
	svc, err := task.NewService(task.Deps{Store: store, Notifier: notifier, WebURL: cfg.WebURL, Log: log})
	if err != nil {
		fail("task service", err)
	}
	rec := metrics.New(FunctionName, os.Stdout)
	r, err := reconcile.New(cfg.Reconcile, reconcile.Deps{Pending: store, Tasks: store, Scheduler: sched,
		Schedules: sched, Expirer: svc, Checkpoints: cps, Metrics: rec, Log: log})
	if err != nil {
		fail("reconciler", err)
	}
	lambda.Start((&handler{run: r, metrics: rec, log: log, margin: StopMargin}).handle)
}
