// Package deferredjobs is activity-driven deferred jobs:
// DynamoDB TTL as a lazy scheduler. The app's writers upsert one marker
// per tenant and window (package github.com/unschedule/unschedule/deferredjobs/writer,
// MarkActivity); the marker expires at the next occurrence of a weekly
// time (Monday 03:00 UTC by default); its TTL deletion arrives on the
// table's stream, where an event source mapping filtered to TTL deletions
// runs the dispatcher; the dispatcher queues one job per tenant on an
// encrypted, TLS-only SQS queue; the app's worker consumes it with a
// bounded maximum concurrency, so a burst of expiries is a queue, not a
// burst of functions.
//
// Precision is TTL's: an expired item is deleted within a few days,
// typically within 48 hours
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html).
package deferredjobs

import (
	"fmt"
	"math"

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
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/deferredjobs"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/metrics"
)

// DeferredJobsProps configures the pipeline.
type DeferredJobsProps struct {
	// Worker runs one job (an SQS record whose body is a
	// deferredjobs.Job). Required. It should report batch item failures.
	Worker awslambda.IFunction
	// RunAt is the weekly moment (UTC) a marker expires at.
	// Default: Monday 03:00 UTC.
	RunAt *deferredjobs.Weekly
	// StreamBatchSize is how many stream records one dispatcher run gets,
	// 1..10000.
	// Default: 100.
	StreamBatchSize float64
	// StreamParallelizationFactor is how many dispatcher runs read one
	// stream shard at once, 1..10.
	// Default: 1.
	StreamParallelizationFactor float64
	// StreamRetryAttempts of a failed dispatcher batch before its records
	// go to the stream failure queue, 0..10000.
	// Default: 10.
	StreamRetryAttempts *float64
	// WorkerMaxConcurrency is the most worker runs at once (the SQS event
	// source's maximum concurrency), 2..1000.
	// Default: 2.
	WorkerMaxConcurrency float64
	// WorkerBatchSize is how many jobs one worker run gets, 1..10.
	// Default: 1.
	WorkerBatchSize float64
	// JobVisibilityTimeout is the job queue's visibility timeout, whole
	// seconds up to 12 hours, at least six times the Worker's timeout
	// (synth fails otherwise, when the Worker is a function of this app).
	// Default: six times the Worker's timeout, at least 3 minutes; 3
	// minutes when its timeout cannot be read (an imported function).
	JobVisibilityTimeout awscdk.Duration
	// JobMaxReceiveCount is how often a job is tried before it moves to
	// the dead-letter queue, 1..1000.
	// Default: 5.
	JobMaxReceiveCount float64
	// AlarmTopic receives the alarms.
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
	// RemovalPolicy of the table and the queues. The markers are the
	// pending work of the next window: a table deleted with its stack
	// loses every tenant's next job, so it is kept by default, like the
	// task table (scheduleonwrite); pass DESTROY for a disposable stack.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// Logs is how the dispatcher's log group keeps its events.
	// Default: one month, retained.
	Logs gofn.LogOptions
}

// DeferredJobs is the marker table, the dispatcher, the job queue and its
// dead-letter queue, and their alarms.
type DeferredJobs struct {
	constructs.Construct
	// Table holds the markers ("Resource"): key tenantId + window, TTL
	// attribute expiresAt, stream KEYS_ONLY.
	Table awsdynamodb.Table
	// Dispatcher turns TTL deletions into jobs.
	Dispatcher *gofn.Function
	// Jobs is the job queue the worker consumes.
	Jobs awssqs.Queue
	// JobDeadLetters receives the jobs the worker failed JobMaxReceiveCount
	// times.
	JobDeadLetters awssqs.Queue
	// StreamFailures receives the stream batches the dispatcher failed.
	StreamFailures awssqs.Queue
	// RunAt is the weekly moment markers expire at.
	RunAt deferredjobs.Weekly
	// Alarms of the pipeline.
	Alarms []awscloudwatch.Alarm
}

