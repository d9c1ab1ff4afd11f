package awsscheduler

import "github.com/unschedule/unschedule/internal/lambdaenv"

// ConfigFromEnv reads the variables that the schedule-on-write construct's
// SchedulerEnvironment sets on every function that creates schedules.
func ConfigFromEnv(e *lambdaenv.Env) Config {
	return Config{
		GroupName:        e.Require("SCHEDULE_GROUP"),
		TargetArn:        e.Require("EXPIRY_FUNCTION_ARN"),
		RoleArn:          e.Require("SCHEDULER_ROLE_ARN"),
		DeadLetterArn:    e.Require("SCHEDULER_DLQ_ARN"),
		MaxRetryAttempts: int32(e.Int("SCHEDULE_RETRIES", 3, 0, 185)),
		MaxEventAgeSec:   int32(e.Int("SCHEDULE_MAX_EVENT_AGE", 86400, 60, 86400)),
		Schema:           e.Schema(),
	}
}
