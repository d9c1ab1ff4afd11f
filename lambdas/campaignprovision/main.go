// Command campaignprovision arms the schedules of a campaign's send
// tasks (provision.Provisioner) on the core's timer (any of them:
// internal/core/adapters/timers) through the core's paced caller
// (internal/core/timer/paced): at most 10 calls in flight, paced,
// throttles backed off; a margin before its timeout it saves its
// checkpoint and re-invokes itself asynchronously.
//
// Each run first checks that the campaign's owner is still a sender
// (cognitosenders), and cancels the campaign if not.
//
// Environment: CAMPAIGN_TABLE, USER_POOL_ID, SENDER_GROUP,
// ALLOWED_EMAIL_DOMAINS (optional), SCHEDULER_CALLS_PER_SECOND,
// PROVISION_MARGIN_SEC, and the bound timer's variables (UNSCHEDULE_TIMER,
// UNSCHEDULE_ITEM_SCHEMA and that timer's own) (constructs/campaigns);
// AWS_LAMBDA_FUNCTION_NAME.
package main

import (
	"context"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/cognitosenders"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/lambdainvoke"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	cl "github.com/unschedule/unschedule/internal/campaigns/campaignlambda"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntimer"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	tc, err := campaigntimer.Load(env, os.Getenv)
	lambdaenv.Must(0, err)
	pc := provision.Config{CallsPerSecond: env.Float(campaignenv.SchedulerCallsPerSecond, provision.DefaultCallsPerSecond, 1, 10000),
		Margin: time.Duration(env.Int(campaignenv.ProvisionMarginSec, 90, 10, 600)) * time.Second}
	table, self := env.Require(campaignenv.CampaignTable), env.Require(campaignenv.FunctionName)
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	store := lambdaenv.Must(campaigntable.NewCampaignStore(dynamodb.NewFromConfig(cfg), table))
	tm := lambdaenv.Must(campaigntimer.New(cfg, tc))
	owners := lambdaenv.Must(cognitosenders.Load(env, cognitoidentityprovider.NewFromConfig(cfg), clock.System{}))
	p := lambdaenv.Must(provision.New(pc, store, store, owners, tm, store, clock.System{}))
	again := lambdaenv.Must(lambdainvoke.New(awslambda.NewFromConfig(cfg), self))
	h := &cl.Provision{Provisioner: p, Self: again, Metrics: metrics.New(campaignmetrics.FunctionCampaignProvision, nil), Log: log}
	lambda.Start(h.Handle)
}
