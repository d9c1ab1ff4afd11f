package todoapp

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
)

func TestConfigCapWafLogsAndProtection(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       map[string]any
		wantErr   string
		wantCap   int
		wantWaf   bool
		wantLogs  awscdk.RemovalPolicy
		protected bool
	}{
		{"defaults", map[string]any{}, "", 1000, false, awscdk.RemovalPolicy_RETAIN, true},
		{"dev", map[string]any{"removalPolicy": "destroy", "logRetentionDays": 7}, "", 1000, false, awscdk.RemovalPolicy_DESTROY, false},
		{"prod with waf and a cap", map[string]any{"waf": true, "maxPendingTasksPerUser": 50}, "", 50, true, awscdk.RemovalPolicy_RETAIN, true},
		{"negative cap", map[string]any{"maxPendingTasksPerUser": -1}, "maxPendingTasksPerUser must be at least 1", 0, false, "", false},
		{"waf not a bool", map[string]any{"waf": "yes"}, "cannot unmarshal", 0, false, "", false},
		{"campaigns without a sender", map[string]any{"campaigns": true}, "campaignSender must be the From address", 0, false, "", false},
		{"campaigns with a sender", map[string]any{"campaigns": true, "campaignSender": "news@example.com"}, "", 1000, false, awscdk.RemovalPolicy_RETAIN, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ConfigFromContext(map[string]any{"x": tc.env}, "x")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.MaxPendingTasksPerUser != tc.wantCap || c.Waf != tc.wantWaf || c.Logs().RemovalPolicy != tc.wantLogs ||
				c.Logs().Retention == awslogs.RetentionDays("") || c.Protected() != tc.protected {
				t.Fatalf("config %+v, logs %+v, protected %v", c, c.Logs(), c.Protected())
			}
		})
	}
}
