// Command postauth is the Cognito PostAuthentication trigger: on every
// sign-in it makes sure the user has one email subscription, on their
// shard's topic, filtered to their own notifications (see notify.Subscriber).
// It never fails a sign-in.
//
// Environment: TOPIC_ARNS, the shard topics' ARNs, comma-separated, in
// shard order (the same value the expiry function gets).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/unschedule/unschedule/internal/adapters/awssns"
	"github.com/unschedule/unschedule/internal/metrics"
	"github.com/unschedule/unschedule/internal/notify"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	fail := func(msg string, err error) {
		log.Error("postauth: "+msg, "error", err.Error())
		os.Exit(1)
	}
	topics, err := awssns.ParseTopicArns(os.Getenv("TOPIC_ARNS"))
	if err != nil {
		fail("bad configuration", err)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		fail("load AWS config", err)
	}
	subs, err := awssns.NewSubscriptions(sns.NewFromConfig(cfg))
	if err != nil {
		fail("SNS adapter", err)
	}
	rec := metrics.New(FunctionName, os.Stdout)
	subscriber, err := notify.NewSubscriber(notify.SubscriberDeps{Subscriptions: subs, TopicArns: topics, Metrics: rec, Log: log})
	if err != nil {
		fail("subscriber", err)
	}
	lambda.Start(newHandler(subscriber, rec, log).handle)
}
