package scheduleonwrite

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctionstasks"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/unschedule/unschedule/internal/core/envvars"

	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/sfnretry"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// DefaultStateMachineRetries is how often the state machine retries a
// failed invocation of the firing function (backoff from 1 minute, rate
// 2: the last one about an hour after the due time). No prop changes it.
const DefaultStateMachineRetries = 6

// StepFunctionsTimerProps configures the Step Functions timer. It has no
// settings yet: the state machine's retries are fixed
// (DefaultStateMachineRetries) and its logs are kept one month.
type StepFunctionsTimerProps struct{}

// StepFunctionsTimer fires each item with one Standard state machine
// execution per item and due time: Wait (TimestampPath $.at), then invoke
// the firing function with $.payload, to the second. Due times more than
// 364 days away are rejected by the worker (an execution lasts at most
// one year). Its fields are set when NewScheduleOnWrite binds it.
type StepFunctionsTimer struct {
	binding
	// StateMachine waits and fires.
	StateMachine awsstepfunctions.StateMachine
	// FailedExecutionsAlarm fires on a failed execution.
	FailedExecutionsAlarm awscloudwatch.Alarm
}

// NewStepFunctionsTimer is the Step Functions timer; props may be nil.
// Pass it as ScheduleOnWriteProps.Timer.
func NewStepFunctionsTimer(props *StepFunctionsTimerProps) *StepFunctionsTimer {
	return &StepFunctionsTimer{binding: binding{kind: "StepFunctionsTimer"}}
}

// Plan implements Timer: nothing to check, nothing asked of the core.
func (t *StepFunctionsTimer) Plan(plan TimerPlan) TimerNeeds {
	t.plan(plan.ID)
	return TimerNeeds{}
}

// Bind implements Timer: the state machine, Wait until $.at, then invoke
// the firing function with $.payload (synchronously, retried with
// backoff; a failed execution is alarmed). Its role may invoke only the
// firing function.
func (t *StepFunctionsTimer) Bind(c constructs.Construct, core TimerCore) TimerBinding {
	t.bind(c, core)
	wait := awsstepfunctions.NewWait(c, jsii.String(timerspec.WaitState), &awsstepfunctions.WaitProps{
		Time: awsstepfunctions.WaitTime_TimestampPath(jsii.String(timerspec.TimestampPath)),
	})
	fire := awsstepfunctionstasks.NewLambdaInvoke(c, jsii.String(timerspec.FireState), &awsstepfunctionstasks.LambdaInvokeProps{
		LambdaFunction:           core.Fire.Function,
		Payload:                  awsstepfunctions.TaskInput_FromJsonPathAt(jsii.String(timerspec.PayloadPath)),
		RetryOnServiceExceptions: jsii.Bool(false),
	})
	// Lambda's service exceptions and throttling first (short, jittered);
	// then anything else, the function's own errors and Lambda.Unknown
	// (timeouts), for about an hour.
	sfnretry.AddTransient(fire)
	fire.AddRetry(&awsstepfunctions.RetryProps{
		Errors:         jsii.Strings("States.ALL"),
		Interval:       awscdk.Duration_Minutes(jsii.Number(1)),
		BackoffRate:    jsii.Number(2),
		MaxAttempts:    jsii.Number(DefaultStateMachineRetries),
		JitterStrategy: awsstepfunctions.JitterType_FULL,
	})
	logs := awslogs.NewLogGroup(c, jsii.String("StateMachineLogs"), &awslogs.LogGroupProps{
		Retention: awslogs.RetentionDays_ONE_MONTH, RemovalPolicy: core.RemovalPolicy,
	})
	t.StateMachine = awsstepfunctions.NewStateMachine(c, jsii.String("StateMachine"), &awsstepfunctions.StateMachineProps{
		StateMachineType: awsstepfunctions.StateMachineType_STANDARD,
		DefinitionBody:   awsstepfunctions.DefinitionBody_FromChainable(wait.Next(fire)),
		Comment:          jsii.String("Waits until an item's due time, then fires it (the firing function's conditional claim)"),
		TracingEnabled:   jsii.Bool(true),
		// Every state, without the input (keys and due time only anyway).
		Logs: &awsstepfunctions.LogOptions{Destination: logs, Level: awsstepfunctions.LogLevel_ALL, IncludeExecutionData: jsii.Bool(false)},
	})
	nag.Suppress(t.StateMachine.Role().Node().FindChild(jsii.String("DefaultPolicy")), nag.Rule{ID: "AwsSolutions-IAM5",
		AppliesTo: []any{"Resource::*", nag.Regex(`/^Resource::<[A-Za-z0-9]+\.Arn>:\*$/g`)},
		Reason: "The state machine invokes the firing function only (its ARN, and its versions: the LambdaInvoke task grants both); " +
			"X-Ray segments and CloudWatch Logs delivery have no resource-level permissions."})
	t.FailedExecutionsAlarm = alarms.AtLeast(c, "FailedExecutionsAlarm",
		"Executions of the Step Functions timer failed: the firing function kept failing after every retry, so those items did not fire. "+
			"Inspect the failed executions, fix the cause, then start them again with the same input.",
		t.StateMachine.MetricFailed(alarms.SumOptions(nil)), 1, core.AlarmTopic)
	return t
}

