// Package cancellation is the stream pipeline of a schedule-on-write
// table: its DynamoDB stream feeds a stream processor that decides, per
// item change, whether the item's schedule must be created, cancelled or
// moved, and enqueues that on an SQS FIFO queue (one message group per
// item); a worker consumes the queue and creates, deletes or moves the
// schedule. So any writer schedules: a plain PutItem of an armed item
// (contract.Schema) gets its schedule here, unless the writer made it
// itself and said so (contract.Schema.InlineAttr).
//
// Every stage assumes it runs twice: the stream mapping retries and
// bisects, the queue deduplicates replays by item and stream event, and
// the worker treats a missing schedule as done and creates with the
// contract's ClientToken. Whatever this pipeline misses fires harmlessly
// (the firing's conditional claim).
package cancellation

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

// TimerManager is what the pipeline needs of the table's timer
// (scheduleonwrite.TimerBinding: ScheduleOnWrite.Timer, or the timer you
// passed it).
type TimerManager interface {
	// GrantModify lets grantee create, move and cancel the items' timers
	// (with the scheduler timer: schedules inside its group only, and pass
	// the scheduler role).
	GrantModify(grantee awsiam.IGrantable) awsiam.Grant
	// Environment is the environment a function that creates, moves or
	// cancels timers reads.
	Environment() map[string]string
}

// SchemaSource is a TimerManager that also knows the item schema (a bound
// scheduleonwrite timer does): the pipeline then takes its schema by
// default, and refuses a different one.
type SchemaSource interface {
	Schema() contract.Schema
}

// CancellationProps configures the pipeline. Zero numbers take their
// default.
type CancellationProps struct {
	// Table is the schedule-on-write table. Its stream must carry
	// NEW_AND_OLD_IMAGES: the processor compares the transition. For a
	// Table or TableV2 of this app, synth checks its stream and keys
	// against Schema; for a table imported with attributes, give its
	// TableStreamArn (the key names in Schema are trusted). Required.
	Table awsdynamodb.ITable
	// Timer fires the table's items: the bound timer of its
	// ScheduleOnWrite (ScheduleOnWrite.Timer). Required.
	Timer TimerManager
	// Schema names the items' keys, due and state attributes and armed
	// states; the stream filter is built from its StateAttr and
	// ArmedStates, and both functions read it from contract.EnvVar.
	// Default: the Timer's schema when it has one (a bound
	// scheduleonwrite timer), else contract.Default().
	Schema contract.Schema
	// AlarmTopic receives every alarm of the pipeline.
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
	// RemovalPolicy of the queues this construct creates (the work
	// queue, its dead-letter queue and the stream failure queue): RETAIN
	// keeps them, and what they hold, when the stack is deleted.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// Logs of both functions.
	// Default: one month, retained.
	Logs gofn.LogOptions

	// BatchSize is the most stream records per processor invocation
	// (1..10000).
	// Default: 10.
	BatchSize float64
	// MaxRecordAge: a stream record older than this is not retried but
	// reported to the stream failure queue (1 minute..1 day). An hour
	// lets the processor ride out an SQS or Lambda incident, and stops a
	// shard from being held up for longer than that.
	// Default: one hour.
	MaxRecordAge awscdk.Duration
	// RetryAttempts of a failing stream batch before its records go to the
	// stream failure queue (1..10000; bisecting needs at least one, so
	// jsii.Number(0) fails synth). A retry starts at the first record the
	// processor reported failed; bisecting splits a batch that failed as a
	// whole (a crash or timeout).
	// Default: 5.
	RetryAttempts *float64
	// WorkerBatchSize is the most queue messages per worker invocation
	// (1..10, the FIFO limit).
	// Default: 10.
	WorkerBatchSize float64
	// WorkerMaxConcurrency caps concurrent worker invocations (the SQS
	// event source's maximumConcurrency, 2..1000). The worker makes its
	// Scheduler calls one after another; Create, Update and Delete have
	// per-account, per-Region request-rate quotas (from 50 per second)
	// shared with the API's creates and the reconciler; 2 stays well
	// under the lowest of them. Raise it together with those quotas.
	// Default: 2.
	WorkerMaxConcurrency float64
	// WorkerTimeout is the worker's timeout (1 s..15 min). The queue's
	// visibility timeout is VisibilityTimeoutFactor times this.
	// Default: 30 seconds.
	WorkerTimeout awscdk.Duration
	// MaxReceiveCount is how many times a queue message is delivered
	// before it moves to the dead-letter queue (1..1000).
	// Default: 5.
	MaxReceiveCount float64

	// ExistingQueue is your own FIFO queue between the functions
	// (content-based deduplication off; its visibility timeout and
	// redrive policy are yours). Not with QueueProps.
	// Default: a new FIFO queue (QueueProps).
	ExistingQueue awssqs.IQueue
	// QueueProps override, field by field, the new FIFO queue's props
	// (SQS-managed encryption, TLS only); FIFO, deduplication, visibility
	// timeout and the dead-letter queue stay the construct's. Not with
	// ExistingQueue.
	// Default: those.
	QueueProps *awssqs.QueueProps
	// ExistingDeadLetterQueue is your own FIFO dead-letter queue for the
	// messages the worker gave up on (it is then alarmed). Not with
	// DeadLetterQueueProps. With ExistingQueue, it is only alarmed: the
	// queue's redrive policy is yours.
	// Default: a new FIFO queue (DeadLetterQueueProps), unless
	// ExistingQueue is set.
	ExistingDeadLetterQueue awssqs.IQueue
	// DeadLetterQueueProps override the new dead-letter queue's props
	// (FIFO, SQS-managed encryption, TLS only, 14 days). Not with
	// ExistingDeadLetterQueue.
	// Default: those.
	DeadLetterQueueProps *awssqs.QueueProps
	// ExistingStreamFailureQueue is your own standard queue for the
	// stream batches the processor gave up on. Not with
	// StreamFailureQueueProps.
	// Default: a new queue (StreamFailureQueueProps).
	ExistingStreamFailureQueue awssqs.IQueue
	// StreamFailureQueueProps override the new stream failure queue's
	// props (SQS-managed encryption, TLS only, 14 days). Not with
	// ExistingStreamFailureQueue.
	// Default: those.
	StreamFailureQueueProps *awssqs.QueueProps
}

