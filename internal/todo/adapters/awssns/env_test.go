package awssns

import (
	"strings"
	"testing"

	"github.com/unschedule/unschedule/internal/core/lambdaenv"
)

func TestTopicArnsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vars    map[string]string
		want    string
		wantErr string
	}{
		{"three shards", map[string]string{"TOPIC_ARN_PREFIX": "arn:aws:sns:eu-west-1:1:app-notify-", "TOPIC_SHARDS": "3"},
			"arn:aws:sns:eu-west-1:1:app-notify-0 arn:aws:sns:eu-west-1:1:app-notify-1 arn:aws:sns:eu-west-1:1:app-notify-2", ""},
		{"default one shard", map[string]string{"TOPIC_ARN_PREFIX": "p-"}, "p-0", ""},
		{"no prefix", map[string]string{"TOPIC_SHARDS": "2"}, "0 1", "TOPIC_ARN_PREFIX is not set"},
		{"zero shards", map[string]string{"TOPIC_ARN_PREFIX": "p-", "TOPIC_SHARDS": "0"}, "p-0", "TOPIC_SHARDS must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := lambdaenv.New(func(k string) string { return tc.vars[k] })
			got := strings.Join(TopicArnsFromEnv(e), " ")
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if err := e.Err(); (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
}
