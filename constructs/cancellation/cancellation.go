// Package cancellation is the unscheduling pipeline of a schedule-on-write
// table: its DynamoDB stream feeds a stream processor that decides, per
// item change, whether the item's schedule must be cancelled or moved and
// enqueues that on an SQS FIFO queue (one message group per item); a
// worker consumes the queue and deletes or moves the schedule.
//
// Every stage assumes it runs twice: the stream mapping retries and
// bisects, the queue deduplicates replays by {taskId}-{eventID}, and the
// worker treats a missing schedule as done. Whatever this pipeline misses
// fires harmlessly (the expiry's conditional write) and is cleaned up by
// the reconciler.
package cancellation

import (
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
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/tableschema"
)

// ScheduleManager is what the pipeline needs of the table's schedules
// (scheduleonwrite.ScheduleOnWrite implements it).
type ScheduleManager interface {
	// GrantModifySchedules lets grantee create, move and delete schedules
	// inside the group only, and pass the scheduler role.
	GrantModifySchedules(grantee awsiam.IGrantable) awsiam.Grant
	// SchedulerEnvironment is the environment a function that creates or
	// moves schedules reads.
	SchedulerEnvironment() map[string]string
}

// CancellationProps configures the pipeline. Zero numbers take their
// default.
type CancellationProps struct {
	// Table is the schedule-on-write table. Its stream must carry
	// NEW_AND_OLD_IMAGES: the processor compares the transition. Required.
	Table awsdynamodb.ITable
	// Schedules owns the table's schedules. Required.
	Schedules ScheduleManager
	// AlarmTopic receives every alarm of the pipeline.
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
	// RemovalPolicy of the queues (the work queue, its dead-letter queue
	// and the stream failure queue): RETAIN keeps them, and what they
	// hold, when the stack is deleted.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// Logs of both functions.
	// Default: one month, retained.
	Logs gofn.LogOptions

	// BatchSize is the most stream records per processor invocation
	// (1..10000).
	// Default: 10.
	BatchSize float64
	// MaxRecordAgeSec: a stream record older than this is not retried
	// but reported to the stream failure queue (60..86400). An hour
	// lets the processor ride out an SQS or Lambda incident, and stops a
	// shard from being held up for longer than that; a cancellation
	// dropped this way costs nothing but a schedule that fires harmlessly
	// and that the reconciler deletes.
	// Default: 3600.
	MaxRecordAgeSec float64
	// RetryAttempts of a failing stream batch before its records go to the
	// stream failure queue (1..10000). A retry starts at the first record
	// the processor reported failed; bisecting splits a batch that failed
	// as a whole (a crash or timeout), so one bad record holds up the
	// others of its shard for a few retries at most.
	// Default: 5.
	RetryAttempts float64
	// WorkerBatchSize is the most queue messages per worker invocation
	// (1..10, the FIFO limit).
	// Default: 10.
	WorkerBatchSize float64
	// WorkerMaxConcurrency caps concurrent worker invocations (the SQS
	// event source's maximumConcurrency, 2..1000). The worker makes its
	// Scheduler calls one after another, one to two per message at some
	// tens of milliseconds each, so each invocation makes at most a few
	// dozen calls per second. Create, Update and Delete have per-account,
	// per-Region request-rate quotas (from 50 per second in some Regions
	// and accounts, to thousands) shared with the API's creates and the
	// reconciler; 2 stays well under the lowest of them, and a FIFO queue
	// cannot use more invocations than it has busy message groups anyway.
	// Raise it together with the Scheduler quotas.
	// Default: 2.
	WorkerMaxConcurrency float64
	// WorkerTimeoutSec is the worker's timeout (1..900). The queue's
	// visibility timeout is VisibilityTimeoutFactor times this.
	// Default: 30.
	WorkerTimeoutSec float64
	// MaxReceiveCount is how many times a queue message is delivered
	// before it moves to the dead-letter queue (1..1000). Throttling and
	// 5xx fail only that message, so it is retried this many times.
	// Default: 5.
	MaxReceiveCount float64
}

