// Package timers builds, from a function's environment, the timer it
// drives: the EventBridge Scheduler client, the Step Functions executions
// or the TTL markers. The cancellation worker and the reconciler read the
// same variables, so the code that uses a timer is the same for every one.
package timers

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/unschedule/unschedule/internal/core/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/core/adapters/awssfn"
	"github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// Config is the timer (envvars.TimerKind, unset: EventBridge
// Scheduler) and that timer's settings.
type Config struct {
	Timer     timerspec.Name
	Scheduler awsscheduler.Config
	SFN       awssfn.Config
	TTL       ttlmarker.Config
}

// Load reads the timer's name and only the variables that timer needs;
// a missing one is recorded on e (e.Err).
func Load(e *lambdaenv.Env, getenv func(string) string) (Config, error) {
	l, err := timerspec.Parse(getenv(envvars.TimerKind))
	if err != nil {
		return Config{}, fmt.Errorf("configuration: %s: %w", envvars.TimerKind, err)
	}
	c := Config{Timer: l}
	switch l {
	case timerspec.StepFunctions:
		c.SFN = awssfn.ConfigFromEnv(e)
	case timerspec.TTL:
		c.TTL = ttlmarker.ConfigFromEnv(e)
	default:
		c.Scheduler = awsscheduler.ConfigFromEnv(e)
	}
	return c, nil
}

// Timer arms, moves and disarms items' schedules, and reads them.
type Timer interface {
	timer.Scheduler
	timer.Reader
}

// New builds the configured timer's adapter.
func New(aws aws.Config, c Config) (Timer, error) {
	switch c.Timer {
	case timerspec.StepFunctions:
		return awssfn.New(sfn.NewFromConfig(aws), c.SFN)
	case timerspec.TTL:
		return ttlmarker.New(dynamodb.NewFromConfig(aws), c.TTL)
	default:
		return awsscheduler.New(scheduler.NewFromConfig(aws), c.Scheduler)
	}
}