// Cancellation is the stream processor, the FIFO queue and the worker,
// with their dead-letter queues and alarms.
type Cancellation struct {
	constructs.Construct
	// Processor reads the table's stream and enqueues creates, cancels
	// and moves.
	Processor *gofn.Function
	// StreamFailureQueue receives the description (shard, sequence
	// numbers) of stream batches the processor gave up on.
	StreamFailureQueue awssqs.IQueue
	// Queue is the FIFO queue of schedule changes: one message group per
	// item, deduplicated by item and stream event.
	Queue awssqs.IQueue
	// DeadLetterQueue receives messages the worker failed MaxReceiveCount
	// times (FIFO, like Queue); nil with an ExistingQueue and no
	// ExistingDeadLetterQueue.
	DeadLetterQueue awssqs.IQueue
	// Worker consumes Queue and creates, deletes or moves schedules.
	Worker *gofn.Function

	// StreamFailureAlarm fires when a stream batch was given up on.
	StreamFailureAlarm awscloudwatch.Alarm
	// DeadLetterAlarm fires when a queue message was given up on (nil
	// without a DeadLetterQueue).
	DeadLetterAlarm awscloudwatch.Alarm
	// IteratorAgeAlarm fires when the processor lags the stream by more
	// than IteratorAgeAlarmSec.
	IteratorAgeAlarm awscloudwatch.Alarm
	// ProcessorErrorsAlarm fires when a processor invocation failed as a
	// whole (crash, timeout); single records fail as batch item failures.
	ProcessorErrorsAlarm awscloudwatch.Alarm
	// WorkerErrorsAlarm fires when a worker invocation failed as a whole.
	WorkerErrorsAlarm awscloudwatch.Alarm
	// MalformedRecordsAlarm, UndeliverableAlarm and EnqueueFailedAlarm
	// fire on the processor's error metrics of those names
	// (metrics.ErrorMetrics[metrics.FunctionStreamProcessor]).
	MalformedRecordsAlarm, UndeliverableAlarm, EnqueueFailedAlarm awscloudwatch.Alarm
	// WorkerMalformedAlarm, WorkerRetryableFailuresAlarm and
	// WorkerScheduleRefusedAlarm fire on the worker's Malformed,
	// RetryableFailures and ScheduleRefused metrics
	// (metrics.ErrorMetrics[metrics.FunctionCancelWorker]).
	WorkerMalformedAlarm, WorkerRetryableFailuresAlarm, WorkerScheduleRefusedAlarm awscloudwatch.Alarm
}

