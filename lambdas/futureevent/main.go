// Command futureevent is the future-events dispatcher, the scheduling
// core's Target: once the core claimed an event's item at its moment, it
// reads the item and invokes the target named there, only if that target
// is registered with the construct (TARGET_FUNCTION_ARNS), with the
// item's payload.
//
// Environment: TABLE_NAME (the events table); TARGET_FUNCTION_ARNS
// (comma-separated function ARNs; set by the construct's AddTarget).
package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/unschedule/unschedule/futureevents/client"
	"github.com/unschedule/unschedule/futureevents/futureevent"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/futureevents/adapters/lambdatarget"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	table := env.Require(envvars.Table)
	targets := env.List(futureevent.EnvTargetFunctionArns)
	lambdaenv.Must(0, env.Err())
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	events := lambdaenv.Must(client.New(dynamodb.NewFromConfig(aws), table))
	inv := lambdaenv.Must(lambdatarget.New(awslambdasdk.NewFromConfig(aws)))
	rec := metrics.New(futureevent.FunctionFutureEvents, nil)
	d := lambdaenv.Must(futureevent.NewDispatcher(targets, events, inv, log, rec))
	d.Delivered, d.Refused, d.Failed = futureevent.MetricDelivered, futureevent.MetricRefused, futureevent.MetricTargetFailed
	lambda.Start(func(ctx context.Context, in json.RawMessage) error {
		defer func() { _ = rec.Flush() }()
		return d.Handle(ctx, in)
	})
}
