// Command subscribe is the renewal-reminder example's event: it receives
// a subscription ({"email","firstName","chargeAt"}) and schedules its
// reminder one week before the charge. Calling it twice for one customer
// and year schedules one reminder.
//
// Environment: FUTURE_EVENTS_TABLE_NAME (set by the construct's
// ConfigureClient), REMIND_FUNCTION_ARN.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/unschedule/unschedule/examples/renewalreminder/reminder"
	"github.com/unschedule/unschedule/futureevents/client"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
)

func main() {
	env := lambdaenv.New(os.Getenv)
	target := env.Require(reminder.EnvRemindFunction)
	lambdaenv.Must(0, env.Err())
	aws := lambdaenv.Must(config.LoadDefaultConfig(context.Background()))
	c := lambdaenv.Must(client.FromEnv(dynamodb.NewFromConfig(aws)))
	lambda.Start(func(ctx context.Context, s reminder.Subscription) (string, error) {
		r, err := reminder.For(s)
		if err != nil {
			return "", err
		}
		if err := c.Schedule(ctx, r.Name, r.At, target, r.Payload); err != nil {
			return "", err
		}
		return r.Name, nil
	})
}
