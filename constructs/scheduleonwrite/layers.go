package scheduleonwrite

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctionstasks"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/constructs/internal/sfnretry"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/layers"
	"github.com/unschedule/unschedule/internal/metrics"
)

// ExecutionLayer is what fires an item at its due time. Every layer uses
// the same item contract, the same conditional claim (the expiry
// function's firing core) and hands the Target the same payload: switching
// the layer changes none of the adopter's code. See the README's
// "Choosing a layer".
type ExecutionLayer = layers.Name

// The execution layers.
const (
	// LayerEventBridgeScheduler: one one-off EventBridge Scheduler
	// schedule per item (the default).
	LayerEventBridgeScheduler = layers.EventBridgeScheduler
	// LayerStepFunctions: one Standard state machine execution per item
	// and due time: Wait (TimestampPath $.at), then invoke the expiry
	// function with $.payload. Due times more than 364 days away are
	// rejected by the worker (an execution lasts at most one year).
	LayerStepFunctions = layers.StepFunctions
	// LayerTTL: one marker item per item whose TTL attribute is the due
	// time; the table's stream, filtered to TTL deletions, invokes the
	// expiry function. Free, but late: DynamoDB deletes expired items
	// typically within two days, so MaxLateness must allow 48 hours.
	LayerTTL = layers.TTL
)

// EnvMaxLateness is MaxLateness in seconds, in the TTL watch's
// environment (lambdas/ttlwatch).
const EnvMaxLateness = "MAX_LATENESS_SECONDS"

// Defaults of the layer props TTLBatchSize, TTLParallelizationFactor and
// TTLOverdueCheckEvery (the TTL watch scans every 6 hours).
const (
	DefaultTTLBatchSize              = 10
	DefaultTTLParallelizationFactor  = 1
	DefaultTTLOverdueCheckEveryHours = 6
)

// Fixed settings of the layers: no prop changes them.
const (
	// DefaultTTLRetryAttempts is how often the TTL stream mapping retries
	// a failed batch before it goes to TTLFailureQueue.
	DefaultTTLRetryAttempts = 10
	// TTLWatchTimeoutMin bounds one scan of the TTL watch.
	TTLWatchTimeoutMin = 15
	// DefaultStateMachineRetries is how often the state machine retries
	// a failed invocation of the expiry function (backoff from 1 minute,
	// rate 2: the last one about an hour after the due time).
	DefaultStateMachineRetries = 6
)

// layerDefaults fills the layer props.
func layerDefaults(p *ScheduleOnWriteProps) {
	if p.ExecutionLayer == "" {
		p.ExecutionLayer = LayerEventBridgeScheduler
	}
	// An imported table's TTL cannot be read: its TTLAttribute is required.
	if p.TTLAttribute == "" && (p.ExistingTable == nil || resource.InspectTable(p.ExistingTable).Known) {
		p.TTLAttribute = layers.DefaultTTLAttr
	}
	p.TTLOverdueCheckEvery = propcheck.DurationOr(p.TTLOverdueCheckEvery, awscdk.Duration_Hours(jsii.Number(DefaultTTLOverdueCheckEveryHours)))
	p.TTLBatchSize = jsii.Number(propcheck.Number(p.TTLBatchSize, DefaultTTLBatchSize))
	p.TTLParallelizationFactor = jsii.Number(propcheck.Number(p.TTLParallelizationFactor, DefaultTTLParallelizationFactor))
}

