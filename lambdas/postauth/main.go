// Command postauth is the Cognito PostAuthentication trigger: on every
// sign-in it makes sure the user has one email subscription, on their
// shard's topic, filtered to their own notifications (see notify.Subscriber).
// It never fails a sign-in.
//
// Environment (set by constructs/notifications, the same as the expiry
// function's): TOPIC_ARN_PREFIX and TOPIC_SHARDS; shard i's topic is the
// prefix followed by i.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/unschedule/unschedule/internal/adapters/awssns"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/metrics"
	"github.com/unschedule/unschedule/internal/notify"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	topics := awssns.TopicArnsFromEnv(env)
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(config.LoadDefaultConfig(context.Background()))
	subs := lambdaenv.Must(awssns.NewSubscriptions(sns.NewFromConfig(cfg)))
	rec := metrics.New(FunctionName, os.Stdout)
	subscriber := lambdaenv.Must(notify.NewSubscriber(notify.SubscriberDeps{
		Subscriptions: subs, TopicArns: topics, Metrics: rec, Log: log,
	}))
	lambda.Start(newHandler(subscriber, rec, log).handle)
}
