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

	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/todo/notifyfn"
)

func main() {
	log := lambdaenv.Logger()
	c := lambdaenv.Must(notifyfn.Load(os.Getenv))
	w := lambdaenv.Must(notifyfn.New(context.Background(), c, log, nil))
	lambda.Start((&handler{schema: c.Schema, target: w.Target, log: log}).Handle)
}
