// Command campaignreconciler runs one pass of the core reconciler over
// the send tasks per invocation (a rule every 30 minutes), with the
// campaign's rules (campaign.Repair) on the core's timer (any of them:
// internal/core/adapters/timers): missing schedules of Pending tasks
// recreated with the same idempotency token, overdue tasks handed to the
// send function or retimed, stale Running tasks finished or re-queued,
// interrupted cancels completed. A pass cut short saves its checkpoint in
// the campaign table (internal/core/adapters/checkpoint), so the next
// invocation resumes it. See campaignlambda.Reconcile.
//
// A campaign whose owner is no longer a sender (cognitosenders) is
// cancelled by the pass, and its tasks with it.
//
// Environment: CAMPAIGN_TABLE, SEND_FUNCTION_ARN,
// SCHEDULER_CALLS_PER_SECOND, SENDER_ADDRESS, USER_POOL_ID, SENDER_GROUP,
// ALLOWED_EMAIL_DOMAINS (optional), and the bound timer's
// variables (UNSCHEDULE_TIMER, UNSCHEDULE_ITEM_SCHEMA and that timer's
// own) (constructs/campaigns).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/cognitosenders"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/lambdainvoke"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/ses"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	cl "github.com/unschedule/unschedule/internal/campaigns/campaignlambda"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntimer"
	"github.com/unschedule/unschedule/internal/core/adapters/checkpoint"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer/paced"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	tc, err := campaigntimer.Load(env, os.Getenv)
	lambdaenv.Must(0, err)
	sendFn := env.Require(campaignenv.SendFunctionArn)
	rate := env.Float(campaignenv.SchedulerCallsPerSecond, campaign.DefaultReconcileCallsPerSecond, 1, 10000)
	sc := ses.Config{Table: env.Require(campaignenv.CampaignTable), From: env.Require(campaignenv.SenderAddress)}
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	ddb := dynamodb.NewFromConfig(cfg)
	store := lambdaenv.Must(campaigntable.NewCampaignStore(ddb, sc.Table))
	tm := lambdaenv.Must(campaigntimer.New(cfg, tc))
	receipts := lambdaenv.Must(ses.New(sesv2.NewFromConfig(cfg), ddb, sc, clock.System{})) // Sent only: never sends
	dispatch := lambdaenv.Must(lambdainvoke.New(awslambda.NewFromConfig(cfg), sendFn))
	// One call in flight; the reconciler's rate limit paces them, the
	// caller retries throttles.
	caller := lambdaenv.Must(paced.New(paced.Config{Concurrency: 1, CallsPerSecond: rate}, clock.System{}))
	h := &cl.Reconcile{
		Config: reconcile.Config{RatePerSec: rate},
		Ports: campaign.ReconcilePorts{Tasks: store, Campaigns: store, Timer: tm, Sender: receipts,
			Owners:     lambdaenv.Must(cognitosenders.Load(env, cognitoidentityprovider.NewFromConfig(cfg), clock.System{})),
			Dispatcher: dispatch, Clock: clock.System{}, Caller: caller,
			Checkpoints: lambdaenv.Must(checkpoint.New(ddb, sc.Table, campaign.TaskSchema))},
		Metrics: metrics.New(campaignmetrics.FunctionCampaignReconciler, nil), Log: log,
	}
	lambda.Start(h.Handle)
}
