package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
)

// settings are what the function reads from its environment.
type settings struct {
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

// loadConfig reads the environment through getenv. The function reads
// tasks, so a schema other than the to-do app's is a configuration error.
func loadConfig(getenv func(string) string) (settings, error) {
	e := lambdaenv.New(getenv)
	c := settings{Table: e.Require(envvars.Table), Schema: tableschema.Todo(),
		Topics: awssns.TopicArnsFromEnv(e), WebURL: e.Optional(todoenv.WebURL, "")}
	if getenv(envvars.ItemSchema) != "" {
		c.Schema = e.Schema()
	}
	if err := e.Err(); err != nil {
		return c, err
	}
	if c.Schema.EnvValue() != tableschema.Todo().EnvValue() {
		return c, fmt.Errorf("configuration: %s names another schema than the to-do app's: the notify function reads tasks; set it to the task table's schema (tableschema.Todo) or leave it unset",
			contract.EnvVar)
	}
	return c, nil
}

// notifier is task.NotifyTarget as the handler uses it.
type notifier interface {
	Notify(ctx context.Context, p contract.Payload) (task.NotifyOutcome, error)
}

// handler turns the expiry function's invocation into a notification.
type handler struct {
	schema contract.Schema
	target notifier
	log    *slog.Logger
}

// Handle notifies for one payload. An error makes the invocation fail
// (a FunctionError for the expiry function's RequestResponse invoke), so
// the expiry function records no delivery and its firing is retried:
// https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
func (h *handler) Handle(ctx context.Context, raw json.RawMessage) error {
	p, err := h.schema.DecodePayload(raw)
	if err == nil && !task.ValidID(p.Key.Sort) {
		err = fmt.Errorf("payload lacks a task id: %s", raw)
	}
	if err != nil {
		h.log.ErrorContext(ctx, "not a schedule payload", "error", err.Error())
		return fmt.Errorf("notify: %w", err)
	}
	out, err := h.target.Notify(ctx, p)
	if err != nil {
		h.log.ErrorContext(ctx, "notification failed; the expiry function retries it", logfield.Key, p.Key.String(),
			"reminder", p.IsReminder(), "error", err.Error())
		return fmt.Errorf("notify %s: %w", p.Key, err)
	}
	h.log.InfoContext(ctx, "notification", logfield.Key, p.Key.String(), "dueAt", contract.FormatTime(p.Due),
		"reminder", p.IsReminder(), "outcome", string(out))
	return nil
}
