// Command reconciler is the core's recurring repair job, for any item
// schema and every timer: it gives every armed item a correct schedule
// (execution, marker), deletes what the timer holds for items that are
// gone, finished or moved, and fires armed items long past their due
// time exactly as the firing function does: the firing core on the item
// table, then the adopter's target (TARGET_FUNCTION_ARN); or, when the
// target runs inside the firing function, by invoking that function
// (FIRE_FUNCTION_ARN). See reconcile.Reconciler.
//
// Environment: TABLE_NAME, UNSCHEDULE_ITEM_SCHEMA, TARGET_FUNCTION_ARN or
// FIRE_FUNCTION_ARN, the
// timer's variables (as the cancellation worker: UNSCHEDULE_TIMER
// and SCHEDULE_GROUP…, STATE_MACHINE_ARN, or TTL_ATTRIBUTE), and optionally
// RECONCILE_ARMED_INDEX (the armed index, armedindex.Spec; unset, a Scan of
// the table), FIRE_LEASE_SECONDS (as
// the firing function), GRACE_SEC, RATE_PER_SEC, BUDGET_SEC.
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
)

func main() {
	log := lambdaenv.Logger()
	cfg := lambdaenv.Must(loadConfig(os.Getenv))
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	ddb := dynamodb.NewFromConfig(aws)
	cps := lambdaenv.Must(checkpoint.New(ddb, cfg.Table, cfg.Schema))
	tm := lambdaenv.Must(timers.New(aws, cfg.Timer))
	var items reconcile.Items = lambdaenv.Must(dynamo.NewArmedItems(ddb, cfg.Table, cfg.Schema))
	if cfg.HasIndex {
		items = lambdaenv.Must(dynamo.NewIndexedItems(ddb, cfg.Table, cfg.Schema, cfg.Index, nil))
	}
	store := lambdaenv.Must(dynamo.NewItemStore(ddb, cfg.Table, cfg.Schema))
	core := lambdaenv.Must(fire.New(fire.Config{Schema: cfg.Schema, Store: store, Log: log, Lease: cfg.Lease}))
	var firer reconcile.Firer
	if cfg.FireFunction != "" { // the target runs inside the firing function
		firer = lambdaenv.Must(awslambda.NewFirer(awslambdasdk.NewFromConfig(aws), cfg.FireFunction, cfg.Schema))
	} else {
		target := lambdaenv.Must(awslambda.New(awslambdasdk.NewFromConfig(aws), cfg.Target, cfg.Schema))
		firer = fire.Firing{Core: core, Target: target}
	}
	rec := metrics.New(FunctionName, os.Stdout)
	r := lambdaenv.Must(reconcile.New(cfg.Reconcile, reconcile.Deps{Schema: cfg.Schema, Items: items,
		Scheduler: tm, Schedules: tm, Firer: firer, Checkpoints: cps, Metrics: rec, Log: log}))
	lambda.Start((&handler{run: r, metrics: rec, log: log, margin: StopMargin}).handle)
}
