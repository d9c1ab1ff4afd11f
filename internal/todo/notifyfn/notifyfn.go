// Package notifyfn wires the to-do app's target (task.NotifyTarget) for a
// Lambda main: the environment it reads and the AWS clients it runs on.
// The notify function (lambdas/notify) and the to-do app's firing
// function (lambdas/todofire) both run it.
package notifyfn

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/adapters/tasktable"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
)

// Settings are what the target reads from its function's environment.
type Settings struct {
	// Table is TABLE_NAME, the task table.
	Table string
	// Schema is the to-do schema (contract.EnvVar, default
	// tableschema.Todo).
	Schema contract.Schema
	// Topics are the notification topics (TOPIC_ARN_PREFIX, TOPIC_SHARDS).
	Topics []string
	// WebURL is WEB_URL, the web app's base URL ("" for no link).
	WebURL string
}

// Load reads the environment through getenv. The target reads tasks, so
// a schema other than the to-do app's is a configuration error.
func Load(getenv func(string) string) (Settings, error) {
	e := lambdaenv.New(getenv)
	s := Settings{Table: e.Require(envvars.Table), Schema: tableschema.Todo(),
		Topics: awssns.TopicArnsFromEnv(e), WebURL: e.Optional(todoenv.WebURL, "")}
	if getenv(envvars.ItemSchema) != "" {
		s.Schema = e.Schema()
	}
	if err := e.Err(); err != nil {
		return s, err
	}
	if s.Schema.EnvValue() != tableschema.Todo().EnvValue() {
		return s, fmt.Errorf("configuration: %s names another schema than the to-do app's: the to-do app's target reads tasks; "+
			"set it to the task table's schema (tableschema.Todo) or leave it unset", contract.EnvVar)
	}
	return s, nil
}

// Wired is the target on AWS and the task store it reads.
type Wired struct {
	Target *task.NotifyTarget
	Store  *tasktable.Store
}

// New builds the target on the SDK's standard configuration. tasks, when
// set, wraps the store the target reads its task from (the firing
// function's claim cache); the owner's settings are read from the store.
func New(ctx context.Context, s Settings, log *slog.Logger, tasks func(task.NotifyStore) task.NotifyStore) (Wired, error) {
	cfg, err := awsenv.Config(ctx)
	if err != nil {
		return Wired{}, err
	}
	store := tasktable.New(dynamodb.NewFromConfig(cfg), s.Table)
	pub, err := awssns.NewPublisher(sns.NewFromConfig(cfg), s.Topics)
	if err != nil {
		return Wired{}, err
	}
	var read task.NotifyStore = store
	if tasks != nil {
		read = tasks(store)
	}
	target, err := task.NewNotifyTarget(task.NotifyConfig{Tasks: read,
		Notifier: notify.InUserTimeZone(pub, store, log), WebURL: s.WebURL, Log: log})
	return Wired{Target: target, Store: store}, err
}