// Environment implements TimerBinding: the timer
// (UNSCHEDULE_TIMER=StepFunctions) and the state machine.
func (t *StepFunctionsTimer) Environment() map[string]string {
	t.bound("Environment")
	return map[string]string{envvars.TimerKind: string(timerspec.StepFunctions), envvars.StateMachineArn: *t.StateMachine.StateMachineArn()}
}

// GrantModify implements TimerBinding: start executions of this state
// machine, and stop and describe only its executions. A cancel is one
// StopExecution of the execution it derives the name of, so nothing
// lists executions.
func (t *StepFunctionsTimer) GrantModify(grantee awsiam.IGrantable) awsiam.Grant {
	t.bound("GrantModify")
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("states:StartExecution"),
		ResourceArns: jsii.Strings(*t.StateMachine.StateMachineArn()),
	})
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("states:StopExecution", "states:DescribeExecution"),
		ResourceArns: &[]*string{t.executionArnPattern()},
	})
	return g
}

// GrantDisarm implements TimerBinding: describe and stop only this
// state machine's executions (awssfn's Delete follows the execution's
// chain with DescribeExecution, then stops the running link); it starts
// none.
func (t *StepFunctionsTimer) GrantDisarm(grantee awsiam.IGrantable) awsiam.Grant {
	t.bound("GrantDisarm")
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("states:StopExecution", "states:DescribeExecution"),
		ResourceArns: &[]*string{t.executionArnPattern()},
	})
}

// GrantRead implements TimerBinding: list this state machine's
// executions and describe them.
func (t *StepFunctionsTimer) GrantRead(grantee awsiam.IGrantable) awsiam.Grant {
	t.bound("GrantRead")
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("states:ListExecutions"),
		ResourceArns: jsii.Strings(*t.StateMachine.StateMachineArn()),
	})
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("states:DescribeExecution"),
		ResourceArns: &[]*string{t.executionArnPattern()},
	})
	return g
}

// executionArnPattern matches the executions of the state machine only.
func (t *StepFunctionsTimer) executionArnPattern() *string {
	return awscdk.Stack_Of(t.scope).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("states"),
		Resource:     jsii.String(timerspec.ExecutionsPath),
		ResourceName: jsii.String(*t.StateMachine.StateMachineName() + ":*"),
		ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
	})
}

// Alarms implements TimerBinding: the failed executions'.
func (t *StepFunctionsTimer) Alarms() []awscloudwatch.Alarm {
	t.bound("Alarms")
	return []awscloudwatch.Alarm{t.FailedExecutionsAlarm}
}

// FireFailures implements TimerBinding: none, the timer invokes the
// firing function synchronously.
func (t *StepFunctionsTimer) FireFailures() *FireFailures {
	t.bound("FireFailures")
	return nil
}
