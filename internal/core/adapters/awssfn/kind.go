package awssfn

import (
	"errors"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// The Step Functions timer: one Standard execution per item and due time,
// whose Wait ends at the due time, to the second; it invokes the firing
// function with the payload itself (no decoder). A move or cancel names
// only the execution of the due time it knows, so a stale one may run.
func init() {
	timerkind.Register(timerkind.Kind{
		Name: timerspec.StepFunctions, Spellings: []string{"stepfunctions", "sfn"},
		Load: func(e *lambdaenv.Env) timerkind.Settings {
			c := ConfigFromEnv(e)
			return timerkind.Settings{Schema: c.Schema, Label: "stepfunctions:" + c.StateMachineArn[strings.LastIndex(c.StateMachineArn, ":")+1:], Adapter: c}
		},
		New: func(cfg aws.Config, s timerkind.Settings) (timerkind.Timer, error) {
			return New(sfn.NewFromConfig(cfg), s.Adapter.(Config))
		},
		Memory:   func(o timerkind.MemoryOptions) timerkind.Standin { return inmem.NewExecutions(o.Now) },
		Describe: func(label string, _, _ time.Time) string { return "a running execution of " + label },
		Lateness: func(late time.Duration) error {
			if late != 0 {
				return errors.New("StepFunctions fires to the second: leave it 0")
			}
			return nil
		},
		KeepsStale:     true,
		DuplicateFault: "sfn-duplicate-execution",
	})
}
