// Package futureevents is the future-events service: "when
// <event> happens, execute <logic> at <moment>". A Standard Step
// Functions state machine waits until the moment in its input (Wait on
// TimestampPath $.timestamp), then a handler function invokes the target
// function named in the input with the payload. Apps start and stop
// executions with the public client, package
// github.com/unschedule/unschedule/futureevents.
//
// Why a handler and not the Lambda invoke task with a FunctionName from
// the input: both can be limited by IAM to the registered targets, but
// only the handler can also refuse an unregistered target itself, with a
// named error and a metric (FutureEventsRefused) instead of an
// AccessDenied buried in an execution's history, and it keeps the state
// machine's role down to one function: the handler.
package futureevents

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctionstasks"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/constructs/internal/sfnretry"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/futureevent"
	"github.com/unschedule/unschedule/internal/metrics"
)

// FutureEventsProps configures the service.
type FutureEventsProps struct {
	// Targets are the functions executions may invoke; add more with
	// AddTarget. No other function can be invoked.
	// Default: none (every execution is refused until AddTarget).
	Targets []awslambda.IFunction
	// HandlerTimeout bounds one invoke of a target (synchronous), whole
	// seconds from 1 s to 15 minutes. It must be longer than every
	// target's timeout: synth fails otherwise, for each target of this
	// app (an imported target's timeout cannot be read).
	// Default: 1 minute.
	HandlerTimeout awscdk.Duration
	// TargetRetryAttempts is how often the state machine retries a failed
	// target (errors TargetError) or a handler that timed out or crashed
	// (Lambda.Unknown), 0..10, with exponential backoff from 30 seconds
	// and full jitter. Lambda's service exceptions and throttling are
	// retried apart from these (up to 10 times, from 2 seconds).
	// Default: 2.
	TargetRetryAttempts *float64
	// AlarmTopic receives the alarms.
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
	// Logs is how the handler's and the state machine's log groups keep
	// their events.
	// Default: one month, retained.
	Logs gofn.LogOptions
}

// FutureEvents is the state machine, its handler and their alarms.
type FutureEvents struct {
	constructs.Construct
	// StateMachine is the Standard state machine ("Resource").
	StateMachine awsstepfunctions.StateMachine
	// Handler invokes the registered targets.
	Handler *gofn.Function
	// Alarms: failed and timed-out executions, handler errors, refused
	// targets.
	Alarms []awscloudwatch.Alarm

	targets []string
	// timeout is HandlerTimeout, nil when it is a token.
	timeout *float64
}

// NewFutureEvents builds the service.
func NewFutureEvents(scope constructs.Construct, id *string, props *FutureEventsProps) *FutureEvents {
	if props == nil {
		props = &FutureEventsProps{}
	}
	timeout := propcheck.DurationOr(props.HandlerTimeout, awscdk.Duration_Minutes(jsii.Number(1)))
	propcheck.CheckSeconds(*id, "HandlerTimeout", timeout, 1, 900, "one target invoke; Lambda allows 1 s to 15 minutes")
	retries := propcheck.Number(props.TargetRetryAttempts, 2)
	propcheck.CheckWhole(*id, "TargetRetryAttempts", retries, 0, 10, "retries of a failed target; keep it small, each waits twice as long")

	c := constructs.NewConstruct(scope, id)
	f := &FutureEvents{Construct: c}
	if !*timeout.IsUnresolved() {
		f.timeout = timeout.ToSeconds(nil)
	}
	f.Handler = gofn.NewFunction(c, jsii.String("Handler"), &gofn.FunctionProps{
		Entry:       "lambdas/futureevent",
		Description: "Invokes a registered target with the payload of a future event",
		Timeout:     timeout,
		Logs:        props.Logs,
		Environment: map[string]string{envvars.TargetFunctionArns: ""},
	})

	wait := awsstepfunctions.NewWait(c, jsii.String("Wait"), &awsstepfunctions.WaitProps{
		Comment: jsii.String("Wait until the event's moment (RFC 3339, UTC)"),
		Time:    awsstepfunctions.WaitTime_TimestampPath(jsii.String("$.timestamp")),
	})
	invoke := awsstepfunctionstasks.NewLambdaInvoke(c, jsii.String("HandleEvent"), &awsstepfunctionstasks.LambdaInvokeProps{
		Comment:        jsii.String("Invoke the registered target named in the input with its payload"),
		LambdaFunction: f.Handler.Function,
		Payload:        awsstepfunctions.TaskInput_FromJsonPathAt(jsii.String("$")),
		// sfnretry's retrier replaces CDK's (no throttling, no jitter).
		RetryOnServiceExceptions: jsii.Bool(false),
	})
	// Lambda's service exceptions and throttling of the handler, always;
	// then a failed target, or the handler's own timeout or crash
	// (Lambda.Unknown), TargetRetryAttempts times.
	sfnretry.AddTransient(invoke)
	if retries > 0 {
		invoke.AddRetry(&awsstepfunctions.RetryProps{
			Errors:         jsii.Strings(append(slices.Clone(futureevent.RetryErrors), sfnretry.Unknown)...),
			Interval:       awscdk.Duration_Seconds(jsii.Number(30)),
			BackoffRate:    jsii.Number(2),
			MaxAttempts:    jsii.Number(retries),
			JitterStrategy: awsstepfunctions.JitterType_FULL,
		})
	}
	// Execution data (the payload: emails, names) stays out of the logs.
	f.StateMachine = awsstepfunctions.NewStateMachine(c, jsii.String("Resource"), &awsstepfunctions.StateMachineProps{
		StateMachineType: awsstepfunctions.StateMachineType_STANDARD,
		DefinitionBody:   awsstepfunctions.DefinitionBody_FromChainable(wait.Next(invoke)),
		Comment:          jsii.String("Future events: wait until $.timestamp, then invoke $.target with $.payload"),
		Logs: &awsstepfunctions.LogOptions{
			Destination:          props.Logs.NewLogGroup(c, "ExecutionLogs"),
			Level:                awsstepfunctions.LogLevel_ERROR,
			IncludeExecutionData: jsii.Bool(false),
		},
	})
	for _, t := range props.Targets {
		f.AddTarget(t)
	}

	sum := &awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5))}
	f.Alarms = []awscloudwatch.Alarm{
		alarms.AtLeast(c, "ExecutionsFailedAlarm",
			"A future event's execution failed: its target failed after every retry, or was refused. Open the execution in the Step Functions console; schedule the event again under a new name.",
			f.StateMachine.MetricFailed(sum), 1, props.AlarmTopic),
		alarms.AtLeast(c, "ExecutionsTimedOutAlarm",
			"A future event's execution timed out (Standard executions last at most one year).",
			f.StateMachine.MetricTimedOut(sum), 1, props.AlarmTopic),
		alarms.AtLeast(c, "HandlerErrorsAlarm",
			"The future-events handler returned errors: a target failed (retried by the state machine) or was refused. See the handler's logs.",
			f.Handler.Function.MetricErrors(sum), 1, props.AlarmTopic),
		alarms.AtLeast(c, "RefusedAlarm",
			"An execution named a target that is not registered with the future-events construct: register it with AddTarget, or find who starts executions with it.",
			alarms.Metric(c, metrics.FunctionFutureEvents, metrics.FutureEventsRefused, nil), 1, props.AlarmTopic),
	}
	return f
}