// validateLayer checks the layer props.
func validateLayer(id string, p ScheduleOnWriteProps) {
	// Exact names only: the build below switches on them, so an alias
	// (layers.Parse's "stepfunctions") would silently build the default.
	if !slices.Contains(layers.All, p.ExecutionLayer) {
		panic(fmt.Sprintf("%s: ExecutionLayer %q is unknown: use one of %s (LayerEventBridgeScheduler, LayerStepFunctions, LayerTTL)",
			id, p.ExecutionLayer, layerList()))
	}
	// What the scheduler and Lambda's asynchronous invocation do exists on
	// the Scheduler layer only; the other layers invoke synchronously.
	onlyOn(id, p.ExecutionLayer, LayerEventBridgeScheduler, []setProp{
		{"ScheduleRetryAttempts", *p.ScheduleRetryAttempts != DefaultScheduleRetryAttempts},
		{"ScheduleMaxEventAge", *p.ScheduleMaxEventAge.ToSeconds(nil) != DefaultScheduleMaxEventAgeSec},
		{"ExistingDeadLetterQueue", p.ExistingDeadLetterQueue != nil},
		{"DeadLetterQueueProps", p.DeadLetterQueueProps != nil},
		{"ExpiryMaxEventAge", *p.ExpiryMaxEventAge.ToSeconds(nil) != DefaultExpiryMaxEventAgeSec},
		{"ExpiryRetryAttempts", *p.ExpiryRetryAttempts != DefaultExpiryRetryAttempts},
		{"ExistingExpiryFailureQueue", p.ExistingExpiryFailureQueue != nil},
		{"ExpiryFailureQueueProps", p.ExpiryFailureQueueProps != nil},
	})
	onlyOn(id, p.ExecutionLayer, LayerTTL, []setProp{
		{"TTLBatchSize", p.TTLBatchSize != nil && *p.TTLBatchSize != DefaultTTLBatchSize},
		{"TTLParallelizationFactor", p.TTLParallelizationFactor != nil && *p.TTLParallelizationFactor != DefaultTTLParallelizationFactor},
		{"TTLMaxConcurrency", p.TTLMaxConcurrency != nil},
		{"TTLOverdueCheckEvery", *p.TTLOverdueCheckEvery.ToSeconds(nil) != DefaultTTLOverdueCheckEveryHours*3600},
	})
	if p.ExecutionLayer != LayerTTL {
		return
	}
	if p.MaxLateness == nil {
		panic(fmt.Sprintf("%s: ExecutionLayer TTL fires items late (DynamoDB deletes expired items typically within two days): "+
			"set MaxLateness to what your items tolerate, at least %s, or use ExecutionLayer StepFunctions or EventBridgeScheduler", id, layers.TTLPrecision))
	}
	if !*awscdk.Token_IsUnresolved(p.MaxLateness.ToSeconds(nil)) {
		if err := layers.CheckLateness(time.Duration(*p.MaxLateness.ToSeconds(nil)) * time.Second); err != nil {
			panic(fmt.Sprintf("%s: %v", id, err))
		}
	}
	propcheck.CheckSeconds(id, "TTLOverdueCheckEvery", p.TTLOverdueCheckEvery, 3600, 86400,
		"whole hours or minutes from 1 hour to 1 day; each check scans the table")
	if p.ExistingTable != nil {
		checkTableTTL(id, p)
	}
	propcheck.CheckWhole(id, "TTLBatchSize", *p.TTLBatchSize, 1, 10000, "records per invocation; Lambda allows 1 to 10000 for a DynamoDB stream")
	propcheck.CheckWhole(id, "TTLParallelizationFactor", *p.TTLParallelizationFactor, 1, 10, "concurrent batches per shard; Lambda allows 1 to 10")
	if p.TTLMaxConcurrency != nil {
		propcheck.CheckWhole(id, "TTLMaxConcurrency", *p.TTLMaxConcurrency, 1, 1000, "the expiry function's reserved concurrency")
	}
}