// NewCancellation builds the pipeline on props.Table's stream.
func NewCancellation(scope constructs.Construct, id *string, props *CancellationProps) *Cancellation {
	p := withDefaults(*id, props)
	validate(*id, p)
	c := constructs.NewConstruct(scope, id)
	x := &Cancellation{Construct: c}
	schema := p.Schema.EnvValue()

	// The queue between the two functions, and its dead-letter queue.
	var dlq awssqs.Queue
	if p.ExistingQueue == nil || p.ExistingDeadLetterQueue != nil {
		fifo := resource.DeadLetterQueueProps(p.RemovalPolicy)
		fifo.Fifo = jsii.Bool(true) // the dead-letter queue of a FIFO queue is FIFO
		x.DeadLetterQueue, dlq = resource.Queue(c, *id, "DeadLetterQueue", p.ExistingDeadLetterQueue, "ExistingDeadLetterQueue",
			p.DeadLetterQueueProps, "DeadLetterQueueProps", fifo)
	}
	if p.ExistingQueue != nil {
		x.Queue = p.ExistingQueue
	} else {
		qp := propcheck.Merge(awssqs.QueueProps{
			Encryption: awssqs.QueueEncryption_SQS_MANAGED, EnforceSSL: jsii.Bool(true), RemovalPolicy: p.RemovalPolicy,
		}, p.QueueProps)
		qp.Fifo = jsii.Bool(true)
		// The processor sets MessageDeduplicationId from the item and the
		// stream event: the same stream record gives the same id, two
		// changes of one item with equal bodies do not.
		qp.ContentBasedDeduplication = jsii.Bool(false)
		qp.VisibilityTimeout = awscdk.Duration_Seconds(jsii.Number(VisibilityTimeoutFactor * *p.WorkerTimeout.ToSeconds(nil)))
		qp.DeadLetterQueue = &awssqs.DeadLetterQueue{Queue: x.DeadLetterQueue, MaxReceiveCount: jsii.Number(p.MaxReceiveCount)}
		x.Queue = awssqs.NewQueue(c, jsii.String("Queue"), &qp)
	}
	if x.DeadLetterQueue != nil {
		x.DeadLetterAlarm = alarms.QueueNotEmpty(c, "DeadLetterAlarm", x.DeadLetterQueue,
			"The cancellation worker gave up on a message: a schedule may be missing, still live or at an old time (a stale one fires harmlessly; "+
				"the reconciler, where deployed, repairs it). Inspect the message and the worker's logs, then redrive.", p.AlarmTopic)
	}

	// Stream → processor.
	var failures awssqs.Queue
	x.StreamFailureQueue, failures = resource.Queue(c, *id, "StreamFailureQueue", p.ExistingStreamFailureQueue, "ExistingStreamFailureQueue",
		p.StreamFailureQueueProps, "StreamFailureQueueProps", resource.DeadLetterQueueProps(p.RemovalPolicy))
	x.StreamFailureAlarm = alarms.QueueNotEmpty(c, "StreamFailureAlarm", x.StreamFailureQueue,
		"The stream processor gave up on stream records (retries or record age exhausted): their schedules may be missing or stale. "+
			"The message names the shard and sequence numbers.", p.AlarmTopic)

	x.Processor = gofn.NewFunction(c, jsii.String("Processor"), &gofn.FunctionProps{
		Entry:       "lambdas/streamprocessor",
		Description: "Reads the table's stream; enqueues a create, cancel or move for each change of an armed item",
		Timeout:     awscdk.Duration_Seconds(jsii.Number(ProcessorTimeoutSec)),
		Logs:        p.Logs,
		Environment: map[string]string{envvars.QueueURL: *x.Queue.QueueUrl(), envvars.ItemSchema: schema},
	})
	x.Queue.GrantSendMessages(x.Processor.Function)
	x.Processor.Function.AddEventSource(awslambdaeventsources.NewDynamoEventSource(p.Table, &awslambdaeventsources.DynamoEventSourceProps{
		// TRIM_HORIZON: when the mapping is created (or re-created) while
		// the table is in use, the changes of the last 24 hours are still
		// handled instead of silently skipped. Replaying them is harmless:
		// every stage is idempotent.
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(p.BatchSize),
		ReportBatchItemFailures: jsii.Bool(true),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           p.RetryAttempts,
		MaxRecordAge:            p.MaxRecordAge,
		OnFailure:               awslambdaeventsources.NewSqsDlq(x.StreamFailureQueue),
		Filters:                 StreamFilters(p.Schema),
	}))

	// Queue → worker.
	env := map[string]string{envvars.ItemSchema: schema}
	for k, v := range p.Timer.Environment() {
		env[k] = v
	}
	x.Worker = gofn.NewFunction(c, jsii.String("Worker"), &gofn.FunctionProps{
		Entry:       "lambdas/cancelworker",
		Description: "Creates the schedules of items their writer did not schedule; deletes those of items no longer armed; moves those whose due time changed",
		Timeout:     p.WorkerTimeout,
		Logs:        p.Logs,
		Environment: env,
	})
	// Create (items written by others), Update and Delete in the group,
	// and PassRole of the scheduler role.
	p.Timer.GrantModify(x.Worker.Function)
	x.Worker.Function.AddEventSource(awslambdaeventsources.NewSqsEventSource(x.Queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(p.WorkerBatchSize),
		MaxConcurrency:          jsii.Number(p.WorkerMaxConcurrency),
		ReportBatchItemFailures: jsii.Bool(true),
	}))

	if failures != nil {
		nag.Suppress(failures.Node().DefaultChild(), nag.Rule{ID: "AwsSolutions-SQS3",
			Reason: "This queue is a dead-letter queue: the stream mapping's on-failure destination, alarmed when not empty."})
	}
	if dlq != nil {
		nag.Suppress(dlq.Node().DefaultChild(), nag.Rule{ID: "AwsSolutions-SQS3",
			Reason: "This queue is the FIFO queue's dead-letter queue, alarmed when not empty."})
	}
	nag.Suppress(nag.RolePolicy(x.Processor.Function), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{"Resource::*"},
		Reason: "dynamodb:ListStreams has no resource-level permissions; the DynamoDB event source adds it. Stream reads are on the table's stream only."})
	nag.Suppress(nag.RolePolicy(x.Worker.Function), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{nag.ScheduleGroupWildcard, nag.ExecutionsWildcard},
		Reason: "The worker creates, deletes and moves the schedules of any item, and only those: every schedule inside the table's schedule group " +
			"(or, with the Step Functions timer, every execution of the table's state machine), none outside it."})

	// Lag and whole-invocation failures.
	five := awscdk.Duration_Minutes(jsii.Number(5))
	x.IteratorAgeAlarm = alarms.New(c, "IteratorAgeAlarm",
		"The stream processor lags the table's stream by more than 5 minutes: schedule changes are late. "+
			"Check the processor's errors, throttles and the queue.",
		x.Processor.Function.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: five}),
		IteratorAgeAlarmSec*1000, awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, p.AlarmTopic)
	sum := &awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: five}
	x.ProcessorErrorsAlarm = alarms.AtLeast(c, "ProcessorErrorsAlarm",
		"Stream processor invocations failed (crash or timeout): the stream retries them. Check the processor's logs.",
		x.Processor.Function.MetricErrors(sum), 1, p.AlarmTopic)
	x.WorkerErrorsAlarm = alarms.AtLeast(c, "WorkerErrorsAlarm",
		"Cancellation worker invocations failed (crash or timeout): their messages are delivered again. Check the worker's logs.",
		x.Worker.Function.MetricErrors(sum), 1, p.AlarmTopic)

	processorAlarms := alarms.ErrorMetricAlarms(c, "", metrics.FunctionStreamProcessor, map[string]string{
		metrics.MalformedRecords: "The stream processor skipped stream records it could not decode: their schedules were not changed. " +
			"Check that the table's items match the schema in " + contract.EnvVar + " (string keys, due and state attributes) and the processor's logs.",
		metrics.Undeliverable: "The stream processor skipped records whose message lacks the item's key, or whose armed item's due time is not RFC 3339 " +
			"(nothing could fire it): check the table's key names against the schema's PartitionKey and SortKey, and the writers' due times " +
			"(the log line names the key).",
		metrics.EnqueueFailed: "The FIFO queue refused messages of the stream processor; their records are retried, then reported " +
			"to the stream failure queue. Check the queue and the processor's sqs:SendMessage grant.",
	}, p.AlarmTopic)
	alarms.Assign(metrics.FunctionStreamProcessor, processorAlarms, map[string]*awscloudwatch.Alarm{
		metrics.MalformedRecords: &x.MalformedRecordsAlarm, metrics.Undeliverable: &x.UndeliverableAlarm, metrics.EnqueueFailed: &x.EnqueueFailedAlarm,
	})
	workerAlarms := alarms.ErrorMetricAlarms(c, "Worker", metrics.FunctionCancelWorker, map[string]string{
		metrics.Malformed: "The cancellation worker got messages it can never handle; they move to the dead-letter queue. " +
			"Check the worker's logs and the schema in " + contract.EnvVar + ".",
		metrics.RetryableFailures: "Scheduler calls of the cancellation worker failed (throttling, 5xx); the messages are retried. " +
			"Persistent failures: check the Scheduler quotas and the worker's grants.",
		metrics.ScheduleRefused: "The timer refused schedules for good (a due time more than 364 days ahead on the Step Functions timer); " +
			"the messages were acknowledged and those items will not fire until they change. The worker's logs name each key: " +
			"move their due times within the horizon, or use the EventBridgeScheduler or TTL timer.",
	}, p.AlarmTopic)
	alarms.Assign(metrics.FunctionCancelWorker, workerAlarms, map[string]*awscloudwatch.Alarm{
		metrics.Malformed: &x.WorkerMalformedAlarm, metrics.RetryableFailures: &x.WorkerRetryableFailuresAlarm,
		metrics.ScheduleRefused: &x.WorkerScheduleRefusedAlarm,
	})
	return x
}

