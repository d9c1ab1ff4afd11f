// Command reconciler is the core's recurring repair job, for any item
// schema and every timer: it gives every armed item a correct schedule
// (execution, marker), deletes what the timer holds for items that are
// gone, finished or moved, and fires armed items long past their due
// time exactly as the expiry function does: the firing core on the item
// table, then the adopter's target (TARGET_FUNCTION_ARN). See
// reconcile.Reconciler.
//
// Environment: TABLE_NAME, UNSCHEDULE_ITEM_SCHEMA, TARGET_FUNCTION_ARN, the
// timer's variables (as the cancellation worker: UNSCHEDULE_TIMER
// and SCHEDULE_GROUP…, STATE_MACHINE_ARN, or TTL_ATTRIBUTE), and optionally
// RECONCILE_ITEM_VIEW (scan, the default, or todo), FIRE_LEASE_SECONDS (as
// the expiry function), GRACE_SEC, RATE_PER_SEC, BUDGET_SEC.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/core/adapters/awslambda"
	"github.com/unschedule/unschedule/internal/core/adapters/checkpoint"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/todo/adapters/tasktable"
	"github.com/unschedule/unschedule/internal/todo/task"
)

func main() {
	log := lambdaenv.Logger()
	cfg := lambdaenv.Must(loadConfig(os.Getenv))
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	ddb := dynamodb.NewFromConfig(aws)
	cps := lambdaenv.Must(checkpoint.New(ddb, cfg.Table, cfg.Schema))
	tm := lambdaenv.Must(timers.New(aws, cfg.Timer))
	target := lambdaenv.Must(awslambda.New(awslambdasdk.NewFromConfig(aws), cfg.Target, cfg.Schema))
	var (
		items reconcile.Items
		firer reconcile.Firer
	)
	switch cfg.View {
	case ViewTodo:
		// The to-do table is seen through the task store, whose pending
		// index lists the armed tasks and whose claim keeps the indexes.
		store := tasktable.New(ddb, cfg.Table)
		items = task.NewReconcileView(store, store)
		core := lambdaenv.Must(fire.New(fire.Config{Schema: cfg.Schema, Store: task.Items(store), Log: log, Lease: cfg.Lease}))
		firer = lambdaenv.Must(task.NewFirer(core, task.Items(store), target))
	default:
		armed := lambdaenv.Must(dynamo.NewArmedItems(ddb, cfg.Table, cfg.Schema))
		store := lambdaenv.Must(dynamo.NewItemStore(ddb, cfg.Table, cfg.Schema))
		core := lambdaenv.Must(fire.New(fire.Config{Schema: cfg.Schema, Store: store, Log: log, Lease: cfg.Lease}))
		items, firer = armed, fire.Firing{Core: core, Target: target}
	}
	rec := metrics.New(FunctionName, os.Stdout)
	r := lambdaenv.Must(reconcile.New(cfg.Reconcile, reconcile.Deps{Schema: cfg.Schema, Items: items,
		Scheduler: tm, Schedules: tm, Firer: firer, Checkpoints: cps, Metrics: rec, Log: log}))
	lambda.Start((&handler{run: r, metrics: rec, log: log, margin: StopMargin}).handle)
}
