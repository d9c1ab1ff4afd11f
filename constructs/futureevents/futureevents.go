// Package futureevents is the future-events service: "when <event>
// happens, execute <logic> at <moment>", built on the scheduling core.
// An event is an item of the core's contract (futureevents/futureevent:
// keyed by its name, due at its moment, armed while Scheduled) in a table
// of its own; the core (scheduleonwrite on its Step Functions timer, and
// the cancellation pipeline) arms one waiting execution per event, moves
// nothing (an event's moment never changes) and cancels it when the item
// is deleted. At the moment the core claims the item and invokes its
// Target, the handler here, which invokes the registered target function
// named in the item with the item's payload. Apps write and delete the
// items with the public client, package futureevents/client.
//
// Why a handler between the core and the targets: IAM limits both, but
// only the handler can refuse an unregistered target itself, with a named
// error and a metric (FutureEventsRefused), and the core's Target is then
// one function for any number of targets.
package futureevents

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/cancellation"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/futureevents/futureevent"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// FutureEventsProps configures the service.
type FutureEventsProps struct {
	// Targets are the functions events may invoke; add more with
	// AddTarget. No other function can be invoked.
	// Default: none (every event is refused until AddTarget).
	Targets []awslambda.IFunction
	// HandlerTimeout bounds one invoke of a target (synchronous), whole
	// seconds from 1 s to 890 s (the core's expiry function, which waits
	// for the handler, gets 10 s more, within Lambda's 15 minutes). It
	// must be longer than every target's timeout: synth fails otherwise,
	// for each target of this app (an imported target's timeout cannot be
	// read).
	// Default: 1 minute.
	HandlerTimeout awscdk.Duration
	// ExistingTable is your own events table: keyed by "name" (a string)
	// alone, with a NEW_AND_OLD_IMAGES stream. Not with TableProps.
	// Default: a new table (TableProps).
	ExistingTable awsdynamodb.ITable
	// TableProps override, field by field, the new table's props
	// (on-demand, point-in-time recovery, AWS-managed encryption,
	// RemovalPolicy, DeletionProtection); its keys and stream stay the
	// construct's (setting
	// PartitionKey, SortKey or Stream fails synth). Not with
	// ExistingTable.
	// Default: those.
	TableProps *awsdynamodb.TableProps
	// RemovalPolicy of what holds data: the new table, the core's queues
	// and log groups.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// DeletionProtection keeps the new table from being deleted by
	// CloudFormation or the API until it is turned off. Not with
	// ExistingTable (set it on your table).
	// Default: true with RemovalPolicy RETAIN (the default), false with
	// DESTROY: a table the stack keeps is also protected from deletion.
	DeletionProtection *bool
	// AlarmTopic receives every alarm (the core's too).
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
	// Logs of the handler and the core's functions.
	// Default: one month, retained.
	Logs gofn.LogOptions
}

// FutureEvents is the events table, the scheduling core on its Step
// Functions timer, the handler and their alarms.
type FutureEvents struct {
	constructs.Construct
	// Table holds the events (ExistingTable, or the one created).
	Table awsdynamodb.ITable
	// Handler is the core's Target: it invokes the registered targets.
	Handler *gofn.Function
	// Core is the scheduling core on Table: the expiry function (the
	// claim), its reconciler, and its Timer.
	Core *scheduleonwrite.ScheduleOnWrite
	// Timer is the core's Step Functions timer: one Standard execution
	// per event waits until its moment (Timer.StateMachine).
	Timer *scheduleonwrite.StepFunctionsTimer
	// Pipeline reads Table's stream and arms and cancels the executions.
	Pipeline *cancellation.Cancellation
	// RefusedAlarm fires when an event named a target that is not
	// registered (or an item is not an event): FutureEventsRefused.
	RefusedAlarm awscloudwatch.Alarm
	// HandlerErrorsAlarm fires when the handler failed: a target failed
	// or was refused (the core retries the firing), or the handler
	// crashed or timed out.
	HandlerErrorsAlarm awscloudwatch.Alarm

	targets []string
	// timeout is HandlerTimeout, nil when it is a token.
	timeout *float64
}

