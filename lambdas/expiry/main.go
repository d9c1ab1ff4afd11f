// Command expiry is what every schedule invokes at an item's due time. It
// claims the item (the contract's conditional write) and then invokes the
// target function, TARGET_FUNCTION_ARN, with the payload
// (RequestResponse), and records the delivery once the target succeeded.
// The to-do app's target is lambdas/notify, which notifies the task's
// owner; an adopter's is its own function.
//
// Environment: TABLE_NAME; UNSCHEDULE_ITEM_SCHEMA (contract.EnvVar,
// optional); TARGET_FUNCTION_ARN (required); FIRE_LEASE_SECONDS
// (optional).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/core/adapters/awslambda"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

func main() {
	log := lambdaenv.Logger()
	c := lambdaenv.Must(loadConfig(os.Getenv))
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	db := dynamodb.NewFromConfig(aws)
	h := &handler{now: clock.System{}.Now, log: log, metrics: metrics.New(metrics.FunctionExpiry, nil)}
	items := lambdaenv.Must(dynamo.NewItemStore(db, c.Table, c.Schema))
	core := lambdaenv.Must(fire.New(fire.Config{Schema: c.Schema, Store: items, Log: log, Lease: c.Lease}))
	target := lambdaenv.Must(awslambda.New(awslambdasdk.NewFromConfig(aws), c.Target, c.Schema))
	h.exp = targetExpirer{core: core, reminders: items, target: target}
	lambda.Start(h.Invoke)
}
