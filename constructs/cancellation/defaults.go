package cancellation

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
)

// Defaults of CancellationProps, in one place.
const (
	DefaultBatchSize            = 10
	DefaultMaxRecordAgeSec      = 3600
	DefaultRetryAttempts        = 5
	DefaultWorkerBatchSize      = 10
	DefaultWorkerMaxConcurrency = 2
	DefaultWorkerTimeoutSec     = 30
	DefaultMaxReceiveCount      = 5
)

// ProcessorTimeoutSec is the stream processor's timeout: decoding a batch
// and one SendMessageBatch call per ten messages.
const ProcessorTimeoutSec = 30

// VisibilityTimeoutFactor: the FIFO queue hides a received message for
// this many worker timeouts, as Lambda's SQS guidance asks, so a message
// is not delivered again while an invocation (and its retries inside the
// event source's poller) may still be working on it.
const VisibilityTimeoutFactor = 6

// IteratorAgeAlarmSec is the stream lag (the age of the newest record a
// batch carried) above which IteratorAgeAlarm fires.
const IteratorAgeAlarmSec = 300

func withDefaults(id string, props *CancellationProps) CancellationProps {
	if props == nil {
		panic(fmt.Sprintf("%s: props are required: Table and Timer", id))
	}
	p := *props
	propcheck.CheckTimer(id, "Timer", p.Timer, "the Timer field of the table's ScheduleOnWrite, bound by NewScheduleOnWrite")
	p.BatchSize = propcheck.Or(p.BatchSize, DefaultBatchSize)
	p.MaxRecordAge = propcheck.DurationOr(p.MaxRecordAge, awscdk.Duration_Seconds(jsii.Number(DefaultMaxRecordAgeSec)))
	p.RetryAttempts = jsii.Number(propcheck.Number(p.RetryAttempts, DefaultRetryAttempts))
	p.WorkerBatchSize = propcheck.Or(p.WorkerBatchSize, DefaultWorkerBatchSize)
	p.WorkerMaxConcurrency = propcheck.Or(p.WorkerMaxConcurrency, DefaultWorkerMaxConcurrency)
	p.WorkerTimeout = propcheck.DurationOr(p.WorkerTimeout, awscdk.Duration_Seconds(jsii.Number(DefaultWorkerTimeoutSec)))
	p.MaxReceiveCount = propcheck.Or(p.MaxReceiveCount, DefaultMaxReceiveCount)
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	p.Schema = schemaOf(&p)
	return p
}

// validate panics with a message that names the prop, shows the bad value
// and says how to fix it. Unresolved tokens are not checked.
func validate(id string, p CancellationProps) {
	switch {
	case p.Table == nil:
		panic(fmt.Sprintf("%s: Table is required: pass the schedule-on-write table whose changes cancel schedules", id))
	case p.Timer == nil:
		panic(fmt.Sprintf("%s: Timer is required: pass the bound timer of the table's schedule-on-write construct (ScheduleOnWrite.Timer)", id))
	}
	checkSchema(id, p.Schema, p.Timer)
	scheduleonwrite.CheckTable(id, "Table", p.Table, p.Schema)
	propcheck.Exclusive(id, "ExistingQueue", p.ExistingQueue != nil, "QueueProps", p.QueueProps != nil)
	if p.ExistingQueue != nil && p.DeadLetterQueueProps != nil {
		panic(fmt.Sprintf("%s: DeadLetterQueueProps is set with ExistingQueue: your queue's redrive policy is yours; pass ExistingDeadLetterQueue to have it alarmed", id))
	}
	for _, q := range []struct {
		name  string
		queue awssqs.IQueue
		fifo  bool
	}{
		{"ExistingQueue", p.ExistingQueue, true}, {"ExistingDeadLetterQueue", p.ExistingDeadLetterQueue, true},
		{"ExistingStreamFailureQueue", p.ExistingStreamFailureQueue, false},
	} {
		if q.queue == nil || q.queue.Fifo() == nil {
			continue
		}
		if *q.queue.Fifo() != q.fifo {
			kind := "a standard queue: a stream mapping's on-failure destination cannot be FIFO"
			if q.fifo {
				kind = "a FIFO queue (its name ends in .fifo): the pipeline orders each item's changes"
			}
			panic(fmt.Sprintf("%s: %s must be %s", id, q.name, kind))
		}
	}
	for _, r := range []struct {
		name   string
		v      float64
		lo, hi float64
		unit   string
	}{
		{"BatchSize", p.BatchSize, 1, 10000, "records per stream batch"},
		{"RetryAttempts", *p.RetryAttempts, 1, 10000, "retries of a failing stream batch; bisecting needs at least one"},
		{"WorkerBatchSize", p.WorkerBatchSize, 1, 10, "messages per worker invocation; a FIFO queue delivers at most 10"},
		{"WorkerMaxConcurrency", p.WorkerMaxConcurrency, 2, 1000, "concurrent worker invocations, the SQS event source's limits"},
		{"MaxReceiveCount", p.MaxReceiveCount, 1, 1000, "deliveries before a message moves to the dead-letter queue"},
	} {
		propcheck.CheckWhole(id, r.name, r.v, r.lo, r.hi, r.unit)
	}
	propcheck.CheckSeconds(id, "MaxRecordAge", p.MaxRecordAge, 60, 86400, "1 minute to 1 day: a DynamoDB stream keeps records for 24 hours")
	propcheck.CheckSeconds(id, "WorkerTimeout", p.WorkerTimeout, 1, 900, "Lambda allows 1 second to 15 minutes")
}
