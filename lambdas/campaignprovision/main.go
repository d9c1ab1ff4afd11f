// Command campaignprovision creates the schedules of a campaign's send
// tasks (provision.Provisioner) through the core's paced caller
// (internal/domain/timer/paced) and Scheduler adapter
// (awsscheduler.Requests): at most 10 calls in flight, paced, throttles
// backed off; a margin before its timeout it saves its
// checkpoint and re-invokes itself asynchronously.
//
// Environment: CAMPAIGN_TABLE, SCHEDULE_GROUP, SEND_FUNCTION_ARN,
// SCHEDULER_ROLE_ARN, SCHEDULER_DLQ_ARN, SCHEDULER_CALLS_PER_SECOND,
// PROVISION_MARGIN_SEC (constructs/campaigns); AWS_LAMBDA_FUNCTION_NAME.
package main

import (
	"context"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/unschedule/unschedule/internal/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/adapters/lambdainvoke"
	cl "github.com/unschedule/unschedule/internal/campaign/campaignlambda"
	"github.com/unschedule/unschedule/internal/campaign/provision"
	"github.com/unschedule/unschedule/internal/clock"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	pc := provision.Config{Target: cl.TargetFromEnv(env), CallsPerSecond: env.Float(envvars.SchedulerCallsPerSecond, provision.DefaultCallsPerSecond, 1, 10000),
		Margin: time.Duration(env.Int(envvars.ProvisionMarginSec, 90, 10, 600)) * time.Second}
	table, self := env.Require(envvars.CampaignTable), env.Require(envvars.FunctionName)
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	store := lambdaenv.Must(dynamo.NewCampaignStore(dynamodb.NewFromConfig(cfg), table))
	sched := lambdaenv.Must(awsscheduler.NewRequests(scheduler.NewFromConfig(cfg, awsscheduler.WithoutSDKRetries)))
	p := lambdaenv.Must(provision.New(pc, store, store, sched, store, clock.System{}))
	again := lambdaenv.Must(lambdainvoke.New(awslambda.NewFromConfig(cfg), self))
	h := &cl.Provision{Provisioner: p, Self: again, Metrics: metrics.New(metrics.FunctionCampaignProvision, nil), Log: log}
	lambda.Start(h.Handle)
}
