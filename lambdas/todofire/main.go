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

	"github.com/unschedule/unschedule/firefn"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/todo/notifyfn"
	"github.com/unschedule/unschedule/internal/todo/task"
)

func main() {
	log := lambdaenv.Logger()
	c := lambdaenv.Must(notifyfn.Load(os.Getenv))
	// The claim is the task store's (its pending-index attributes too),
	// and the target takes the task that claim returned: no second read.
	cache := task.NewClaimCache()
	w := lambdaenv.Must(notifyfn.New(context.Background(), c, log, cache.Tasks))
	firefn.StartWithStore(w.Target, cache.Items(w.Store))
}