// StreamFilters are the stream mapping's filters, built from the
// schema's state attribute and armed states only (never its keys): a
// record reaches the processor when
//   - an INSERT's new image is armed (it may need its schedule),
//   - a MODIFY's or REMOVE's old image was armed (cancel or move), or
//   - a MODIFY's new image is armed (armed now, or moved).
//
// Everything else (items that never were armed, such as the to-do app's
// settings and checkpoint items) is dropped by Lambda before any
// invocation. Filters are ORed; a mapping takes five by default, each
// pattern at most 4096 characters, and DynamoDB mappings filter on the
// "dynamodb" key (plus eventName):
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html
// https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html
// An attribute in an image is {"S": "value"}, so the rule matches on "S".
func StreamFilters(schema contract.Schema) *[]*map[string]any {
	s := schema.WithDefaults()
	armed := func(image string) map[string]any {
		states := make([]*string, len(s.ArmedStates))
		for i, a := range s.ArmedStates {
			states[i] = jsii.String(a)
		}
		return map[string]any{image: map[string]any{s.StateAttr: map[string]any{"S": awslambda.FilterRule_Or(states...)}}}
	}
	filter := func(image string, events ...string) *map[string]any {
		names := make([]*string, len(events))
		for i, e := range events {
			names[i] = jsii.String(e)
		}
		return awslambda.FilterCriteria_Filter(&map[string]any{
			"eventName": awslambda.FilterRule_Or(names...),
			"dynamodb":  armed(image),
		})
	}
	return &[]*map[string]any{
		filter("NewImage", "INSERT"),
		filter("OldImage", "MODIFY", "REMOVE"),
		filter("NewImage", "MODIFY"),
	}
}

