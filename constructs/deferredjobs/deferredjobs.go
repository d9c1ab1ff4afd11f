// Package deferredjobs is activity-driven deferred jobs on the scheduling
// core's TTL timer. The app's writers call MarkActivity (package
// github.com/unschedule/unschedule/deferredjobs/writer), which creates one
// item per tenant and window, due at the window's moment (the next
// occurrence of a weekly time, Monday 03:00 UTC by default); the core
// (constructs/scheduleonwrite with NewTTLTimer, and constructs/cancellation)
// gives each item a TTL marker, fires it after its due time through the
// conditional claim, and invokes this construct's dispatcher as its
// Target; the dispatcher queues one job per tenant and window on an
// encrypted, TLS-only SQS queue; the app's worker consumes it with a
// bounded maximum concurrency, so a burst of windows closing is a queue,
// not a burst of functions.
//
// Precision is TTL's: DynamoDB deletes an expired marker within a few
// days, typically within 48 hours
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html);
// the core's reconciler fires an item it finds overdue sooner. A job runs
// some time after its window, never before (the claim refuses an item
// whose due time has not come).
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

	"github.com/unschedule/unschedule/constructs/cancellation"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/deferredjobs/job"
)

// DeferredJobsProps configures deferred jobs.
type DeferredJobsProps struct {
	// Worker runs one job (an SQS record whose body is a job.Job; read it
	// with job.ParseJob). Required. It should report batch item failures.
	Worker awslambda.IFunction
	// RunAt is the weekly moment (UTC) that closes a window: a tenant's
	// item is due then.
	// Default: Monday 03:00 UTC (job.DefaultWeekly).
	RunAt *job.Weekly
	// MaxLateness is how late a job may come after its window before the
	// core's TTL timer alarms (TTLOverdueAlarm): at least 48 hours
	// (DynamoDB deletes expired items typically within two days).
	// Default: 48 hours.
	MaxLateness awscdk.Duration
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
	// Not with ExistingJobQueue.
	// Default: six times the Worker's timeout, at least 3 minutes; 3
	// minutes when its timeout cannot be read (an imported function).
	JobVisibilityTimeout awscdk.Duration
	// JobMaxReceiveCount is how often a job is tried before it moves to
	// the job dead-letter queue, 1..1000. Not with ExistingJobQueue.
	// Default: 5.
	JobMaxReceiveCount float64
	// ExistingTable is your own table for the items: keyed tenantId
	// (partition) and window (sort), both strings, with a stream of
	// NEW_AND_OLD_IMAGES and TTL enabled on "unscheduleTtl"
	// (TTLAttribute). Synth checks a Table or TableV2 of this app. Not
	// with TableProps; RemovalPolicy and DeletionProtection do not apply
	// to it.
	// Default: a new table (TableProps).
	ExistingTable awsdynamodb.ITable
	// TableProps override, field by field, the new table's props
	// (on-demand, point-in-time recovery, AWS-managed encryption,
	// RemovalPolicy, DeletionProtection). Its keys, stream and TTL
	// attribute are the construct's, and point-in-time recovery stays on:
	// setting any of them fails synth. Not with ExistingTable.
	// Default: those.
	TableProps *awsdynamodb.TableProps
	// ExistingJobQueue is your own standard queue for the jobs (its
	// visibility timeout and redrive policy are yours; keep it encrypted
	// and TLS-only). Not with JobQueueProps, JobVisibilityTimeout or
	// JobMaxReceiveCount.
	// Default: a new queue (JobQueueProps) with a dead-letter queue.
	ExistingJobQueue awssqs.IQueue
	// ExistingJobDeadLetterQueue is the dead-letter queue of your
	// ExistingJobQueue: it is then alarmed (JobDeadLetterAlarm). Only with
	// ExistingJobQueue.
	// Default: none with ExistingJobQueue (alarm it yourself).
	ExistingJobDeadLetterQueue awssqs.IQueue
	// JobQueueProps override, field by field, the new job queue's props
	// (SQS-managed encryption, TLS only, 14 days, RemovalPolicy). Its
	// visibility timeout and dead-letter queue are set by
	// JobVisibilityTimeout and JobMaxReceiveCount; encryption and TLS may
	// not be turned off. Not with ExistingJobQueue.
	// Default: those.
	JobQueueProps *awssqs.QueueProps
	// AlarmTopic receives the alarms (the core's too).
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
	// RemovalPolicy of the table and the queues the construct creates
	// (the core's too). The items are every tenant's pending job: a table
	// deleted with its stack loses them, so it is kept by default, like
	// the task table (todoapp); pass DESTROY for a disposable stack.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// DeletionProtection keeps the new table from being deleted by
	// CloudFormation or the API until it is turned off.
	// Default: true with RemovalPolicy RETAIN (the default), false with
	// DESTROY (as todoapp's Protected).
	DeletionProtection *bool
	// Logs is how the functions' log groups keep their events.
	// Default: one month, retained.
	Logs gofn.LogOptions
}

