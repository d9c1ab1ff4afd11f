// Command ttlwatch is the TTL timer's periodic look for overdue markers:
// it scans the table for markers (timerspec.MarkerKeyPrefix) and publishes
// how many expired more than MaxLateness ago and still exist, and the age
// of the oldest, each measured from the marker's own expiry time. A
// marker that DynamoDB never deletes (TTL not enabled on its attribute)
// makes no stream record, so the firing function cannot see it.
//
// Environment: TABLE_NAME; TTL_ATTRIBUTE; UNSCHEDULE_ITEM_SCHEMA
// (contract.EnvVar, optional); MAX_LATENESS_SECONDS.
package main

import (
	"context"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

func main() {
	env := lambdaenv.New(os.Getenv)
	cfg := ttlmarker.ConfigFromEnv(env)
	lateness := env.Int(envvars.MaxLatenessSeconds, int(timerspec.TTLPrecision/time.Second), int(timerspec.TTLPrecision/time.Second), 10*365*86400)
	lambdaenv.Must(0, env.Err())
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	rec := metrics.New(metrics.FunctionTTLWatch, nil)
	w := &watcher{api: dynamodb.NewFromConfig(aws), cfg: cfg, maxLateness: time.Duration(lateness) * time.Second,
		now: clock.System{}.Now, log: lambdaenv.Logger(), metrics: rec}
	lambda.Start(func(ctx context.Context) error {
		defer func() { _ = rec.Flush() }()
		return w.Run(ctx)
	})
}
