package bench

import (
	"sort"
	"strconv"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/tableschema"
)

// LambdaEnv is the environment every function and reference gets under
// the emulator: what Lambda itself sets (region, fake credentials of the
// execution role, memory size) and the union of the variables our mains
// require (see each lambdas/*/main.go and internal/lambdaenv), with dummy
// values. Nothing is contacted at init, so dummy values are enough; HOME
// is left out, as in Lambda, so the SDK finds no shared config files.
func LambdaEnv(function string, memoryMiB int) []string {
	m := map[string]string{
		"AWS_REGION":                      "us-east-1",
		"AWS_DEFAULT_REGION":              "us-east-1",
		"AWS_ACCESS_KEY_ID":               "AKIAIOSFODNN7EXAMPLE",
		"AWS_SECRET_ACCESS_KEY":           "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"AWS_SESSION_TOKEN":               "bench-session-token",
		"AWS_LAMBDA_FUNCTION_NAME":        function,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(memoryMiB),
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     "10",
		"METRICS_STACK":                   "Unschedule-bench",
		"TABLE_NAME":                      "bench-tasks",
		"ALLOWED_ORIGINS":                 "http://localhost:5173",
		"WEB_URL":                         "https://bench.example.com",
		"SCHEDULE_GROUP":                  "bench-tasks",
		"EXPIRY_FUNCTION_ARN":             "arn:aws:lambda:us-east-1:123456789012:function:bench-expiry",
		"SCHEDULER_ROLE_ARN":              "arn:aws:iam::123456789012:role/bench-scheduler",
		"SCHEDULER_DLQ_ARN":               "arn:aws:sqs:us-east-1:123456789012:bench-scheduler-dlq",
		"TOPIC_ARN_PREFIX":                "arn:aws:sns:us-east-1:123456789012:bench-notifications-",
		"TOPIC_SHARDS":                    "1",
		"QUEUE_URL":                       "https://sqs.us-east-1.amazonaws.com/123456789012/bench-cancel.fifo",
		"ALLOWED_EMAIL_DOMAINS":           "",
		"CAMPAIGN_TABLE":                  "bench-campaigns",
		"SEND_FUNCTION_ARN":               "arn:aws:lambda:us-east-1:123456789012:function:bench-send",
		"PROVISION_FUNCTION_ARN":          "arn:aws:lambda:us-east-1:123456789012:function:bench-provision",
		"SENDER_ADDRESS":                  "bench@example.com",
		"WEB_ORIGINS":                     "http://localhost:5173",
		"SENDER_GROUP":                    "campaign-senders",
		"CAMPAIGN_EVENTS_HTTP":            "bench.appsync-api.us-east-1.amazonaws.com",
		"JOB_QUEUE_URL":                   "https://sqs.us-east-1.amazonaws.com/123456789012/bench-jobs",
		"TARGET_FUNCTION_ARNS":            "arn:aws:lambda:us-east-1:123456789012:function:bench-target",
		// The to-do app's schema, as its constructs set it.
		contract.EnvVar: tableschema.Todo().EnvValue(),
		// The expiry function's and the reconciler's target: the to-do
		// app's notify function.
		"TARGET_FUNCTION_ARN": "arn:aws:lambda:us-east-1:123456789012:function:bench-notify",
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
