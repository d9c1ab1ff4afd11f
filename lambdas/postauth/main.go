// Command postauth is the Cognito PostAuthentication trigger: on every
// sign-in it applies the user's notification settings (see
// notify.Subscriber.Ensure): a user with notifications on has one email
// subscription, on their shard's topic, filtered to their own
// notifications, and recorded as theirs. It never fails a sign-in.
//
// Environment (set by constructs/notifications): TOPIC_ARN_PREFIX and
// TOPIC_SHARDS (shard i's topic is the prefix followed by i, the same as
// the expiry function's), and TABLE_NAME, the table that holds each
// user's notification settings.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/adapters/tasktable"
	"github.com/unschedule/unschedule/internal/todo/notify"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	topics := awssns.TopicArnsFromEnv(env)
	table := env.Require(envvars.Table)
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	subs := lambdaenv.Must(awssns.NewSubscriptions(sns.NewFromConfig(cfg)))
	rec := metrics.New(FunctionName, os.Stdout)
	subscriber := lambdaenv.Must(notify.NewSubscriber(notify.SubscriberDeps{
		Subscriptions: subs, Settings: tasktable.New(dynamodb.NewFromConfig(cfg), table),
		TopicArns: topics, Metrics: rec, Log: log,
	}))
	lambda.Start(newHandler(subscriber, rec, log).handle)
}
