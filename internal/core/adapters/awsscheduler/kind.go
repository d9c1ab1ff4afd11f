package awsscheduler

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// The EventBridge Scheduler timer: the default kind. A schedule invokes
// the firing function with the payload itself (no decoder), within the
// minute of its time ("with 60 second precision":
// https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html).
func init() {
	timerkind.Register(timerkind.Kind{
		Name: timerspec.EventBridgeScheduler, Spellings: []string{"scheduler", "eventbridgescheduler"}, Default: true,
		Load: func(e *lambdaenv.Env) timerkind.Settings {
			c := ConfigFromEnv(e)
			return timerkind.Settings{Schema: c.Schema, Label: "scheduler:" + c.GroupName, Adapter: c}
		},
		New: func(cfg aws.Config, s timerkind.Settings) (timerkind.Timer, error) {
			return New(scheduler.NewFromConfig(cfg), s.Adapter.(Config))
		},
		Memory: func(o timerkind.MemoryOptions) timerkind.Standin {
			s := inmem.NewScheduler()
			s.ListPrefix = o.Schema.ScheduleNamePrefix
			return s
		},
		Describe: func(_ string, at, _ time.Time) string { return "schedule " + AtExpression(ScheduleTime(at)) },
		Lateness: func(late time.Duration) error {
			if late >= time.Minute {
				return fmt.Errorf("the Scheduler fires within the minute of a schedule: use 0 to 59s")
			}
			return nil
		},
		FiresEarly: true,
	})
}
