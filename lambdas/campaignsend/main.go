// Command campaignsend sends one campaign email per invocation: it is
// the target of the core timer bound to the send tasks, which hands it
// each task's payload (campaign.TaskSchema: an EventBridge schedule's or
// a Step Functions execution's input, or a batch of TTL deletions of
// markers), and the reconciler invokes it with {"campaignId","taskId"}
// for an overdue task (as schedules armed before campaigns ran on the
// core's timers still do). It composes the firing core
// (fire.Core on campaign.TaskSchema: claim, lease, delivery mark) with
// the send target, as lambdas/fire composes it with the to-do app's
// notify target. See send.Worker for the rules.
//
// Every send first checks that the campaign's owner is still a sender
// (cognitosenders, cached for campaign.SenderCacheTTL), honours the
// suppression list and carries a signed one-click unsubscribe link
// (send.Deliverability).
//
// Environment: CAMPAIGN_TABLE, SENDER_ADDRESS, SES_CONFIGURATION_SET
// (optional), UNSUBSCRIBE_URL, UNSUBSCRIBE_SECRET_ARN, SUPPRESSION_LIST, USER_POOL_ID,
// SENDER_GROUP, ALLOWED_EMAIL_DOMAINS (optional), set by
// constructs/campaigns.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/cognitosenders"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/ses"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	cl "github.com/unschedule/unschedule/internal/campaigns/campaignlambda"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	sc := ses.Config{Table: env.Require(campaignenv.CampaignTable), From: env.Require(campaignenv.SenderAddress), ConfigurationSet: env.Optional(campaignenv.SESConfigurationSet, "")}
	base, secret, list := env.Require(campaignenv.UnsubscribeURL), env.Require(campaignenv.UnsubscribeSecretArn), env.Require(campaignenv.SuppressionList)
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	ddb := dynamodb.NewFromConfig(cfg)
	store := lambdaenv.Must(campaigntable.NewCampaignStore(ddb, sc.Table))
	sender := lambdaenv.Must(ses.New(sesv2.NewFromConfig(cfg), ddb, sc, clock.System{}))
	owners := lambdaenv.Must(cognitosenders.Load(env, cognitoidentityprovider.NewFromConfig(cfg), clock.System{}))
	w := lambdaenv.Must(send.New(store, store, sender, owners, clock.System{}, send.DefaultLease))
	keys := unsubscribe.LoadKeys(ses.SecretLoader(secretsmanager.NewFromConfig(cfg), secret)) // read on the first send
	w.Deliverability = &send.Deliverability{Sender: sc.From, Suppressions: lambdaenv.Must(ses.NewSuppressions(ddb, sc.Table, list)),
		Links: unsubscribe.Links{Base: base, Keys: keys}}
	h := &cl.Send{Worker: w, Metrics: metrics.New(campaignmetrics.FunctionCampaignSend, nil), Log: log}
	lambda.Start(h.Invoke)
}
