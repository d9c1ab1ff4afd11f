// Command notify is the to-do app's target: the function the expiry
// function invokes (RequestResponse) after each successful claim of a
// task's expiry or reminder, with the payload it sends to any target
// (contract.Schema.EncodePayload). It reads the task and notifies its
// owner through SNS, in the owner's time zone: task.NotifyTarget.
//
// Environment: TABLE_NAME; UNSCHEDULE_ITEM_SCHEMA (contract.EnvVar: the
// to-do schema, tableschema.Todo, which is also the default);
// TOPIC_ARN_PREFIX and TOPIC_SHARDS; WEB_URL (optional: the link in the
// message).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/adapters/tasktable"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

func main() {
	log := lambdaenv.Logger()
	c := lambdaenv.Must(loadConfig(os.Getenv))
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	store := tasktable.New(dynamodb.NewFromConfig(aws), c.Table)
	pub := lambdaenv.Must(awssns.NewPublisher(sns.NewFromConfig(aws), c.Topics))
	target := lambdaenv.Must(task.NewNotifyTarget(task.NotifyConfig{Tasks: store,
		Notifier: notify.InUserTimeZone(pub, store, log), WebURL: c.WebURL, Log: log}))
	lambda.Start((&handler{schema: c.Schema, target: target, log: log}).Handle)
}
