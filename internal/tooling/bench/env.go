package bench

import (
	"sort"
	"strconv"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
)

// LambdaEnv is the environment every function and reference gets under
// the emulator: what Lambda itself sets (region, fake credentials of the
// execution role, memory size) and the union of the variables our mains
// require (see each lambdas/*/main.go and internal/core/lambdaenv), with dummy
// values. Nothing is contacted at init, so dummy values are enough; HOME
// is left out, as in Lambda, so the SDK finds no shared config files.
func LambdaEnv(function string, memoryMiB int) []string {
	m := map[string]string{
		"AWS_REGION":                      "us-east-1",
		"AWS_DEFAULT_REGION":              "us-east-1",
		"AWS_ACCESS_KEY_ID":               "AKIAIOSFODNN7EXAMPLE",
		"AWS_SECRET_ACCESS_KEY":           "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"AWS_SESSION_TOKEN":               "bench-session-token",
		envvars.FunctionName:              function,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(memoryMiB),
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     "10",
		envvars.MetricsStack:              "Unschedule-bench",
		envvars.Table:                     "bench-tasks",
		envvars.AllowedOrigins:            "http://localhost:5173",
		envvars.WebURL:                    "https://bench.example.com",
		envvars.ScheduleGroup:             "bench-tasks",
		envvars.ExpiryFunctionArn:         "arn:aws:lambda:us-east-1:123456789012:function:bench-expiry",
		envvars.SchedulerRoleArn:          "arn:aws:iam::123456789012:role/bench-scheduler",
		envvars.SchedulerDLQArn:           "arn:aws:sqs:us-east-1:123456789012:bench-scheduler-dlq",
		envvars.TopicArnPrefix:            "arn:aws:sns:us-east-1:123456789012:bench-notifications-",
		envvars.TopicShards:               "1",
		envvars.QueueURL:                  "https://sqs.us-east-1.amazonaws.com/123456789012/bench-cancel.fifo",
		envvars.AllowedEmailDomains:       "",
		envvars.CampaignTable:             "bench-campaigns",
		envvars.SendFunctionArn:           "arn:aws:lambda:us-east-1:123456789012:function:bench-send",
		envvars.ProvisionFunctionArn:      "arn:aws:lambda:us-east-1:123456789012:function:bench-provision",
		envvars.SenderAddress:             "bench@example.com",
		envvars.SenderGroup:               "campaign-senders",
		envvars.UserPoolID:                "us-east-1_bench",
		envvars.UnsubscribeURL:            "https://bench.example.com/unsubscribe",
		envvars.UnsubscribeSecretArn:      "arn:aws:secretsmanager:us-east-1:123456789012:secret:bench-unsubscribe-AbCdEf",
		envvars.SuppressionList:           "default",
		envvars.PageCursorSecretArn:       "arn:aws:secretsmanager:us-east-1:123456789012:secret:bench-page-cursor-AbCdEf",
		envvars.CampaignEventsHTTP:        "bench.appsync-api.us-east-1.amazonaws.com",
		envvars.JobQueueURL:               "https://sqs.us-east-1.amazonaws.com/123456789012/bench-jobs",
		envvars.TargetFunctionArns:        "arn:aws:lambda:us-east-1:123456789012:function:bench-target",
		// The to-do app's schema, as its constructs set it.
		envvars.ItemSchema: tableschema.Todo().EnvValue(),
		// The expiry function's and the reconciler's target: the to-do
		// app's notify function.
		envvars.TargetFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:bench-notify",
	}
	// The campaign functions that drive the send tasks' timer read their
	// schema, as constructs/campaigns sets it.
	switch function {
	case "campaignapi", "campaignprovision", "campaignreconciler":
		m[envvars.ItemSchema] = campaign.TaskSchema.EnvValue()
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
