// Command api serves the task REST API behind API Gateway, and the
// caller's notification setting (/me/notifications).
//
// Environment: TABLE_NAME, ALLOWED_ORIGINS, PAGE_CURSOR_SECRET_ARN (read
// on the first list that pages), the scheduler settings, and,
// when the API serves the notification setting, TOPIC_ARN_PREFIX and
// TOPIC_SHARDS (set by constructs/taskapi from constructs/notifications).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/core/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/core/adapters/secretstring"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/adapters/tasktable"
	"github.com/unschedule/unschedule/internal/todo/api"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
	"github.com/unschedule/unschedule/internal/todo/todometrics"
)

func main() {
	log := lambdaenv.Logger()
	env := lambdaenv.New(os.Getenv)
	table, origins, cursorSecret := env.Require(envvars.Table), env.List(todoenv.AllowedOrigins), env.Require(envvars.PageCursorSecretArn)
	maxPending := env.Int(todoenv.MaxPendingTasksPerUser, task.DefaultMaxPendingPerUser, 1, 1<<30)
	schedCfg := awsscheduler.ConfigFromEnv(env)
	var topics []string
	if env.Optional(todoenv.TopicArnPrefix, "") != "" {
		topics = awssns.TopicArnsFromEnv(env)
	}
	lambdaenv.Must(0, env.Err())
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	sched := lambdaenv.Must(awsscheduler.New(scheduler.NewFromConfig(cfg), schedCfg))
	store := tasktable.New(dynamodb.NewFromConfig(cfg), table)
	svc := lambdaenv.Must(task.NewService(task.Deps{Store: store, Timer: sched, MaxPendingPerUser: maxPending, Log: log}))
	cursors := pagecursor.Lazy(secretstring.Loader(secretsmanager.NewFromConfig(cfg), cursorSecret, "the page cursor secret"))
	h := &handler{api: api.New(svc, cursors, origins, log), metrics: metrics.New(todometrics.FunctionAPI, nil)}
	if len(topics) > 0 {
		subs := lambdaenv.Must(awssns.NewSubscriptions(sns.NewFromConfig(cfg)))
		notifications := lambdaenv.Must(notify.NewSubscriber(notify.SubscriberDeps{
			Subscriptions: subs, Settings: store, TopicArns: topics, Log: log,
		}))
		h.api = api.NewWithNotifications(svc, cursors, notifications, origins, log)
	}
	lambda.Start(h.Handle)
}
