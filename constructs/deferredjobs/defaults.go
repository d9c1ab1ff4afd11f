package deferredjobs

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// Defaults of the DeferredJobsProps WorkerMaxConcurrency, WorkerBatchSize,
// JobMaxReceiveCount and MaxLateness props.
const (
	DefaultWorkerMaxConcurrency = 2
	DefaultWorkerBatchSize      = 1
	DefaultJobMaxReceiveCount   = 5
	// DefaultMaxLatenessHours is the TTL timer's floor: AWS deletes an
	// expired item "typically within 48 hours"
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html).
	DefaultMaxLatenessHours = 48
)

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

// Fixed settings: no prop changes them.
const (
	// DispatcherTimeoutSec bounds the dispatcher (one SQS send); it stays
	// below the core's delivery lease.
	DispatcherTimeoutSec = 10
	// TTLAttribute is the table's TTL attribute, through which the core's
	// TTL timer's markers expire.
	TTLAttribute = timerspec.DefaultTTLAttr
)

// defaultTableProps are the props of the table the construct creates:
// the core's (on-demand, point-in-time recovery, encrypted, a stream with
// both images, keyed tenantId/window by job.Schema), with TTL on
// TTLAttribute.
func defaultTableProps(removal awscdk.RemovalPolicy, protect bool) awsdynamodb.TableProps {
	p := *scheduleonwrite.TableProps(job.Schema(), removal, protect)
	p.TimeToLiveAttribute = jsii.String(TTLAttribute)
	return p
}

// defaultJobQueueProps are the job queue's: SQS-managed encryption, TLS
// only, 14 days, visibility and dead-letter queue as the props say.
func defaultJobQueueProps(removal awscdk.RemovalPolicy, visibility awscdk.Duration, dlq awssqs.IQueue, receives float64) awssqs.QueueProps {
	p := resource.DeadLetterQueueProps(removal)
	p.VisibilityTimeout = visibility
	if dlq != nil {
		p.DeadLetterQueue = &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(receives)}
	}
	return p
}
