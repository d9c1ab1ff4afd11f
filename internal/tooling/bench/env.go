package bench

import (
	"strconv"

	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/futureevents/futureevent"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
)

// LambdaEnv is the environment every function and reference gets: what
// Lambda sets (with fake credentials) and the union of the variables the
// mains require, with dummy values (nothing is contacted at init). HOME
// is left out, as in Lambda.
func LambdaEnv(function string, memoryMiB int) []string {
	m := map[string]string{
		"AWS_REGION":                      "us-east-1",
		"AWS_DEFAULT_REGION":              "us-east-1",
		"AWS_ACCESS_KEY_ID":               "AKIAIOSFODNN7EXAMPLE",
		"AWS_SECRET_ACCESS_KEY":           "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"AWS_SESSION_TOKEN":               "bench-session-token",
		campaignenv.FunctionName:          function,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(memoryMiB),
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     "10",
		envvars.MetricsStack:              "Unschedule-bench",
		envvars.Table:                     "bench-tasks",
		todoenv.AllowedOrigins:            "http://localhost:5173",
		todoenv.WebURL:                    "https://bench.example.com",
		envvars.ScheduleGroup:             "bench-tasks",
		envvars.ScheduleTargetArn:         "arn:aws:lambda:us-east-1:123456789012:function:bench-expiry",
		envvars.SchedulerRoleArn:          "arn:aws:iam::123456789012:role/bench-scheduler",
		envvars.SchedulerDLQArn:           "arn:aws:sqs:us-east-1:123456789012:bench-scheduler-dlq",
		todoenv.TopicArnPrefix:            "arn:aws:sns:us-east-1:123456789012:bench-notifications-",
		todoenv.TopicShards:               "1",
		envvars.QueueURL:                  "https://sqs.us-east-1.amazonaws.com/123456789012/bench-cancel.fifo",
		todoenv.AllowedEmailDomains:       "",
		campaignenv.CampaignTable:         "bench-campaigns",
		campaignenv.SendFunctionArn:       "arn:aws:lambda:us-east-1:123456789012:function:bench-send",
		campaignenv.ProvisionFunctionArn:  "arn:aws:lambda:us-east-1:123456789012:function:bench-provision",
		campaignenv.SenderAddress:         "bench@example.com",
		campaignenv.SenderGroup:           "campaign-senders",
		campaignenv.UserPoolID:            "us-east-1_bench",
		campaignenv.UnsubscribeURL:        "https://bench.example.com/unsubscribe",
		campaignenv.UnsubscribeSecretArn:  "arn:aws:secretsmanager:us-east-1:123456789012:secret:bench-unsubscribe-AbCdEf",
		campaignenv.SuppressionList:       "default",
		envvars.PageCursorSecretArn:       "arn:aws:secretsmanager:us-east-1:123456789012:secret:bench-page-cursor-AbCdEf",
		campaignenv.CampaignEventsHTTP:    "bench.appsync-api.us-east-1.amazonaws.com",
		job.EnvJobQueueURL:                "https://sqs.us-east-1.amazonaws.com/123456789012/bench-jobs",
		futureevent.EnvTargetFunctionArns: "arn:aws:lambda:us-east-1:123456789012:function:bench-target",
		envvars.ItemSchema:                tableschema.Todo().EnvValue(),
		envvars.TargetFunctionArn:         "arn:aws:lambda:us-east-1:123456789012:function:bench-notify",
	}
	// As constructs/campaigns sets it; todofire runs its target inside.
	switch function {
	case "campaignapi", "campaignprovision", "campaignreconciler":
		m[envvars.ItemSchema] = campaign.TaskSchema.EnvValue()
	case "todofire":
		delete(m, envvars.TargetFunctionArn)
	}
	var out []string
	for _, k := range Keys(m) {
		out = append(out, k+"="+m[k])
	}
	return out
}
