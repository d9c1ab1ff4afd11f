// Command campaignunsubscribe serves the public one-click unsubscribe
// URL of campaign emails (RFC 8058) behind API Gateway, without
// authentication: the signed token is the authority. See
// unsubscribe.Page for the rules.
//
// Environment: CAMPAIGN_TABLE, UNSUBSCRIBE_SECRET_ARN, SUPPRESSION_LIST, set by
// constructs/campaigns.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/ses"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	table, secret, listID := env.Require(campaignenv.CampaignTable), env.Require(campaignenv.UnsubscribeSecretArn), env.Require(campaignenv.SuppressionList)
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	list := lambdaenv.Must(ses.NewSuppressions(dynamodb.NewFromConfig(cfg), table, listID))
	keys := unsubscribe.LoadKeys(ses.SecretLoader(secretsmanager.NewFromConfig(cfg), secret))
	h := &handler{page: &unsubscribe.Page{Keys: keys, Store: list, Clock: clock.System{}, Log: log}}
	lambda.Start(h.Handle)
}