// Cancellation is the stream processor, the FIFO queue and the worker,
// with their dead-letter queues and alarms.
type Cancellation struct {
	constructs.Construct
	// Processor reads the table's stream and enqueues cancellations.
	Processor *gofn.Function
	// StreamFailureQueue receives the description (shard, sequence
	// numbers) of stream batches the processor gave up on.
	StreamFailureQueue awssqs.Queue
	// Queue is the FIFO queue of cancellations and reschedules: one
	// message group per task, deduplicated by {taskId}-{eventID}.
	Queue awssqs.Queue
	// DeadLetterQueue receives messages the worker failed MaxReceiveCount
	// times (FIFO, like Queue).
	DeadLetterQueue awssqs.Queue
	// Worker consumes Queue and deletes or moves schedules.
	Worker *gofn.Function

	// StreamFailureAlarm fires when a stream batch was given up on.
	StreamFailureAlarm awscloudwatch.Alarm
	// DeadLetterAlarm fires when a queue message was given up on.
	DeadLetterAlarm awscloudwatch.Alarm
	// IteratorAgeAlarm fires when the processor lags the stream by more
	// than IteratorAgeAlarmSec.
	IteratorAgeAlarm awscloudwatch.Alarm
	// ProcessorErrorsAlarm fires when a processor invocation failed as a
	// whole (crash, timeout); single records fail as batch item failures.
	ProcessorErrorsAlarm awscloudwatch.Alarm
	// WorkerErrorsAlarm fires when a worker invocation failed as a whole.
	WorkerErrorsAlarm awscloudwatch.Alarm
}

// NewCancellation builds the pipeline on props.Table's stream.
func NewCancellation(scope constructs.Construct, id *string, props *CancellationProps) *Cancellation {
	p := withDefaults(*id, props)
	validate(*id, p)
	c := constructs.NewConstruct(scope, id)
	x := &Cancellation{Construct: c}

	// The queue between the two functions.
	x.DeadLetterQueue = awssqs.NewQueue(c, jsii.String("DeadLetterQueue"), &awssqs.QueueProps{
		Fifo:            jsii.Bool(true),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(dlqRetentionDays)),
		RemovalPolicy:   p.RemovalPolicy,
	})
	x.Queue = awssqs.NewQueue(c, jsii.String("Queue"), &awssqs.QueueProps{
		Fifo:          jsii.Bool(true),
		RemovalPolicy: p.RemovalPolicy,
		// The processor sets MessageDeduplicationId = {taskId}-{eventID}:
		// the same stream record gives the same id, two changes of one
		// task with equal bodies do not.
		ContentBasedDeduplication: jsii.Bool(false),
		Encryption:                awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:                jsii.Bool(true),
		VisibilityTimeout:         awscdk.Duration_Seconds(jsii.Number(VisibilityTimeoutFactor * p.WorkerTimeoutSec)),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue: x.DeadLetterQueue, MaxReceiveCount: jsii.Number(p.MaxReceiveCount),
		},
	})
	x.DeadLetterAlarm = scheduleonwrite.QueueNotEmptyAlarm(c, "DeadLetterAlarm", x.DeadLetterQueue,
		"The cancellation worker gave up on a message: a schedule may still be live (it fires harmlessly; the reconciler deletes or moves it). "+
			"Inspect the message and the worker's logs, then redrive.", p.AlarmTopic)

	// Stream → processor.
	x.StreamFailureQueue = awssqs.NewQueue(c, jsii.String("StreamFailureQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(dlqRetentionDays)),
		RemovalPolicy:   p.RemovalPolicy,
	})
	x.StreamFailureAlarm = scheduleonwrite.QueueNotEmptyAlarm(c, "StreamFailureAlarm", x.StreamFailureQueue,
		"The stream processor gave up on stream records (retries or record age exhausted): their schedules may still be live "+
			"(they fire harmlessly; the reconciler repairs them). The message names the shard and sequence numbers.", p.AlarmTopic)

	x.Processor = gofn.NewFunction(c, jsii.String("Processor"), &gofn.FunctionProps{
		Entry:       "lambdas/streamprocessor",
		Description: "Reads the task table's stream; enqueues a cancel or reschedule for each transition that warrants one",
		TimeoutSec:  ProcessorTimeoutSec,
		Logs:        p.Logs,
		Environment: map[string]string{"QUEUE_URL": *x.Queue.QueueUrl()},
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
		RetryAttempts:           jsii.Number(p.RetryAttempts),
		MaxRecordAge:            awscdk.Duration_Seconds(jsii.Number(p.MaxRecordAgeSec)),
		OnFailure:               awslambdaeventsources.NewSqsDlq(x.StreamFailureQueue),
		Filters:                 &[]*map[string]any{StreamFilter()},
	}))

	// Queue → worker.
	env := map[string]string{}
	for k, v := range p.Schedules.SchedulerEnvironment() {
		env[k] = v
	}
	x.Worker = gofn.NewFunction(c, jsii.String("Worker"), &gofn.FunctionProps{
		Entry:       "lambdas/cancelworker",
		Description: "Deletes the schedules of completed or removed tasks; moves those of tasks whose deadline changed",
		TimeoutSec:  p.WorkerTimeoutSec,
		Logs:        p.Logs,
		Environment: env,
	})
	p.Schedules.GrantModifySchedules(x.Worker.Function)
	x.Worker.Function.AddEventSource(awslambdaeventsources.NewSqsEventSource(x.Queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(p.WorkerBatchSize),
		MaxConcurrency:          jsii.Number(p.WorkerMaxConcurrency),
		ReportBatchItemFailures: jsii.Bool(true),
	}))

	nag.Suppress(x.StreamFailureQueue.Node().DefaultChild(), nag.Rule{ID: "AwsSolutions-SQS3",
		Reason: "This queue is a dead-letter queue: the stream mapping's on-failure destination, alarmed when not empty."})
	nag.Suppress(nag.RolePolicy(x.Processor.Function), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{"Resource::*"},
		Reason: "dynamodb:ListStreams has no resource-level permissions; the DynamoDB event source adds it. Stream reads are on the table's stream only."})
	nag.Suppress(nag.RolePolicy(x.Worker.Function), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{nag.ScheduleGroupWildcard},
		Reason: "The worker deletes and moves the schedules of any task, and only those: every schedule inside the table's schedule group, none outside it."})

	// Lag and whole-invocation failures.
	x.IteratorAgeAlarm = alarm(c, "IteratorAgeAlarm", x.Processor.Function.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{
		Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(5)),
	}), IteratorAgeAlarmSec*1000, awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		"The stream processor lags the task table's stream by more than 5 minutes: cancellations are late. "+
			"Check the processor's errors, throttles and the queue.", p.AlarmTopic)
	x.ProcessorErrorsAlarm = alarm(c, "ProcessorErrorsAlarm", x.Processor.Function.MetricErrors(&awscloudwatch.MetricOptions{
		Statistic: jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5)),
	}), 1, awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		"Stream processor invocations failed (crash or timeout): the stream retries them. Check the processor's logs.", p.AlarmTopic)
	x.WorkerErrorsAlarm = alarm(c, "WorkerErrorsAlarm", x.Worker.Function.MetricErrors(&awscloudwatch.MetricOptions{
		Statistic: jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5)),
	}), 1, awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		"Cancellation worker invocations failed (crash or timeout): their messages are delivered again. Check the worker's logs.", p.AlarmTopic)
	return x
}