// buildStepFunctions makes the state machine: Wait until $.at, then
// invoke the expiry function with $.payload (synchronously, retried with
// backoff; a failed execution is alarmed). Its role may invoke only the
// expiry function.
func (s *ScheduleOnWrite) buildStepFunctions(c constructs.Construct, p ScheduleOnWriteProps) {
	wait := awsstepfunctions.NewWait(c, jsii.String(layers.WaitState), &awsstepfunctions.WaitProps{
		Time: awsstepfunctions.WaitTime_TimestampPath(jsii.String(layers.TimestampPath)),
	})
	fire := awsstepfunctionstasks.NewLambdaInvoke(c, jsii.String(layers.FireState), &awsstepfunctionstasks.LambdaInvokeProps{
		LambdaFunction:           s.Expiry.Function,
		Payload:                  awsstepfunctions.TaskInput_FromJsonPathAt(jsii.String(layers.PayloadPath)),
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
		Retention: awslogs.RetentionDays_ONE_MONTH, RemovalPolicy: p.RemovalPolicy,
	})
	s.StateMachine = awsstepfunctions.NewStateMachine(c, jsii.String("StateMachine"), &awsstepfunctions.StateMachineProps{
		StateMachineType: awsstepfunctions.StateMachineType_STANDARD,
		DefinitionBody:   awsstepfunctions.DefinitionBody_FromChainable(wait.Next(fire)),
		Comment:          jsii.String("Waits until an item's due time, then fires it (the expiry function's conditional claim)"),
		TracingEnabled:   jsii.Bool(true),
		// Every state, without the input (keys and due time only anyway).
		Logs: &awsstepfunctions.LogOptions{Destination: logs, Level: awsstepfunctions.LogLevel_ALL, IncludeExecutionData: jsii.Bool(false)},
	})
	nag.Suppress(s.StateMachine.Role().Node().FindChild(jsii.String("DefaultPolicy")), nag.Rule{ID: "AwsSolutions-IAM5",
		AppliesTo: []any{"Resource::*", nag.Regex(`/^Resource::<[A-Za-z0-9]+Expiry[A-Za-z0-9]+\.Arn>:\*$/g`)},
		Reason: "The state machine invokes the expiry function only (its ARN, and its versions: the LambdaInvoke task grants both); " +
			"X-Ray segments and CloudWatch Logs delivery have no resource-level permissions."})
	s.FailedExecutionsAlarm = alarms.AtLeast(c, "FailedExecutionsAlarm",
		"Executions of the Step Functions layer failed: the expiry function kept failing after every retry, so those items did not fire. "+
			"Inspect the failed executions, fix the cause, then start them again with the same input.",
		s.StateMachine.MetricFailed(alarms.SumOptions(nil)), 1, p.AlarmTopic)
}

// buildTTL enables TTL on a new table and maps the table's stream,
// filtered to TTL deletions of markers, to the expiry function.
func (s *ScheduleOnWrite) buildTTL(c constructs.Construct, id string, p ScheduleOnWriteProps) {
	var q awssqs.Queue
	s.TTLFailureQueue, q = resource.Queue(c, id, "TTLFailureQueue", nil, "", nil, "", resource.DeadLetterQueueProps(p.RemovalPolicy))
	nag.Suppress(q, nag.Rule{ID: "AwsSolutions-SQS3", Reason: "This queue is the TTL mapping's on-failure destination; a DLQ of a DLQ adds nothing"})
	var pattern map[string]any
	if err := json.Unmarshal([]byte(layers.TTLFilterPattern()), &pattern); err != nil {
		panic(err)
	}
	s.TTLMapping = awslambda.NewEventSourceMapping(c, jsii.String("TTLMapping"), &awslambda.EventSourceMappingProps{
		Target:                  s.Expiry.Function,
		EventSourceArn:          s.Table.TableStreamArn(),
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               p.TTLBatchSize,
		ParallelizationFactor:   p.TTLParallelizationFactor,
		ReportBatchItemFailures: jsii.Bool(true),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(DefaultTTLRetryAttempts),
		MaxRecordAge:            awscdk.Duration_Days(jsii.Number(1)),
		OnFailure:               awslambdaeventsources.NewSqsDlq(s.TTLFailureQueue),
		Filters:                 &[]*map[string]any{awslambda.FilterCriteria_Filter(&pattern)},
	})
	s.Table.GrantStreamRead(s.Expiry.Function)
	nag.Suppress(nag.RolePolicy(s.Expiry.Function), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{"Resource::*"},
		Reason: "dynamodb:ListStreams has no resource-level permissions (the TTL layer's stream mapping needs it); stream reads are on the table's stream only."})
	s.TTLFailureQueue.GrantSendMessages(s.Expiry.Function)
	s.TTLFailureAlarm = alarms.QueueNotEmpty(c, "TTLFailureAlarm", s.TTLFailureQueue,
		"TTL deletions of markers could not be fired after every retry: those items did not fire. Each message names the stream records; "+
			"invoke the expiry function with each marker's payload.", p.AlarmTopic)
	s.buildTTLWatch(c, p)
	s.TTLDispatchFailedAlarm = alarms.AtLeast(c, "TTLDispatchFailedAlarm",
		"The expiry function failed to fire TTL deletions (the table, or the target); the stream retries them. Check its logs.",
		alarms.CustomMetric(c, metrics.FunctionExpiry, metrics.TTLDispatchFailed, "Sum", nil), 1, p.AlarmTopic)
}

