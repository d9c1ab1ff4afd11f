package main

import (
	"strings"
	"testing"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/layers"
	"github.com/unschedule/unschedule/internal/tableschema"
)

func TestLoadLayerReadsOnlyItsLayersVariables(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    layers.Name
		wantErr string
	}{
		{"default is the scheduler", map[string]string{envvars.ScheduleGroup: "g", envvars.ExpiryFunctionArn: "f", envvars.SchedulerRoleArn: "r", envvars.SchedulerDLQArn: "q"}, layers.EventBridgeScheduler, ""},
		{"scheduler needs its group", map[string]string{}, "", envvars.ScheduleGroup},
		{"step functions", map[string]string{envvars.ExecutionLayer: "StepFunctions", envvars.StateMachineArn: "arn:sm"}, layers.StepFunctions, ""},
		{"step functions needs its state machine", map[string]string{envvars.ExecutionLayer: "StepFunctions"}, "", envvars.StateMachineArn},
		{"ttl", map[string]string{envvars.ExecutionLayer: "TTL", envvars.Table: "items"}, layers.TTL, ""},
		{"unknown layer", map[string]string{envvars.ExecutionLayer: "cron"}, "", "unknown"},
		{"every layer needs the schema", map[string]string{envvars.ExecutionLayer: "TTL", "TABLE_NAME": "items", contract.EnvVar: ""}, "", contract.EnvVar + " is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := tableschema.Todo().EnvValue()
			if v, ok := tc.env[contract.EnvVar]; ok {
				schema = v
			}
			c, err := loadLayer(func(k string) string {
				if k == contract.EnvVar {
					return schema
				}
				return tc.env[k]
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || c.Timer != tc.want {
				t.Fatalf("layer %s (%v), want %s", c.Timer, err, tc.want)
			}
			if tc.want == layers.TTL && c.TTL.TTLAttr != layers.DefaultTTLAttr {
				t.Fatalf("TTL attribute %q, want the default", c.TTL.TTLAttr)
			}
		})
	}
}