// StreamFilter is the stream mapping's filter: only MODIFY and REMOVE
// records (an INSERT never cancels or moves a schedule), and never the
// reconciler's checkpoint item or a user's notification settings item
// (tableschema.SettingsSortKey). It does not look at the old image's
// status: a record without an old image must still reach the processor,
// which then cancels by key. Lambda's filter rules have no "anything but
// this prefix" (https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html#filtering-syntax),
// so each reserved key is named; the processor also skips every reserved
// sort key.
func StreamFilter() *map[string]any {
	return awslambda.FilterCriteria_Filter(&map[string]any{
		"eventName": awslambda.FilterRule_Or(jsii.String("MODIFY"), jsii.String("REMOVE")),
		"dynamodb": map[string]any{
			"Keys": map[string]any{
				tableschema.PartitionKey: map[string]any{"S": awslambda.FilterRule_NotEquals(jsii.String(tableschema.CheckpointUserID))},
				tableschema.SortKey:      map[string]any{"S": awslambda.FilterRule_NotEquals(jsii.String(tableschema.SettingsSortKey))},
			},
		},
	})
}

func alarm(scope constructs.Construct, id string, m awscloudwatch.IMetric, threshold float64,
	op awscloudwatch.ComparisonOperator, description string, topic awssns.ITopic) awscloudwatch.Alarm {
	return alarms.New(scope, id, description, m, threshold, op, topic)
}
