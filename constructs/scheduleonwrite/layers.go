package scheduleonwrite

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctionstasks"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
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

// Defaults of the layer props.
const (
	DefaultTTLBatchSize             = 10
	DefaultTTLParallelizationFactor = 1
	DefaultTTLRetryAttempts         = 10
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
	if p.TTLAttribute == "" {
		p.TTLAttribute = layers.DefaultTTLAttr
	}
	p.TTLBatchSize = jsii.Number(propcheck.Number(p.TTLBatchSize, DefaultTTLBatchSize))
	p.TTLParallelizationFactor = jsii.Number(propcheck.Number(p.TTLParallelizationFactor, DefaultTTLParallelizationFactor))
}

// validateLayer checks the layer props.
func validateLayer(id string, p ScheduleOnWriteProps) {
	if _, err := layers.Parse(string(p.ExecutionLayer)); err != nil {
		panic(fmt.Sprintf("%s: ExecutionLayer: %v", id, err))
	}
	if p.ExecutionLayer != LayerTTL {
		for name, set := range map[string]bool{"TTLBatchSize": p.TTLBatchSize != nil && *p.TTLBatchSize != DefaultTTLBatchSize,
			"TTLParallelizationFactor": p.TTLParallelizationFactor != nil && *p.TTLParallelizationFactor != DefaultTTLParallelizationFactor,
			"TTLMaxConcurrency":        p.TTLMaxConcurrency != nil} {
			if set {
				panic(fmt.Sprintf("%s: %s applies to ExecutionLayer TTL only (given %s): remove it", id, name, p.ExecutionLayer))
			}
		}
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
		RetryOnServiceExceptions: jsii.Bool(true),
	})
	fire.AddRetry(&awsstepfunctions.RetryProps{
		Errors:      jsii.Strings("States.ALL"),
		Interval:    awscdk.Duration_Minutes(jsii.Number(1)),
		BackoffRate: jsii.Number(2),
		MaxAttempts: jsii.Number(DefaultStateMachineRetries),
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
	s.TTLDispatchFailedAlarm = alarms.AtLeast(c, "TTLDispatchFailedAlarm",
		"The expiry function failed to fire TTL deletions (the table, or the target); the stream retries them. Check its logs.",
		alarms.CustomMetric(c, metrics.FunctionExpiry, metrics.TTLDispatchFailed, "Sum", nil), 1, p.AlarmTopic)
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
