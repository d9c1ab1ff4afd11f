package deferredjobs

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/deferredjobs/job"
)

// props are the props with their defaults filled.
type props struct {
	DeferredJobsProps
	runAt      job.Weekly
	visibility awscdk.Duration
	// protect is DeletionProtection, or its default.
	protect bool
}

func withDefaults(id string, in *DeferredJobsProps) props {
	if in == nil || in.Worker == nil {
		panic(fmt.Sprintf("%s: Worker is required: pass the function that runs one job (an SQS consumer of job.Job messages)", id))
	}
	p := props{DeferredJobsProps: *in, runAt: job.DefaultWeekly}
	if in.RunAt != nil {
		p.runAt = *in.RunAt
	}
	p.MaxLateness = propcheck.DurationOr(p.MaxLateness, awscdk.Duration_Hours(jsii.Number(DefaultMaxLatenessHours)))
	p.WorkerMaxConcurrency = propcheck.Or(p.WorkerMaxConcurrency, DefaultWorkerMaxConcurrency)
	p.WorkerBatchSize = propcheck.Or(p.WorkerBatchSize, DefaultWorkerBatchSize)
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	p.protect = resource.Protected(p.RemovalPolicy, p.DeletionProtection)
	return p
}

func validate(id string, p *props) {
	if err := p.runAt.Validate(); err != nil {
		panic(fmt.Sprintf("%s: RunAt: %v", id, err))
	}
	propcheck.CheckWhole(id, "WorkerMaxConcurrency", p.WorkerMaxConcurrency, 2, 1000, "concurrent worker runs; Lambda allows 2 to 1000")
	propcheck.CheckWhole(id, "WorkerBatchSize", p.WorkerBatchSize, 1, 10, "jobs per worker run; up to 10 without a batching window")
	propcheck.Exclusive(id, "ExistingTable", p.ExistingTable != nil, "TableProps", p.TableProps != nil)
	if p.ExistingTable != nil && p.DeletionProtection != nil {
		panic(fmt.Sprintf("%s: DeletionProtection applies to the table this construct creates, not to ExistingTable: set it on your table instead", id))
	}
	p.visibility = validateQueue(id, p)
}

// validateQueue checks the job queue's props and returns its visibility
// timeout.
func validateQueue(id string, p *props) awscdk.Duration {
	propcheck.Exclusive(id, "ExistingJobQueue", p.ExistingJobQueue != nil, "JobQueueProps", p.JobQueueProps != nil)
	if p.ExistingJobQueue != nil {
		propcheck.Exclusive(id, "ExistingJobQueue", true, "JobVisibilityTimeout", p.JobVisibilityTimeout != nil)
		propcheck.Exclusive(id, "ExistingJobQueue", true, "JobMaxReceiveCount", p.JobMaxReceiveCount != 0)
		return nil
	}
	if p.ExistingJobDeadLetterQueue != nil {
		panic(fmt.Sprintf("%s: ExistingJobDeadLetterQueue is the dead-letter queue of an ExistingJobQueue: set ExistingJobQueue too, "+
			"or leave it unset (the new job queue gets its own dead-letter queue)", id))
	}
	p.JobMaxReceiveCount = propcheck.Or(p.JobMaxReceiveCount, DefaultJobMaxReceiveCount)
	propcheck.CheckWhole(id, "JobMaxReceiveCount", p.JobMaxReceiveCount, 1, 1000, "tries of a job before its dead-letter queue; SQS allows 1 to 1000")
	if q := p.JobQueueProps; q != nil {
		switch {
		case q.VisibilityTimeout != nil:
			panic(fmt.Sprintf("%s: JobQueueProps.VisibilityTimeout is set by JobVisibilityTimeout (checked against the Worker's timeout): set that instead", id))
		case q.DeadLetterQueue != nil:
			panic(fmt.Sprintf("%s: JobQueueProps.DeadLetterQueue is the construct's (JobMaxReceiveCount sets its tries): leave it unset, or pass ExistingJobQueue", id))
		case q.Encryption == awssqs.QueueEncryption_UNENCRYPTED:
			panic(fmt.Sprintf("%s: JobQueueProps.Encryption turns encryption off: leave it unset (SQS-managed), or use KMS or KMS_MANAGED", id))
		case q.EnforceSSL != nil && !*q.EnforceSSL:
			panic(fmt.Sprintf("%s: JobQueueProps.EnforceSSL is false: the job queue is TLS-only; leave it unset", id))
		}
	}
	return jobVisibility(id, p.Worker, p.JobVisibilityTimeout)
}

// tableProps are the new table's props: the defaults with TableProps
// merged over them; keys, stream, TTL and point-in-time recovery stay.
func tableProps(id string, p *props) awsdynamodb.TableProps {
	defaults := defaultTableProps(p.RemovalPolicy, p.protect)
	if o := p.TableProps; o != nil {
		fixed := "the construct's (key tenantId/window, stream NEW_AND_OLD_IMAGES, TTL on " + TTLAttribute + ")"
		for name, set := range map[string]bool{"PartitionKey": o.PartitionKey != nil, "SortKey": o.SortKey != nil,
			"Stream": o.Stream != "", "TimeToLiveAttribute": o.TimeToLiveAttribute != nil} {
			if set {
				panic(fmt.Sprintf("%s: TableProps.%s is %s: leave it unset, or pass ExistingTable", id, name, fixed))
			}
		}
		if r := o.PointInTimeRecoverySpecification; r != nil && (r.PointInTimeRecoveryEnabled == nil || !*r.PointInTimeRecoveryEnabled) ||
			o.PointInTimeRecovery != nil && !*o.PointInTimeRecovery {
			panic(fmt.Sprintf("%s: TableProps turns point-in-time recovery off: the table holds every tenant's pending job; leave it unset", id))
		}
	}
	return propcheck.Merge(defaults, p.TableProps)
}