// DeferredJobs is the items table, the scheduling core on its TTL timer,
// the dispatcher (the core's Target), the job queue and its dead-letter
// queue, and their alarms.
type DeferredJobs struct {
	constructs.Construct
	// Table holds one item per tenant and window (ExistingTable, or the
	// one created, "Table"), and the TTL timer's markers.
	Table awsdynamodb.ITable
	// Core is the scheduling core on the table: expiry function, TTL
	// timer, reconciler.
	Core *scheduleonwrite.ScheduleOnWrite
	// Timer is the core's TTL timer, bound (its mapping, failure queue,
	// watch and alarms).
	Timer *scheduleonwrite.TTLTimer
	// Pipeline is the core's stream pipeline: it gives each new item its
	// TTL marker.
	Pipeline *cancellation.Cancellation
	// Dispatcher is the core's Target: it queues one job per fired item.
	Dispatcher *gofn.Function
	// Jobs is the job queue the worker consumes (ExistingJobQueue, or the
	// one created).
	Jobs awssqs.IQueue
	// JobDeadLetters receives the jobs the worker failed JobMaxReceiveCount
	// times (ExistingJobDeadLetterQueue with ExistingJobQueue; may be nil
	// then).
	JobDeadLetters awssqs.IQueue
	// RunAt is the weekly moment windows close at.
	RunAt job.Weekly
	// JobDeadLetterAlarm fires when a job is in the job dead-letter queue
	// (nil with an ExistingJobQueue and no ExistingJobDeadLetterQueue).
	JobDeadLetterAlarm awscloudwatch.Alarm
	// DispatcherErrorsAlarm fires when the dispatcher failed (the core
	// retries the firing).
	DispatcherErrorsAlarm awscloudwatch.Alarm
	// QueueFailedAlarm fires when the job queue refused a job.
	QueueFailedAlarm awscloudwatch.Alarm
	// MalformedAlarm fires when the dispatcher got an item that is no
	// deferred job.
	MalformedAlarm awscloudwatch.Alarm
}

// NewDeferredJobs builds deferred jobs.
func NewDeferredJobs(scope constructs.Construct, id *string, props *DeferredJobsProps) *DeferredJobs {
	p := withDefaults(*id, props)
	validate(*id, &p)

	c := constructs.NewConstruct(scope, id)
	d := &DeferredJobs{Construct: c, RunAt: p.runAt}
	d.Table = p.ExistingTable
	// The table it creates gets the armed index: the reconciler and the
	// TTL watch Query it instead of scanning (an ExistingTable is scanned).
	var armed *reconciler.ArmedIndex
	if d.Table == nil {
		tp := tableProps(*id, &p)
		table := awsdynamodb.NewTable(c, jsii.String("Table"), &tp)
		d.Table, armed = table, scheduleonwrite.AddArmedIndex(table, job.Schema())
	}
	d.buildQueues(c, &p)

	d.Dispatcher = gofn.NewFunction(c, jsii.String("Dispatcher"), &gofn.FunctionProps{
		Entry:       "lambdas/deferreddispatch",
		Description: "Queues the job of a tenant's window once the core fired its item",
		Timeout:     awscdk.Duration_Seconds(jsii.Number(DispatcherTimeoutSec)),
		Logs:        p.Logs,
		Environment: map[string]string{job.EnvJobQueueURL: *d.Jobs.QueueUrl()},
	})
	d.Jobs.GrantSendMessages(d.Dispatcher.Function)

	d.Timer = scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: p.MaxLateness, TTLAttribute: TTLAttribute})
	d.Core = scheduleonwrite.NewScheduleOnWrite(c, jsii.String("Core"), &scheduleonwrite.ScheduleOnWriteProps{
		Schema: job.Schema(), ExistingTable: d.Table, Target: d.Dispatcher.Function, Timer: d.Timer,
		RemovalPolicy: p.RemovalPolicy, Logs: p.Logs, AlarmTopic: p.AlarmTopic,
		Reconciler: &reconciler.ReconcilerProps{ArmedIndex: armed},
	})
	d.Pipeline = cancellation.NewCancellation(c, jsii.String("Pipeline"), &cancellation.CancellationProps{
		Table: d.Table, Timer: d.Core.Timer, RemovalPolicy: p.RemovalPolicy, Logs: p.Logs, AlarmTopic: p.AlarmTopic,
	})

	p.Worker.AddEventSource(awslambdaeventsources.NewSqsEventSource(d.Jobs, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(p.WorkerBatchSize),
		MaxConcurrency:          jsii.Number(p.WorkerMaxConcurrency),
		ReportBatchItemFailures: jsii.Bool(true),
	}))
	d.buildAlarms(c, p.AlarmTopic)
	return d
}

// buildQueues is the job queue and its dead-letter queue: the adopter's,
// or new ones.
func (d *DeferredJobs) buildQueues(c constructs.Construct, p *props) {
	if p.ExistingJobQueue != nil {
		d.Jobs, d.JobDeadLetters = p.ExistingJobQueue, p.ExistingJobDeadLetterQueue
		return
	}
	dlqProps := resource.DeadLetterQueueProps(p.RemovalPolicy)
	d.JobDeadLetters = awssqs.NewQueue(c, jsii.String("JobDeadLetterQueue"), &dlqProps)
	qp := propcheck.Merge(defaultJobQueueProps(p.RemovalPolicy, p.visibility, d.JobDeadLetters, p.JobMaxReceiveCount), p.JobQueueProps)
	d.Jobs = awssqs.NewQueue(c, jsii.String("JobQueue"), &qp)
}