// schemaOf is the item schema the pipeline works with: the props', with
// defaults filled, or the Timer's when the props leave it unset.
func schemaOf(p *CancellationProps) contract.Schema {
	if src, ok := p.Timer.(SchemaSource); ok && reflect.DeepEqual(p.Schema, contract.Schema{}) {
		return src.Schema()
	}
	return propcheck.Schema(p.Schema)
}

// checkSchema panics when the schema is invalid, or differs from the one
// of the construct the timer is bound to.
func checkSchema(id string, schema contract.Schema, timer any) {
	if err := schema.Validate(); err != nil {
		panic(fmt.Sprintf("%s: Schema: %s", id, strings.ReplaceAll(err.Error(), "\n", "; ")))
	}
	if src, ok := timer.(SchemaSource); ok && src.Schema().EnvValue() != schema.EnvValue() {
		panic(fmt.Sprintf("%s: Schema %s differs from the Timer's schema %s: leave Schema unset to use the Timer's one",
			id, schema.EnvValue(), src.Schema().EnvValue()))
	}
}

// MetricEnqueued is the count of schedule changes the processor enqueued.
// Default: Sum over 5 minutes (likewise every Metric method).
func (x *Cancellation) MetricEnqueued(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(x.Construct, metrics.FunctionStreamProcessor, metrics.Enqueued, opts)
}