// NewDeferredJobs builds the pipeline.
func NewDeferredJobs(scope constructs.Construct, id *string, props *DeferredJobsProps) *DeferredJobs {
	if props == nil || props.Worker == nil {
		panic(fmt.Sprintf("%s: Worker is required: pass the function that runs one job", *id))
	}
	runAt := deferredjobs.DefaultWeekly
	if props.RunAt != nil {
		runAt = *props.RunAt
	}
	if err := runAt.Validate(); err != nil {
		panic(fmt.Sprintf("%s: RunAt: %v", *id, err))
	}
	batch := propcheck.Or(props.StreamBatchSize, 100)
	propcheck.CheckWhole(*id, "StreamBatchSize", batch, 1, 10000, "stream records per dispatcher run; Lambda allows 1 to 10000")
	parallel := propcheck.Or(props.StreamParallelizationFactor, 1)
	propcheck.CheckWhole(*id, "StreamParallelizationFactor", parallel, 1, 10, "concurrent batches per shard; Lambda allows 1 to 10")
	retries := propcheck.Number(props.StreamRetryAttempts, 10)
	propcheck.CheckWhole(*id, "StreamRetryAttempts", retries, 0, 10000, "retries of a failed stream batch; Lambda allows 0 to 10000")
	maxConc := propcheck.Or(props.WorkerMaxConcurrency, 2)
	propcheck.CheckWhole(*id, "WorkerMaxConcurrency", maxConc, 2, 1000, "concurrent worker runs; Lambda allows 2 to 1000")
	workerBatch := propcheck.Or(props.WorkerBatchSize, 1)
	propcheck.CheckWhole(*id, "WorkerBatchSize", workerBatch, 1, 10, "jobs per worker run; up to 10 without a batching window")
	visibility := jobVisibility(*id, props)
	receives := propcheck.Or(props.JobMaxReceiveCount, 5)
	propcheck.CheckWhole(*id, "JobMaxReceiveCount", receives, 1, 1000, "tries of a job before its dead-letter queue; SQS allows 1 to 1000")
	removal := props.RemovalPolicy
	if removal == "" {
		removal = awscdk.RemovalPolicy_RETAIN
	}

	c := constructs.NewConstruct(scope, id)
	d := &DeferredJobs{Construct: c, RunAt: runAt}
	d.Table = awsdynamodb.NewTable(c, jsii.String("Resource"), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String(deferredjobs.TenantAttr), Type: awsdynamodb.AttributeType_STRING},
		SortKey:             &awsdynamodb.Attribute{Name: jsii.String(deferredjobs.WindowAttr), Type: awsdynamodb.AttributeType_STRING},
		TimeToLiveAttribute: jsii.String(deferredjobs.ExpiresAttr),
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		// A marker deleted by mistake (or a bad deploy) can be restored.
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		// The dispatcher needs only the keys (tenant, window).
		Stream:        awsdynamodb.StreamViewType_KEYS_ONLY,
		RemovalPolicy: removal,
	})

	dlqProps := resource.DeadLetterQueueProps(removal)
	d.JobDeadLetters = awssqs.NewQueue(c, jsii.String("JobDeadLetterQueue"), &dlqProps)
	d.Jobs = awssqs.NewQueue(c, jsii.String("JobQueue"), &awssqs.QueueProps{
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		VisibilityTimeout: visibility,
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(resource.DeadLetterRetentionDays)),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: d.JobDeadLetters, MaxReceiveCount: jsii.Number(receives)},
		RemovalPolicy:     removal,
	})
	d.StreamFailures = awssqs.NewQueue(c, jsii.String("StreamFailureQueue"), &dlqProps)

	d.Dispatcher = gofn.NewFunction(c, jsii.String("Dispatcher"), &gofn.FunctionProps{
		Entry:       "lambdas/deferreddispatch",
		Description: "Queues one job per TTL-deleted deferred-job marker",
		Timeout:     awscdk.Duration_Seconds(jsii.Number(30)),
		Logs:        props.Logs,
		Environment: map[string]string{envvars.JobQueueURL: *d.Jobs.QueueUrl()},
	})
	d.Jobs.GrantSendMessages(d.Dispatcher.Function)
	d.Dispatcher.Function.AddEventSource(awslambdaeventsources.NewDynamoEventSource(d.Table, &awslambdaeventsources.DynamoEventSourceProps{
		// TRIM_HORIZON: a deletion that happened before the mapping was
		// ready is still read.
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(batch),
		ParallelizationFactor:   jsii.Number(parallel),
		RetryAttempts:           jsii.Number(retries),
		BisectBatchOnError:      jsii.Bool(true),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxRecordAge:            awscdk.Duration_Days(jsii.Number(1)),
		OnFailure:               awslambdaeventsources.NewSqsDlq(d.StreamFailures),
		// TTL deletions only (deferredjobs.TTLDeleteFilter; the pattern string
		// is passed as is so its key order is stable).
		Filters: &[]*map[string]any{{"pattern": deferredjobs.TTLDeleteFilterJSON()}},
	}))
	props.Worker.AddEventSource(awslambdaeventsources.NewSqsEventSource(d.Jobs, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(workerBatch),
		MaxConcurrency:          jsii.Number(maxConc),
		ReportBatchItemFailures: jsii.Bool(true),
	}))

	top := props.AlarmTopic
	sum := &awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5))}
	d.Alarms = []awscloudwatch.Alarm{
		alarms.QueueNotEmpty(c, "JobDeadLetterAlarm", d.JobDeadLetters,
			"A deferred job failed in the worker after every try; it is in the job dead-letter queue. Fix the worker, then redrive the queue.", top),
		alarms.QueueNotEmpty(c, "StreamFailureAlarm", d.StreamFailures,
			"The deferred-jobs dispatcher failed a stream batch after every retry; its records' pointers are in the stream failure queue: those tenants got no job this window.", top),
		alarms.AtLeast(c, "DispatcherErrorsAlarm",
			"The deferred-jobs dispatcher returned errors (its batch is retried). See its logs.",
			d.Dispatcher.Function.MetricErrors(sum), 1, top),
		alarms.AtLeast(c, "QueueFailedAlarm",
			"The job queue refused jobs from the dispatcher (retried as batch item failures). Check SQS throttling and the dispatcher's grant.",
			alarms.Metric(c, metrics.FunctionDeferredDispatch, metrics.DeferredJobsQueueFailed, nil), 1, top),
		alarms.AtLeast(c, "MalformedAlarm",
			"A TTL deletion on the marker table was no marker (missing or bad tenantId/window keys): something else writes items with a TTL there.",
			alarms.Metric(c, metrics.FunctionDeferredDispatch, metrics.DeferredJobsMalformed, nil), 1, top),
	}
	return d
}

