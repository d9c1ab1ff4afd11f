package bench

import (
	"strings"
	"testing"
)

func TestLambdaEnv(t *testing.T) {
	env := map[string]string{}
	for _, kv := range LambdaEnv("api", 256) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, tc := range []struct{ key, want string }{
		{"AWS_LAMBDA_FUNCTION_NAME", "api"},
		{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256"},
		{"AWS_REGION", "us-east-1"},
		{"TOPIC_SHARDS", "1"},
	} {
		if env[tc.key] != tc.want {
			t.Errorf("%s = %q, want %q", tc.key, env[tc.key], tc.want)
		}
	}
	// What the mains require (lambdas/*/main.go, internal/*/adapters/*/env.go).
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "TABLE_NAME", "SCHEDULE_GROUP",
		"SCHEDULE_TARGET_ARN", "SCHEDULER_ROLE_ARN", "SCHEDULER_DLQ_ARN", "TOPIC_ARN_PREFIX", "QUEUE_URL", "METRICS_STACK",
		"TARGET_FUNCTION_ARN"} {
		if env[k] == "" {
			t.Errorf("%s is not set", k)
		}
	}
	if _, ok := env["HOME"]; ok {
		t.Error("HOME is set: Lambda sets none, and the SDK would read shared config files under it")
	}
}
