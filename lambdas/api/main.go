// Command api serves the task REST API behind API Gateway.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/api"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
	"github.com/unschedule/unschedule/internal/task"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	table, origins := env.Require("TABLE_NAME"), env.List("ALLOWED_ORIGINS")
	schedCfg := awsscheduler.ConfigFromEnv(env)
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(config.LoadDefaultConfig(context.Background()))
	sched := lambdaenv.Must(awsscheduler.New(scheduler.NewFromConfig(cfg), schedCfg))
	svc := lambdaenv.Must(task.NewService(task.Deps{
		Store: dynamo.New(dynamodb.NewFromConfig(cfg), table), Scheduler: sched, Log: log,
	}))
	h := &handler{api: api.New(svc, origins, log), metrics: metrics.New(metrics.FunctionAPI, nil)}
	lambda.Start(h.Handle)
}
