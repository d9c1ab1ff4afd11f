// Command campaignreconciler runs one pass of the core reconciler over
// the send tasks per invocation (a rule every 30 minutes), with the
// campaign's rules (campaign.Repair): missing schedules of Pending tasks
// recreated with the same ClientToken, overdue tasks handed to the send
// function or retimed, stale Running tasks finished or re-queued,
// interrupted cancels completed. See campaignlambda.Reconcile.
//
// Environment: CAMPAIGN_TABLE, SCHEDULE_GROUP, SEND_FUNCTION_ARN,
// SCHEDULER_ROLE_ARN, SCHEDULER_DLQ_ARN, SCHEDULER_CALLS_PER_SECOND,
// SENDER_ADDRESS (constructs/campaigns).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/unschedule/unschedule/internal/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/adapters/lambdainvoke"
	"github.com/unschedule/unschedule/internal/adapters/ses"
	"github.com/unschedule/unschedule/internal/campaign"
	cl "github.com/unschedule/unschedule/internal/campaign/campaignlambda"
	"github.com/unschedule/unschedule/internal/clock"
	"github.com/unschedule/unschedule/internal/domain/reconcile"
	"github.com/unschedule/unschedule/internal/domain/timer/paced"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	target := cl.TargetFromEnv(env)
	rate := env.Float(envvars.SchedulerCallsPerSecond, campaign.DefaultReconcileCallsPerSecond, 1, 10000)
	sc := ses.Config{Table: env.Require(envvars.CampaignTable), From: env.Require(envvars.SenderAddress)}
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	ddb := dynamodb.NewFromConfig(cfg)
	store := lambdaenv.Must(dynamo.NewCampaignStore(ddb, sc.Table))
	sched := lambdaenv.Must(awsscheduler.NewRequests(scheduler.NewFromConfig(cfg, awsscheduler.WithoutSDKRetries)))
	receipts := lambdaenv.Must(ses.New(sesv2.NewFromConfig(cfg), ddb, sc, clock.System{})) // Sent only: never sends
	dispatch := lambdaenv.Must(lambdainvoke.New(awslambda.NewFromConfig(cfg), target.FunctionArn))
	// One call in flight; the reconciler's rate limit paces them, the
	// caller retries throttles.
	caller := lambdaenv.Must(paced.New(paced.Config{Concurrency: 1, CallsPerSecond: rate}, clock.System{}))
	h := &cl.Reconcile{
		Config: reconcile.Config{RatePerSec: rate},
		Ports: campaign.ReconcilePorts{Tasks: store, Campaigns: store, Scheduler: sched, Sender: receipts,
			Dispatcher: dispatch, Clock: clock.System{}, Target: target, Caller: caller,
			Checkpoints: &campaign.MemoryCheckpoints{}},
		Metrics: metrics.New(metrics.FunctionCampaignReconciler, nil), Log: log,
	}
	lambda.Start(h.Handle)
}