// NewFutureEvents builds the service.
func NewFutureEvents(scope constructs.Construct, id *string, props *FutureEventsProps) *FutureEvents {
	p := withDefaults(props)
	validate(*id, p)
	c := constructs.NewConstruct(scope, id)
	f := &FutureEvents{Construct: c}
	if !*p.HandlerTimeout.IsUnresolved() {
		f.timeout = p.HandlerTimeout.ToSeconds(nil)
	}
	f.Table = p.ExistingTable
	// The table it creates gets the armed index, which the reconciler
	// Queries instead of scanning (an ExistingTable is scanned).
	var armed *reconciler.ArmedIndex
	if f.Table == nil {
		table := awsdynamodb.NewTable(c, jsii.String("Table"), tableProps(p))
		f.Table, armed = table, scheduleonwrite.AddArmedIndex(table, futureevent.Schema())
	}
	f.Handler = gofn.NewFunction(c, jsii.String("Handler"), &gofn.FunctionProps{
		Entry:       "lambdas/futureevent",
		Description: "Invokes the registered target of a future event with its payload, once the core claimed it",
		Timeout:     p.HandlerTimeout,
		Logs:        p.Logs,
		Environment: map[string]string{envvars.Table: *f.Table.TableName(), futureevent.EnvTargetFunctionArns: ""},
	})
	f.GrantRead(f.Handler.Function)

	f.Timer = scheduleonwrite.NewStepFunctionsTimer(nil)
	f.Core = scheduleonwrite.NewScheduleOnWrite(c, jsii.String("Core"), &scheduleonwrite.ScheduleOnWriteProps{
		Schema:        futureevent.Schema(),
		ExistingTable: f.Table,
		Target:        f.Handler.Function,
		Timer:         f.Timer,
		FireTimeout:   expiryTimeout(p.HandlerTimeout),
		RemovalPolicy: p.RemovalPolicy,
		AlarmTopic:    p.AlarmTopic,
		Logs:          p.Logs,
		Reconciler:    &reconciler.ReconcilerProps{ArmedIndex: armed},
	})
	f.Pipeline = cancellation.NewCancellation(c, jsii.String("Pipeline"), &cancellation.CancellationProps{
		Table: f.Table, Timer: f.Core.Timer, RemovalPolicy: p.RemovalPolicy, AlarmTopic: p.AlarmTopic, Logs: p.Logs,
	})
	for _, t := range p.Targets {
		f.AddTarget(t)
	}

	f.RefusedAlarm = alarms.AtLeast(c, "RefusedAlarm",
		"An event named a target that is not registered with the future-events construct (or an item is not an event): "+
			"register it with AddTarget and deploy (the core retries the firing for about an hour), or find who writes such events.",
		f.MetricRefused(nil), 1, p.AlarmTopic)
	f.HandlerErrorsAlarm = alarms.AtLeast(c, "HandlerErrorsAlarm",
		"The future-events handler failed: a target failed or was refused (the core retries the firing), or the handler timed out. See its logs.",
		f.MetricHandlerErrors(nil), 1, p.AlarmTopic)
	return f
}