func (d *DeferredJobs) buildAlarms(c constructs.Construct, top awssns.ITopic) {
	if d.JobDeadLetters != nil {
		d.JobDeadLetterAlarm = alarms.QueueNotEmpty(c, "JobDeadLetterAlarm", d.JobDeadLetters,
			"A deferred job failed in the worker after every try; it is in the job dead-letter queue. Fix the worker, then redrive the queue.", top)
	}
	d.DispatcherErrorsAlarm = alarms.AtLeast(c, "DispatcherErrorsAlarm",
		"The deferred-jobs dispatcher failed (the core retries the firing, then its TTL failure queue holds it). See its logs.",
		d.Dispatcher.Function.MetricErrors(alarms.SumOptions(nil)), 1, top)
	d.QueueFailedAlarm = alarms.AtLeast(c, "QueueFailedAlarm",
		"The job queue refused jobs from the dispatcher (the core retries the firing). Check SQS throttling and the dispatcher's grant.",
		d.MetricQueueFailed(nil), 1, top)
	d.MalformedAlarm = alarms.AtLeast(c, "MalformedAlarm",
		"The dispatcher got an item that is no deferred job (tenantId, window = dueAt): something else writes armed items to the deferred-jobs table.",
		d.MetricMalformed(nil), 1, top)
}

// Alarms are every alarm: the construct's own (the nil JobDeadLetterAlarm
// of an ExistingJobQueue without its dead-letter queue left out), then the
// core's (expiry, TTL timer, reconciler), then its pipeline's.
func (d *DeferredJobs) Alarms() []awscloudwatch.Alarm {
	own := []awscloudwatch.Alarm{d.JobDeadLetterAlarm, d.DispatcherErrorsAlarm, d.QueueFailedAlarm, d.MalformedAlarm}
	return alarms.NonNil(append(append(own, d.Core.Alarms()...), d.Pipeline.Alarms()...)...)
}

// jobVisibility is JobVisibilityTimeout, or its default; it panics when
// the timeout is out of SQS's range or below six times the Worker's.
func jobVisibility(id string, worker awslambda.IFunction, v awscdk.Duration) awscdk.Duration {
	workerSec, known := resource.FunctionTimeoutSec(worker)
	want := float64(VisibilityPerWorkerTimeout) * workerSec
	if v == nil {
		return awscdk.Duration_Seconds(jsii.Number(math.Max(DefaultJobVisibilitySec, want)))
	}
	propcheck.CheckSeconds(id, "JobVisibilityTimeout", v, 0, MaxJobVisibilitySec, "SQS allows 0 s to 12 hours")
	if known && !*v.IsUnresolved() && *v.ToSeconds(nil) < want {
		panic(fmt.Sprintf("%s: JobVisibilityTimeout (%vs) is below six times the Worker's timeout (%vs x 6 = %vs): "+
			"set JobVisibilityTimeout to at least %vs, or leave it unset, or lower the Worker's timeout "+
			"(Lambda: set the source queue's visibility timeout to at least six times the function timeout)",
			id, *v.ToSeconds(nil), workerSec, want, want))
	}
	return v
}

// GrantMarkActivity lets grantee create items (dynamodb:PutItem on the
// table only, with its customer-managed key when it has one): what
// MarkActivity needs.
func (d *DeferredJobs) GrantMarkActivity(grantee awsiam.IGrantable) awsiam.Grant {
	return grants.Table(d.Table, grantee, "dynamodb:PutItem")
}

// ConfigureWriter grants fn GrantMarkActivity and sets the table and the
// weekly moment in its environment (read by writer.FromEnv in
// deferredjobs/writer).
func (d *DeferredJobs) ConfigureWriter(fn awslambda.Function) {
	d.GrantMarkActivity(fn)
	fn.AddEnvironment(jsii.String(job.EnvTable), d.Table.TableName(), nil)
	fn.AddEnvironment(jsii.String(job.EnvWeekly), jsii.String(d.RunAt.String()), nil)
}

// MetricJobsQueued counts the jobs the dispatcher queued.
// Default: Sum over 5 minutes.
func (d *DeferredJobs) MetricJobsQueued(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(d.Construct, job.FunctionDispatch, job.MetricQueued, opts)
}

// MetricQueueFailed counts the jobs the job queue refused (QueueFailedAlarm).
// Default: Sum over 5 minutes.
func (d *DeferredJobs) MetricQueueFailed(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(d.Construct, job.FunctionDispatch, job.MetricQueueFailed, opts)
}

// MetricMalformed counts the fired items that were no deferred job
// (MalformedAlarm).
// Default: Sum over 5 minutes.
func (d *DeferredJobs) MetricMalformed(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(d.Construct, job.FunctionDispatch, job.MetricMalformed, opts)
}