// AddTarget registers fn: the handler may invoke it (its role's policy
// and its TARGET_FUNCTION_ARNS list), and nothing else.
func (f *FutureEvents) AddTarget(fn awslambda.IFunction) {
	if fn == nil {
		panic(fmt.Sprintf("%s: AddTarget: the function is nil", *f.Node().Id()))
	}
	// The handler waits for the target (a synchronous invoke): a target
	// that may run as long as the handler, or longer, is cut off by the
	// handler's timeout and counted as failed while it still runs.
	if target, ok := resource.FunctionTimeoutSec(fn); ok && f.timeout != nil && *f.timeout <= target {
		panic(fmt.Sprintf("%s: HandlerTimeout (%vs) must be longer than the timeout of target %s (%vs): the handler waits for the target, "+
			"so set HandlerTimeout above %vs (at most 900 s), or lower the target's timeout below %vs",
			*f.Node().Id(), *f.timeout, *fn.Node().Path(), target, target, *f.timeout))
	}
	grants.Invoke(fn, f.Handler.Function)
	f.targets = append(f.targets, *fn.FunctionArn())
	f.Handler.Function.AddEnvironment(jsii.String(envvars.TargetFunctionArns), jsii.String(strings.Join(f.targets, ",")), nil)
}

// GrantSchedule lets grantee start executions of this state machine and
// stop and describe them (what the futureevents/client package needs), nothing else.
func (f *FutureEvents) GrantSchedule(grantee awsiam.IGrantable) awsiam.Grant {
	g := f.StateMachine.GrantStartExecution(grantee)
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("states:StopExecution", "states:DescribeExecution"),
		ResourceArns: jsii.Strings(*f.ExecutionArnPattern()),
	})
	return g
}

// ConfigureClient grants fn what the client needs (GrantSchedule) and
// sets the state machine's ARN in its environment
// (envvars.FutureEventsStateMachineArn, read by client.FromEnv in futureevents/client).
func (f *FutureEvents) ConfigureClient(fn awslambda.Function) {
	f.GrantSchedule(fn)
	fn.AddEnvironment(jsii.String(envvars.FutureEventsStateMachineArn), f.StateMachine.StateMachineArn(), nil)
}

// ExecutionArnPattern is arn:…:states:<region>:<account>:execution:<state machine>:*.
func (f *FutureEvents) ExecutionArnPattern() *string {
	return awscdk.Stack_Of(f.StateMachine).FormatArn(&awscdk.ArnComponents{
		Service: jsii.String("states"), Resource: jsii.String("execution"),
		ResourceName: jsii.String(*f.StateMachine.StateMachineName() + ":*"),
		ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
	})
}