// AddTarget registers fn: the handler may invoke it (its role's policy
// and its TARGET_FUNCTION_ARNS list), and nothing else.
func (f *FutureEvents) AddTarget(fn awslambda.IFunction) {
	if fn == nil {
		panic(fmt.Sprintf("%s: AddTarget: the function is nil: pass the function events may invoke", *f.Node().Id()))
	}
	// The handler waits for the target (a synchronous invoke): a target
	// that may run as long as the handler, or longer, is cut off by the
	// handler's timeout and counted as failed while it still runs.
	if target, ok := resource.FunctionTimeoutSec(fn); ok && f.timeout != nil && *f.timeout <= target {
		panic(fmt.Sprintf("%s: HandlerTimeout (%vs) must be longer than the timeout of target %s (%vs): the handler waits for the target, "+
			"so set HandlerTimeout above %vs (at most %d s), or lower the target's timeout below %vs",
			*f.Node().Id(), *f.timeout, *fn.Node().Path(), target, target, MaxHandlerTimeoutSec, *f.timeout))
	}
	grants.Invoke(fn, f.Handler.Function)
	f.targets = append(f.targets, *fn.FunctionArn())
	f.Handler.Function.AddEnvironment(jsii.String(futureevent.EnvTargetFunctionArns), jsii.String(strings.Join(f.targets, ",")), nil)
}

// GrantSchedule lets grantee schedule, cancel and read events (what the
// futureevents/client package needs): PutItem, DeleteItem and GetItem on
// the table (and its customer-managed key, if any), nothing else. The
// core arms and cancels the executions.
func (f *FutureEvents) GrantSchedule(grantee awsiam.IGrantable) awsiam.Grant {
	return grants.Table(f.Table, grantee, "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:GetItem")
}

// GrantRead lets grantee read events (GetItem), nothing else.
func (f *FutureEvents) GrantRead(grantee awsiam.IGrantable) awsiam.Grant {
	return grants.Table(f.Table, grantee, "dynamodb:GetItem")
}

// ConfigureClient grants fn what the client needs (GrantSchedule) and
// sets the table's name in its environment (futureevent.EnvTableName,
// read by client.FromEnv).
func (f *FutureEvents) ConfigureClient(fn awslambda.Function) {
	f.GrantSchedule(fn)
	fn.AddEnvironment(jsii.String(futureevent.EnvTableName), f.Table.TableName(), nil)
}

// MetricRefused counts the events refused: an unregistered target, or an
// item that is not an event. Default: Sum over 5 minutes.
func (f *FutureEvents) MetricRefused(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(f.Construct, futureevent.FunctionFutureEvents, futureevent.MetricRefused, opts)
}

// MetricDelivered counts the targets invoked successfully.
// Default: Sum over 5 minutes.
func (f *FutureEvents) MetricDelivered(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(f.Construct, futureevent.FunctionFutureEvents, futureevent.MetricDelivered, opts)
}

// MetricTargetFailed counts the failed invokes of a registered target
// (the core retries the firing). Default: Sum over 5 minutes.
func (f *FutureEvents) MetricTargetFailed(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(f.Construct, futureevent.FunctionFutureEvents, futureevent.MetricTargetFailed, opts)
}

// MetricHandlerErrors is the handler's Lambda Errors.
// Default: Sum over 5 minutes.
func (f *FutureEvents) MetricHandlerErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return f.Handler.Function.MetricErrors(alarms.SumOptions(opts))
}

// ErrorAlarms are the alarms on the error metrics of the functions
// (operations.ErrorAlarmSource): the core's, its pipeline's, and
// RefusedAlarm.
func (f *FutureEvents) ErrorAlarms() []awscloudwatch.Alarm {
	all := append(f.Core.ErrorAlarms(), f.Pipeline.ErrorAlarms()...)
	return alarms.NonNil(append(all, f.RefusedAlarm)...)
}

// Alarms are every alarm: the handler's (RefusedAlarm,
// HandlerErrorsAlarm), then the core's (its Step Functions timer's failed
// executions and its reconciler's included), then its pipeline's.
func (f *FutureEvents) Alarms() []awscloudwatch.Alarm {
	all := []awscloudwatch.Alarm{f.RefusedAlarm, f.HandlerErrorsAlarm}
	all = append(all, f.Core.Alarms()...)
	return alarms.NonNil(append(all, f.Pipeline.Alarms()...)...)
}