// Visibility timeouts of the job queue. Lambda's SQS page: "set the
// source queue's visibility timeout to at least six times the timeout
// that you configure on your function", so a batch retried after a
// throttle is not seen again by another poller while it still runs.
// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
const (
	VisibilityPerWorkerTimeout = 6
	DefaultJobVisibilitySec    = 180
	MaxJobVisibilitySec        = 43200
)

// jobVisibility is JobVisibilityTimeout, or its default; it panics when
// the timeout is out of SQS's range or below six times the Worker's.
func jobVisibility(id string, props *DeferredJobsProps) awscdk.Duration {
	worker, known := resource.FunctionTimeoutSec(props.Worker)
	want := float64(VisibilityPerWorkerTimeout) * worker
	if props.JobVisibilityTimeout == nil {
		return awscdk.Duration_Seconds(jsii.Number(math.Max(DefaultJobVisibilitySec, want)))
	}
	v := props.JobVisibilityTimeout
	propcheck.CheckSeconds(id, "JobVisibilityTimeout", v, 0, MaxJobVisibilitySec, "SQS allows 0 s to 12 hours")
	if known && !*v.IsUnresolved() && *v.ToSeconds(nil) < want {
		panic(fmt.Sprintf("%s: JobVisibilityTimeout (%vs) is below six times the Worker's timeout (%vs x 6 = %vs): "+
			"set JobVisibilityTimeout to at least %vs, or leave it unset, or lower the Worker's timeout "+
			"(Lambda: set the source queue's visibility timeout to at least six times the function timeout)",
			id, *v.ToSeconds(nil), worker, want, want))
	}
	return v
}

// GrantMarkActivity lets grantee upsert markers (dynamodb:PutItem on the
// table only).
func (d *DeferredJobs) GrantMarkActivity(grantee awsiam.IGrantable) awsiam.Grant {
	return grants.Table(d.Table, grantee, "dynamodb:PutItem")
}

// ConfigureWriter grants fn GrantMarkActivity and sets the table and the
// weekly moment in its environment (read by writer.FromEnv in deferredjobs/writer).
func (d *DeferredJobs) ConfigureWriter(fn awslambda.Function) {
	d.GrantMarkActivity(fn)
	fn.AddEnvironment(jsii.String(envvars.DeferredJobsTable), d.Table.TableName(), nil)
	fn.AddEnvironment(jsii.String(envvars.DeferredJobsWeekly), jsii.String(d.RunAt.String()), nil)
}
