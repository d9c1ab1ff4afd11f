package campaignlambda

import (
	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/lambdaenv"
)

// TargetFromEnv is where the schedules deliver, as the construct sets it.
func TargetFromEnv(env *lambdaenv.Env) campaign.Target {
	return campaign.Target{GroupName: env.Require(envvars.ScheduleGroup), FunctionArn: env.Require(envvars.SendFunctionArn),
		RoleArn: env.Require(envvars.SchedulerRoleArn), DeadLetterArn: env.Require(envvars.SchedulerDLQArn)}
}
