// Command campaignprogress publishes each campaign's live progress: it
// reads the campaign table's stream (send tasks and campaign items only:
// the event source mapping's filter) and publishes one
// campaignapi.Progress per touched campaign to the AWS AppSync Events
// channel /campaigns/<owner sub>/<campaign id>, signed with the
// function's role. See campaignlambda.Progress for the rules.
//
// Environment: CAMPAIGN_TABLE, CAMPAIGN_EVENTS_HTTP (the Event API's
// HTTP DNS name), set by constructs/campaigns.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/appsyncevents"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	cl "github.com/unschedule/unschedule/internal/campaigns/campaignlambda"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	table, events := env.Require(campaignenv.CampaignTable), env.Require(campaignenv.CampaignEventsHTTP)
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	h := lambdaenv.Must(newHandler(dynamodb.NewFromConfig(cfg), table, events, cfg.Region, cfg.Credentials, nil, log))
	lambda.Start(h.Handle)
}

// newHandler wires the table and the Event API (its HTTP DNS name) into
// the handler; a nil client is the publisher's default.
func newHandler(ddb dynamo.API, table, eventsDNS, region string, creds aws.CredentialsProvider, client *http.Client,
	log *slog.Logger) (*cl.Progress, error) {
	store, err := campaigntable.NewCampaignStore(ddb, table)
	if err != nil {
		return nil, err
	}
	pub, err := appsyncevents.New(appsyncevents.Endpoint(eventsDNS), region, creds, client)
	if err != nil {
		return nil, err
	}
	return &cl.Progress{Store: store, Publisher: pub, Task: campaigntable.StreamSendTask, Clock: clock.System{},
		Metrics: metrics.New(campaignmetrics.FunctionCampaignProgress, nil), Log: log}, nil
}
