// Command todofire is the to-do app's firing function: the core's firing
// (firefn) with the to-do app's target, task.NotifyTarget, run in process
// after each successful claim of a task's expiry or reminder: one
// function per firing instead of the expiry function and the notify
// function. It reads the task and notifies its owner through SNS, in the
// owner's time zone.
//
// Environment: firefn's (TABLE_NAME, UNSCHEDULE_ITEM_SCHEMA: the to-do
// schema, FIRE_LEASE_SECONDS); TOPIC_ARN_PREFIX and TOPIC_SHARDS; WEB_URL
// (optional: the link in the message).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/unschedule/unschedule/firefn"
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
	// The claim is the task store's (its pending-index attributes too),
	// and the target takes the task that claim returned: no second read.
	cache := task.NewClaimCache()
	target := lambdaenv.Must(task.NewNotifyTarget(task.NotifyConfig{Tasks: cache.Tasks(store),
		Notifier: notify.InUserTimeZone(pub, store, log), WebURL: c.WebURL, Log: log}))
	firefn.StartWithStore(target, cache.Items(store))
}
