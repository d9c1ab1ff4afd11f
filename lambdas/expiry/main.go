// Command expiry is what every task schedule invokes at the deadline.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/unschedule/unschedule/internal/adapters/awssns"
	"github.com/unschedule/unschedule/internal/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/domain/notify"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	table, webURL := env.Require("TABLE_NAME"), env.Optional("WEB_URL", "")
	topics := awssns.TopicArnsFromEnv(env)
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(config.LoadDefaultConfig(context.Background()))
	pub := lambdaenv.Must(awssns.NewPublisher(sns.NewFromConfig(cfg), topics))
	store := dynamo.New(dynamodb.NewFromConfig(cfg), table)
	svc := lambdaenv.Must(task.NewService(task.Deps{
		Store: store, Notifier: notify.InUserTimeZone(pub, store, log), WebURL: webURL, Log: log,
	}))
	h := &handler{svc: svc, log: log, metrics: metrics.New(metrics.FunctionExpiry, nil)}
	lambda.Start(h.Handle)
}
