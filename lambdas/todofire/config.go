package main

import (
	"fmt"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
)

// settings are what the to-do target reads (firefn reads the rest).
type settings struct {
	// Table is TABLE_NAME, the task table.
	Table string
	// Topics are the notification topics (TOPIC_ARN_PREFIX, TOPIC_SHARDS).
	Topics []string
	// WebURL is WEB_URL, the web app's base URL ("" for no link).
	WebURL string
}

// loadConfig reads the environment through getenv. The target reads
// tasks, so a schema other than the to-do app's is a configuration error.
func loadConfig(getenv func(string) string) (settings, error) {
	e := lambdaenv.New(getenv)
	c := settings{Table: e.Require(envvars.Table), Topics: awssns.TopicArnsFromEnv(e), WebURL: e.Optional(todoenv.WebURL, "")}
	schema := e.Schema()
	if err := e.Err(); err != nil {
		return c, err
	}
	if schema.EnvValue() != tableschema.Todo().EnvValue() {
		return c, fmt.Errorf("configuration: %s names another schema than the to-do app's: this firing function notifies tasks; "+
			"set it to the task table's schema (tableschema.Todo)", contract.EnvVar)
	}
	return c, nil
}
