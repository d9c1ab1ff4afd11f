// Command expiry is what every schedule invokes at an item's due time. It
// claims the item (the contract's conditional write) and then, with
// TARGET_FUNCTION_ARN set, invokes that function with the payload
// (RequestResponse); without it, notifies the task's owner through SNS
// (the to-do app).
//
// Environment: TABLE_NAME; UNSCHEDULE_ITEM_SCHEMA (contract.EnvVar,
// optional); TARGET_FUNCTION_ARN (optional); without a target,
// TOPIC_ARN_PREFIX, TOPIC_SHARDS and WEB_URL.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/unschedule/unschedule/internal/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/adapters/awslambda"
	"github.com/unschedule/unschedule/internal/adapters/awssns"
	"github.com/unschedule/unschedule/internal/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/domain/fire"
	"github.com/unschedule/unschedule/internal/domain/notify"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
)

func main() {
	log := lambdaenv.Logger()
	c := lambdaenv.Must(loadConfig(os.Getenv))
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	db := dynamodb.NewFromConfig(aws)
	h := &handler{now: task.SystemClock{}.Now, log: log, metrics: metrics.New(metrics.FunctionExpiry, nil)}
	if c.Target != "" {
		items := lambdaenv.Must(dynamo.NewItemStore(db, c.Table, c.Schema))
		core := lambdaenv.Must(fire.New(fire.Config{Schema: c.Schema, Store: items, Log: log, Lease: c.Lease}))
		target := lambdaenv.Must(awslambda.New(awslambdasdk.NewFromConfig(aws), c.Target, c.Schema))
		h.exp = targetExpirer{core: core, reminders: items, target: target}
	} else {
		pub := lambdaenv.Must(awssns.NewPublisher(sns.NewFromConfig(aws), c.Topics))
		store := dynamo.New(db, c.Table)
		h.exp = todoExpirer{svc: lambdaenv.Must(task.NewService(task.Deps{
			Store: store, Notifier: notify.InUserTimeZone(pub, store, log), WebURL: c.WebURL, Log: log}))}
	}
	lambda.Start(h.Invoke)
}
