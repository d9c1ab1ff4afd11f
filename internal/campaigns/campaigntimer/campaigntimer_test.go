package campaigntimer

import (
	"strings"
	"testing"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// TestLoad: each timer's variables are read, and a timer bound to
// another schema than the send tasks' is refused.
func TestLoad(t *testing.T) {
	tasks := campaign.TaskSchema.EnvValue()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want timerspec.Name
		err  string
	}{
		{"scheduler", map[string]string{envvars.ScheduleGroup: "g", envvars.ScheduleTargetArn: "f", envvars.SchedulerRoleArn: "r",
			envvars.SchedulerDLQArn: "d", envvars.ItemSchema: tasks}, timerspec.EventBridgeScheduler, ""},
		{"step functions", map[string]string{envvars.TimerKind: string(timerspec.StepFunctions), envvars.StateMachineArn: "sm",
			envvars.ItemSchema: tasks}, timerspec.StepFunctions, ""},
		{"ttl", map[string]string{envvars.TimerKind: string(timerspec.TTL), envvars.Table: "t", envvars.ItemSchema: tasks}, timerspec.TTL, ""},
		{"another schema", map[string]string{envvars.TimerKind: string(timerspec.TTL), envvars.Table: "t",
			envvars.ItemSchema: contract.Default().EnvValue()}, timerspec.TTL, "not the campaign send tasks' schema"},
		{"a variable missing", map[string]string{envvars.TimerKind: string(timerspec.StepFunctions), envvars.ItemSchema: tasks},
			timerspec.StepFunctions, envvars.StateMachineArn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := func(k string) string { return tc.env[k] }
			e := lambdaenv.New(get)
			c, err := Load(e, get)
			if err == nil {
				err = e.Err()
			}
			if c.Timer != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("%+v %v; want %s, error %q", c, err, tc.want, tc.err)
			}
		})
	}
}
