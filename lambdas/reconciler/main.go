// Command reconciler is the recurring repair job: it gives every Pending
// task a correct schedule, deletes schedules of tasks that are gone or
// finished, and expires Pending tasks long past their deadline exactly as
// the expiry function does: the firing core on the task table, then the
// to-do app's notify function (TARGET_FUNCTION_ARN). See
// reconcile.Reconciler.
//
// Environment: TABLE_NAME, SCHEDULE_GROUP, EXPIRY_FUNCTION_ARN,
// SCHEDULER_ROLE_ARN, SCHEDULER_DLQ_ARN, TARGET_FUNCTION_ARN (as the
// expiry function), and optionally FIRE_LEASE_SECONDS (as the expiry
// function), GRACE_SEC, RATE_PER_SEC, BUDGET_SEC.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/unschedule/unschedule/internal/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/adapters/awslambda"
	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/adapters/checkpoint"
	"github.com/unschedule/unschedule/internal/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/domain/fire"
	"github.com/unschedule/unschedule/internal/domain/reconcile"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
	"github.com/unschedule/unschedule/internal/tableschema"
)

func main() {
	log := lambdaenv.Logger()
	cfg := lambdaenv.Must(loadConfig(os.Getenv))
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	ddb := dynamodb.NewFromConfig(aws)
	store := dynamo.New(ddb, cfg.Table)
	cps := lambdaenv.Must(checkpoint.New(ddb, cfg.Table))
	sched := lambdaenv.Must(awsscheduler.New(scheduler.NewFromConfig(aws), cfg.Scheduler))
	// The expiry function's composition: the core on the task table, the
	// notify function as the target. The table is seen through the task
	// store (task.Items), whose claim also keeps the table's indexes.
	schema := tableschema.Todo()
	items := task.Items(store)
	core := lambdaenv.Must(fire.New(fire.Config{Schema: schema, Store: items, Log: log, Lease: cfg.Lease}))
	target := lambdaenv.Must(awslambda.New(awslambdasdk.NewFromConfig(aws), cfg.Target, schema))
	expirer := lambdaenv.Must(task.NewFirer(core, items, target))
	rec := metrics.New(FunctionName, os.Stdout)
	r := lambdaenv.Must(reconcile.New(cfg.Reconcile, reconcile.Deps{Pending: store, Tasks: store, Scheduler: sched,
		Schedules: sched, Expirer: expirer, Checkpoints: cps, Metrics: rec, Log: log}))
	lambda.Start((&handler{run: r, metrics: rec, log: log, margin: StopMargin}).handle)
}
