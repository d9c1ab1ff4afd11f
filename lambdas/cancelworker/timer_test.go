package main

import (
	"strings"
	"testing"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

func TestLoadTimerReadsOnlyItsTimersVariables(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    timerspec.Name
		wantErr string
	}{
		{"default is the scheduler", map[string]string{envvars.ScheduleGroup: "g", envvars.ScheduleTargetArn: "f", envvars.SchedulerRoleArn: "r", envvars.SchedulerDLQArn: "q"}, timerspec.EventBridgeScheduler, ""},
		{"scheduler needs its group", map[string]string{}, "", envvars.ScheduleGroup},
		{"step functions", map[string]string{envvars.TimerKind: "StepFunctions", envvars.StateMachineArn: "arn:sm"}, timerspec.StepFunctions, ""},
		{"step functions needs its state machine", map[string]string{envvars.TimerKind: "StepFunctions"}, "", envvars.StateMachineArn},
		{"ttl", map[string]string{envvars.TimerKind: "TTL", envvars.Table: "items"}, timerspec.TTL, ""},
		{"unknown timer", map[string]string{envvars.TimerKind: "cron"}, "", "unknown"},
		{"every timer needs the schema", map[string]string{envvars.TimerKind: "TTL", "TABLE_NAME": "items", contract.EnvVar: ""}, "", contract.EnvVar + " is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := timertest.Schema.EnvValue()
			if v, ok := tc.env[contract.EnvVar]; ok {
				schema = v
			}
			c, err := loadTimer(func(k string) string {
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
				t.Fatalf("timer %s (%v), want %s", c.Timer, err, tc.want)
			}
			if tc.want == timerspec.TTL && c.Adapter.(ttlmarker.Config).TTLAttr != timerspec.DefaultTTLAttr {
				t.Fatalf("TTL attribute %q, want the default", c.Adapter.(ttlmarker.Config).TTLAttr)
			}
		})
	}
}