// MetricEnqueueFailed is the count of messages the FIFO queue refused.
func (x *Cancellation) MetricEnqueueFailed(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(x.Construct, metrics.FunctionStreamProcessor, metrics.EnqueueFailed, opts)
}

// MetricMalformedRecords is the count of stream records the processor
// could not decode (skipped).
func (x *Cancellation) MetricMalformedRecords(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(x.Construct, metrics.FunctionStreamProcessor, metrics.MalformedRecords, opts)
}

// MetricUndeliverable is the count of records skipped for lack of a key or
// of a due time that parses.
func (x *Cancellation) MetricUndeliverable(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(x.Construct, metrics.FunctionStreamProcessor, metrics.Undeliverable, opts)
}

// MetricCancelled is the count of schedules the worker deleted.
func (x *Cancellation) MetricCancelled(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(x.Construct, metrics.FunctionCancelWorker, metrics.Cancelled, opts)
}

// MetricRescheduled is the count of schedules the worker moved.
func (x *Cancellation) MetricRescheduled(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(x.Construct, metrics.FunctionCancelWorker, metrics.Rescheduled, opts)
}

// MetricScheduleCreated is the count of schedules the worker created for
// items their writer did not schedule.
func (x *Cancellation) MetricScheduleCreated(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(x.Construct, metrics.FunctionCancelWorker, metrics.ScheduleCreated, opts)
}

// MetricWorkerMalformed is the count of queue messages the worker can
// never handle.
func (x *Cancellation) MetricWorkerMalformed(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(x.Construct, metrics.FunctionCancelWorker, metrics.Malformed, opts)
}

// MetricRetryableFailures is the count of worker messages that failed for
// a reason that may pass (retried).
func (x *Cancellation) MetricRetryableFailures(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(x.Construct, metrics.FunctionCancelWorker, metrics.RetryableFailures, opts)
}

// ErrorAlarms are the construct's alarms on the error metrics of its
// functions (operations.ErrorAlarmSource: the operations construct then
// adds no second one).
func (x *Cancellation) ErrorAlarms() []awscloudwatch.Alarm {
	// In the order of metrics.ErrorMetrics: the processor's, then the worker's.
	return []awscloudwatch.Alarm{x.MalformedRecordsAlarm, x.UndeliverableAlarm, x.EnqueueFailedAlarm,
		x.WorkerMalformedAlarm, x.WorkerRetryableFailuresAlarm, x.WorkerScheduleRefusedAlarm}
}

// Alarms are every alarm of the construct, in a fixed order, without the
// nil DeadLetterAlarm of a pipeline without a DeadLetterQueue.
func (x *Cancellation) Alarms() []awscloudwatch.Alarm {
	return alarms.NonNil(append([]awscloudwatch.Alarm{x.StreamFailureAlarm, x.DeadLetterAlarm, x.IteratorAgeAlarm,
		x.ProcessorErrorsAlarm, x.WorkerErrorsAlarm}, x.ErrorAlarms()...)...)
}