// checkTableTTL panics unless TTL is enabled on TTLAttribute of
// ExistingTable: otherwise markers never expire and no item fires. For a
// Table or TableV2 of this app synth reads its TTL; for an imported table
// it cannot, so TTLAttribute is required (and must have TTL enabled).
func checkTableTTL(id string, p ScheduleOnWriteProps) {
	enable := fmt.Sprintf("aws dynamodb update-time-to-live --table-name <table> --time-to-live-specification Enabled=true,AttributeName=%s", p.TTLAttribute)
	if p.TTLAttribute == "" {
		panic(fmt.Sprintf("%s: ExistingTable %s is imported, so synth cannot see its TTL: set TTLAttribute to the attribute TTL is enabled on "+
			"(ExecutionLayer TTL's markers expire through it; enable it with aws dynamodb update-time-to-live, e.g. AttributeName=%s)",
			id, *p.ExistingTable.Node().Path(), layers.DefaultTTLAttr))
	}
	info := resource.InspectTable(p.ExistingTable)
	if !info.Known || info.TTLAttribute == p.TTLAttribute {
		return
	}
	if info.TTLAttribute == "" {
		panic(fmt.Sprintf("%s: ExistingTable %s has no TTL, so the markers of ExecutionLayer TTL would never expire and no item would fire: "+
			"enable TTL on attribute %q (awsdynamodb.TableProps.TimeToLiveAttribute = %q, or %s)",
			id, *p.ExistingTable.Node().Path(), p.TTLAttribute, p.TTLAttribute, enable))
	}
	panic(fmt.Sprintf("%s: ExistingTable %s has TTL on attribute %q, not on TTLAttribute %q, so the markers would never expire: "+
		"set TTLAttribute to %q (a table has one TTL attribute)", id, *p.ExistingTable.Node().Path(), info.TTLAttribute, p.TTLAttribute, info.TTLAttribute))
}

// setProp is a prop and whether it was set (to other than its default).
type setProp struct {
	name string
	set  bool
}

// onlyOn panics when a prop that applies to layer only is set while the
// construct uses another layer.
func onlyOn(id string, given, layer ExecutionLayer, props []setProp) {
	if given == layer {
		return
	}
	for _, p := range props {
		if p.set {
			panic(fmt.Sprintf("%s: %s applies to ExecutionLayer %s only (given %s): remove it", id, p.name, layer, given))
		}
	}
}

