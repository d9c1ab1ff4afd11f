package eventservices

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	dj "github.com/unschedule/unschedule/constructs/deferredjobs"
	fe "github.com/unschedule/unschedule/constructs/futureevents"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/examples/renewalreminder/renewalstack"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// TestFutureEventsRetriesLambdaTransients: the core's Step Functions
// timer retries Lambda's service exceptions and throttling of the expiry
// function first (with backoff and jitter), then anything else for about
// an hour (DefaultStateMachineRetries, from 1 minute); its failed
// executions are alarmed.
func TestFutureEventsRetriesLambdaTransients(t *testing.T) {
	a := renewalstack.NewStack(newApp(t), "RenewalRetries")
	template, j := synth(a.Stack)
	_, sm := j.one(t, "AWS::StepFunctions::StateMachine", "FutureEventsCore")
	var def struct {
		States map[string]struct {
			Retry []struct {
				ErrorEquals     []string
				IntervalSeconds float64
				BackoffRate     float64
				MaxAttempts     float64
				MaxDelaySeconds float64
				JitterStrategy  string
			}
		}
	}
	if err := json.Unmarshal([]byte(resolveJoin(props(sm)["DefinitionString"])), &def); err != nil {
		t.Fatal(err)
	}
	retry := def.States[timerspec.FireState].Retry
	if len(retry) != 2 {
		t.Fatalf("%s retriers %s, want the transient one then the catch-all", timerspec.FireState, js(retry))
	}
	first := retry[0]
	if first.IntervalSeconds != 2 || first.BackoffRate != 2 || first.MaxAttempts != 10 || first.MaxDelaySeconds != 120 || first.JitterStrategy != "FULL" {
		t.Fatalf("first retrier %s, want Lambda's transient errors, 2 s doubling, capped, 10 attempts, full jitter", js(first))
	}
	for _, want := range []string{"Lambda.TooManyRequestsException", "Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException",
		"Lambda.ClientExecutionTimeoutException"} {
		if !strings.Contains(js(first.ErrorEquals), want) {
			t.Fatalf("first retrier lacks %s: %s", want, js(first.ErrorEquals))
		}
	}
	if second := retry[1]; js(second.ErrorEquals) != `["States.ALL"]` || second.JitterStrategy != "FULL" || second.BackoffRate != 2 ||
		second.IntervalSeconds != 60 || second.MaxAttempts != scheduleonwrite.DefaultStateMachineRetries {
		t.Fatalf("second retrier %s, want every error, from 1 minute, with backoff and jitter", js(second))
	}
	check(t, func() {
		template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"Namespace": "AWS/States", "MetricName": "ExecutionsFailed", "Threshold": 1,
		})
	})
}

// TestTimeoutContradictionsFailSynth: a futureevents handler that may
// time out before its target, and a deferred-jobs queue whose visibility
// timeout is below six times the worker's timeout, fail synth naming both
// values; consistent values (and the worker-derived default) synthesize.
func TestTimeoutContradictionsFailSynth(t *testing.T) {
	fn := func(st awscdk.Stack, id string, timeoutSec float64) awslambda.IFunction {
		return gofn.NewFunction(st, jsii.String(id), &gofn.FunctionProps{
			Entry: "examples/barbershop/worker", Timeout: awscdk.Duration_Seconds(jsii.Number(timeoutSec)),
		}).Function
	}
	for i, tc := range []struct {
		name  string
		build func(st awscdk.Stack)
		want  []string // empty: synth succeeds
	}{
		{"handler shorter than its target", func(st awscdk.Stack) {
			fe.NewFutureEvents(st, jsii.String("FE"), &fe.FutureEventsProps{
				HandlerTimeout: awscdk.Duration_Seconds(jsii.Number(30)), Targets: []awslambda.IFunction{fn(st, "Slow", 120)}})
		}, []string{"HandlerTimeout (30s) must be longer than the timeout of target", "(120s)", "set HandlerTimeout above 120s"}},
		{"handler as long as its target, added later", func(st awscdk.Stack) {
			f := fe.NewFutureEvents(st, jsii.String("FE"), &fe.FutureEventsProps{HandlerTimeout: awscdk.Duration_Seconds(jsii.Number(60))})
			f.AddTarget(fn(st, "Same", 60))
		}, []string{"HandlerTimeout (60s)", "(60s)"}},
		{"handler longer than its target", func(st awscdk.Stack) {
			fe.NewFutureEvents(st, jsii.String("FE"), &fe.FutureEventsProps{
				HandlerTimeout: awscdk.Duration_Seconds(jsii.Number(61)), Targets: []awslambda.IFunction{fn(st, "Quick", 60)}})
		}, nil},
		{"imported target: its timeout is unknown", func(st awscdk.Stack) {
			fe.NewFutureEvents(st, jsii.String("FE"), &fe.FutureEventsProps{Targets: []awslambda.IFunction{
				awslambda.Function_FromFunctionArn(st, jsii.String("Imported"), jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:x"))}})
		}, nil},
		{"visibility below six worker timeouts", func(st awscdk.Stack) {
			dj.NewDeferredJobs(st, jsii.String("DJ"), &dj.DeferredJobsProps{Worker: fn(st, "W", 60), JobVisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(5))})
		}, []string{"JobVisibilityTimeout (300s) is below six times the Worker's timeout (60s x 6 = 360s)", "at least 360s"}},
		{"visibility at six worker timeouts", func(st awscdk.Stack) {
			dj.NewDeferredJobs(st, jsii.String("DJ"), &dj.DeferredJobsProps{Worker: fn(st, "W", 60), JobVisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(6))})
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := awscdk.NewStack(newApp(t), jsii.String(fmt.Sprint("Timeouts", i)), nil)
			var got string
			func() {
				defer func() {
					if r := recover(); r != nil {
						got = fmt.Sprint(r)
					}
				}()
				tc.build(st)
			}()
			if len(tc.want) == 0 && got != "" {
				t.Fatalf("synth failed: %s", got)
			}
			if len(tc.want) > 0 && got == "" {
				t.Fatalf("synth succeeded, want a failure with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Fatalf("panic %q lacks %q", got, w)
				}
			}
		})
	}
}

// TestDeferredJobsVisibilityDefaultsToSixWorkerTimeouts: unset, the job
// queue's visibility timeout is six times the worker's timeout, at least
// 3 minutes.
func TestDeferredJobsVisibilityDefaultsToSixWorkerTimeouts(t *testing.T) {
	for i, tc := range []struct {
		workerSec float64
		want      float64
	}{{10, 180}, {30, 180}, {120, 720}} {
		t.Run(fmt.Sprint(tc.workerSec, "s"), func(t *testing.T) {
			st := awscdk.NewStack(newApp(t), jsii.String(fmt.Sprint("Visibility", i)), nil)
			w := gofn.NewFunction(st, jsii.String("W"), &gofn.FunctionProps{Entry: "examples/barbershop/worker", Timeout: awscdk.Duration_Seconds(jsii.Number(tc.workerSec))})
			dj.NewDeferredJobs(st, jsii.String("DJ"), &dj.DeferredJobsProps{Worker: w.Function})
			_, j := synth(st)
			_, q := j.one(t, "AWS::SQS::Queue", "DJJobQueue")
			if got := props(q)["VisibilityTimeout"]; got != tc.want {
				t.Fatalf("visibility %v, want %v", got, tc.want)
			}
		})
	}
}
