// Command campaignapi serves the campaign routes behind API Gateway (a
// Cognito authorizer): create, preview, provision, cancel, get. See
// campaignapi.Handler.
//
// Environment: CAMPAIGN_TABLE, PROVISION_FUNCTION_ARN, ALLOWED_ORIGINS,
// PAGE_CURSOR_SECRET_ARN (read on the first list that pages),
// SENDER_GROUP, the sender limits MAX_CAMPAIGNS_PER_DAY,
// MAX_CAMPAIGN_SENDS_PER_DAY, MAX_RECIPIENTS_PER_CAMPAIGN, and the bound
// timer's variables (UNSCHEDULE_TIMER, UNSCHEDULE_ITEM_SCHEMA and that
// timer's own), whose schedules a cancel deletes (constructs/campaigns).
package main

import (
	"context"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/lambdainvoke"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	cl "github.com/unschedule/unschedule/internal/campaigns/campaignlambda"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntimer"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/campaigns/limits/limitsdynamo"
	"github.com/unschedule/unschedule/internal/core/adapters/secretstring"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	table, provisioner, origins := env.Require(campaignenv.CampaignTable), env.Require(campaignenv.ProvisionFunctionArn), env.List(campaignenv.AllowedOrigins)
	tc, err := campaigntimer.Load(env, os.Getenv)
	lambdaenv.Must(0, err)
	senderGroup, cursorSecret := env.Require(campaignenv.SenderGroup), env.Require(envvars.PageCursorSecretArn)
	lim := limits.Limits{
		CampaignsPerDay:       env.Int(campaignenv.MaxCampaignsPerDay, limits.DefaultCampaignsPerDay, 1, limits.MaxCampaignsPerDay),
		SendsPerDay:           env.Int(campaignenv.MaxCampaignSendsPerDay, limits.DefaultSendsPerDay, 1, limits.MaxSendsPerDay),
		RecipientsPerCampaign: env.Int(campaignenv.MaxRecipientsPerCampaign, limits.DefaultRecipientsPerCampaign, 1, limits.MaxRecipientsPerCampaign),
	}
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	ddb := dynamodb.NewFromConfig(cfg)
	store := lambdaenv.Must(campaigntable.NewCampaignStore(ddb, table))
	limiter := lambdaenv.Must(limits.New(lim, lambdaenv.Must(limitsdynamo.New(ddb, table)), clock.System{}))
	tm := lambdaenv.Must(campaigntimer.New(cfg, tc))
	canceller := lambdaenv.Must(campaigncancel.New(store, store, tm, clock.System{}, 0))
	canceller.Margin = 5 * time.Second // of the function's 29 s: the reconciler finishes a longer cancel
	start := lambdaenv.Must(lambdainvoke.New(awslambda.NewFromConfig(cfg), provisioner))
	cursors := pagecursor.Lazy(secretstring.Loader(secretsmanager.NewFromConfig(cfg), cursorSecret, "the page cursor secret"))
	h := lambdaenv.Must(campaignapi.New(store, cursors, start, canceller, clock.System{}, nil, origins, senderGroup, log))
	a := &cl.API{Handler: h.WithLimits(limiter), Metrics: metrics.New(campaignmetrics.FunctionCampaignAPI, nil), Log: log}
	lambda.Start(a.Handle)
}