// layerList is the valid ExecutionLayer values, comma-separated.
func layerList() string {
	names := make([]string, len(layers.All))
	for i, l := range layers.All {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// buildTTLWatch adds the periodic look for overdue markers: a function
// that scans the table every TTLOverdueCheckEvery and publishes how many
// markers expired more than MaxLateness ago and still exist, and an
// alarm on that count. A marker DynamoDB never deletes (TTL not enabled
// on the attribute) makes no stream record, so nothing else can see it.
func (s *ScheduleOnWrite) buildTTLWatch(c constructs.Construct, p ScheduleOnWriteProps) {
	every := p.TTLOverdueCheckEvery
	s.TTLWatch = gofn.NewFunction(c, jsii.String("TTLWatch"), &gofn.FunctionProps{
		Entry:       "lambdas/ttlwatch",
		Description: "Counts TTL markers still in the table more than MaxLateness after their expiry",
		Timeout:     awscdk.Duration_Minutes(jsii.Number(TTLWatchTimeoutMin)),
		Logs:        p.Logs,
		Environment: map[string]string{"TABLE_NAME": *s.Table.TableName(), "TTL_ATTRIBUTE": p.TTLAttribute,
			contract.EnvVar: p.Schema.EnvValue(), EnvMaxLateness: fmt.Sprint(*p.MaxLateness.ToSeconds(nil))},
	})
	grants.Table(s.Table, s.TTLWatch.Function, "dynamodb:Scan")
	awsevents.NewRule(c, jsii.String("TTLWatchSchedule"), &awsevents.RuleProps{
		Description: jsii.String("Runs the TTL watch: overdue markers"),
		Schedule:    awsevents.Schedule_Rate(every),
		Targets:     &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(s.TTLWatch.Function, nil)},
	})
	// Maximum over one interval: the gauge of the last run, so the alarm
	// stays in ALARM while markers stay overdue.
	overdue := alarms.CustomMetric(c, metrics.FunctionTTLWatch, metrics.TTLOverdueMarkers, "Maximum", every)
	s.TTLOverdueAlarm = alarms.AtLeast(c, "TTLOverdueAlarm",
		fmt.Sprintf("Markers of the TTL layer are still in the table more than MaxLateness (%s) after their expiry: their items have not fired. "+
			"Check that TTL is enabled on attribute %q of the table (aws dynamodb describe-time-to-live); the TTL watch's logs name the markers.",
			*p.MaxLateness.ToHumanString(), p.TTLAttribute),
		overdue, 1, p.AlarmTopic)
	s.TTLWatchErrorsAlarm = alarms.AtLeast(c, "TTLWatchErrorsAlarm",
		"The TTL watch failed (its scan of the table): overdue markers are not being looked for. Check its logs.",
		s.TTLWatch.Function.MetricErrors(alarms.SumOptions(&awscloudwatch.MetricOptions{Period: every})), 1, p.AlarmTopic)
}

// expiryReservedConcurrency is the expiry function's reserved concurrency:
// TTLMaxConcurrency with LayerTTL, whose mapping is then the function's
// only caller. A stream mapping has no MaximumConcurrency (SQS only:
// https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-lambda-eventsourcemapping-scalingconfig.html).
func expiryReservedConcurrency(p ScheduleOnWriteProps) *float64 {
	if p.ExecutionLayer != LayerTTL {
		return nil
	}
	return p.TTLMaxConcurrency
}

// layerEnvironment is the environment of the functions that create, move
// and cancel schedules, for the layer.
func (s *ScheduleOnWrite) layerEnvironment() map[string]string {
	switch s.layer {
	case LayerStepFunctions:
		return map[string]string{layers.EnvVar: string(s.layer), "STATE_MACHINE_ARN": *s.StateMachine.StateMachineArn()}
	case LayerTTL:
		return map[string]string{layers.EnvVar: string(s.layer), "TABLE_NAME": *s.Table.TableName(), "TTL_ATTRIBUTE": s.ttlAttr}
	}
	return nil
}

// grantLayer grants what creating, moving and cancelling takes in the
// Step Functions and TTL layers: start and list executions of this state
// machine and stop and describe only its executions; or put and delete
// items of the table (the markers).
func (s *ScheduleOnWrite) grantLayer(grantee awsiam.IGrantable) awsiam.Grant {
	if s.layer == LayerTTL {
		return grants.Table(s.Table, grantee, "dynamodb:PutItem", "dynamodb:DeleteItem")
	}
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("states:StartExecution", "states:ListExecutions"),
		ResourceArns: jsii.Strings(*s.StateMachine.StateMachineArn()),
	})
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("states:StopExecution", "states:DescribeExecution"),
		ResourceArns: &[]*string{s.executionArnPattern()},
	})
	return g
}

// executionArnPattern matches the executions of the state machine only.
func (s *ScheduleOnWrite) executionArnPattern() *string {
	return awscdk.Stack_Of(s.Construct).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("states"),
		Resource:     jsii.String(layers.ExecutionsPath),
		ResourceName: jsii.String(*s.StateMachine.StateMachineName() + ":*"),
		ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
	})
}

// Layer is the construct's execution layer.
func (s *ScheduleOnWrite) Layer() ExecutionLayer { return s.layer }

// MetricTTLDispatchFailed counts TTL deletions whose firing failed.
// Default: Sum over 5 minutes.
func (s *ScheduleOnWrite) MetricTTLDispatchFailed(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(s.Construct, metrics.FunctionExpiry, metrics.TTLDispatchFailed, opts)
}
