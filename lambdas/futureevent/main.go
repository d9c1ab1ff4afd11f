// Command futureevent is the future-events state machine's handler: after
// the Wait it invokes the target named in the execution's input, only if
// that target is registered with the construct (TARGET_FUNCTION_ARNS), and
// passes the payload through.
//
// Environment: TARGET_FUNCTION_ARNS (comma-separated function ARNs; set by
// the construct's AddTarget).
package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awslambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/unschedule/unschedule/internal/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/adapters/lambdatarget"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/futureevent"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	targets := env.List(envvars.TargetFunctionArns)
	lambdaenv.Must(0, env.Err())
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	inv := lambdaenv.Must(lambdatarget.New(awslambdasdk.NewFromConfig(aws)))
	rec := metrics.New(metrics.FunctionFutureEvents, nil)
	h := lambdaenv.Must(futureevent.New(targets, inv, log, rec))
	h.Delivered, h.Refused, h.Failed = metrics.FutureEventsDelivered, metrics.FutureEventsRefused, metrics.FutureEventsTargetFailed
	lambda.Start(func(ctx context.Context, in json.RawMessage) error {
		defer func() { _ = rec.Flush() }()
		return h.Handle(ctx, in)
	})
}
