package awsscheduler

import (
	"github.com/unschedule/unschedule/internal/core/lambdaenv"

	"github.com/unschedule/unschedule/internal/core/envvars"
)

// ConfigFromEnv reads the variables that the schedule-on-write construct's
// SchedulerEnvironment sets on every function that creates schedules.
func ConfigFromEnv(e *lambdaenv.Env) Config {
	return Config{
		GroupName:        e.Require(envvars.ScheduleGroup),
		TargetArn:        e.Require(envvars.ScheduleTargetArn),
		RoleArn:          e.Require(envvars.SchedulerRoleArn),
		DeadLetterArn:    e.Require(envvars.SchedulerDLQArn),
		MaxRetryAttempts: int32(e.Int(envvars.ScheduleRetries, 3, 0, 185)),
		MaxEventAgeSec:   int32(e.Int(envvars.ScheduleMaxEventAge, 86400, 60, 86400)),
		Schema:           e.Schema(),
	}
}
