// Command campaignbounce keeps the campaign suppression list: the SES
// configuration set publishes bounce and complaint events to an SNS
// topic, which invokes this function; a hard bounce or a complaint
// suppresses the recipient on the construct's list (suppress.FromSESEvent;
// the handler is campaignlambda.Bounce).
//
// Environment: CAMPAIGN_TABLE, SUPPRESSION_LIST, set by constructs/campaigns.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/ses"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	cl "github.com/unschedule/unschedule/internal/campaigns/campaignlambda"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	table, listID := env.Require(campaignenv.CampaignTable), env.Require(campaignenv.SuppressionList)
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	list := lambdaenv.Must(ses.NewSuppressions(dynamodb.NewFromConfig(cfg), table, listID))
	h := &cl.Bounce{List: list, Log: log}
	lambda.Start(h.Handle)
}
