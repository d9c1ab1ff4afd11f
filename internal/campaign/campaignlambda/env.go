package campaignlambda

import (
	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/lambdaenv"
)

// TargetFromEnv is where the schedules deliver, as the construct sets it.
func TargetFromEnv(env *lambdaenv.Env) campaign.Target {
	return campaign.Target{GroupName: env.Require(EnvScheduleGroup), FunctionArn: env.Require(EnvSendFunction),
		RoleArn: env.Require(EnvSchedulerRole), DeadLetterArn: env.Require(EnvSchedulerDLQ)}
}
