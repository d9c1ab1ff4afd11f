// Package resource holds the "existing object or new" builders the
// pipeline's constructs share, as aws-solutions-constructs do: a
// construct takes Existing<X> or <X>Props (overrides merged over its
// well-architected defaults by propcheck.Merge), never both
// (propcheck.Exclusive); and what synth can read of a table.
package resource

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/propcheck"
)

// Queue is existing when it is set, else a new queue with defaults and
// the overrides merged over them. existingName and propsName name the
// props in the message when both are set.
func Queue(scope constructs.Construct, id, queueID string, existing awssqs.IQueue, existingName string,
	overrides *awssqs.QueueProps, propsName string, defaults awssqs.QueueProps) (awssqs.IQueue, awssqs.Queue) {
	propcheck.Exclusive(id, existingName, existing != nil, propsName, overrides != nil)
	if existing != nil {
		return existing, nil
	}
	merged := propcheck.Merge(defaults, overrides)
	q := awssqs.NewQueue(scope, jsii.String(queueID), &merged)
	return q, q
}

// DeadLetterRetentionDays keeps dead letters as long as SQS allows.
const DeadLetterRetentionDays = 14

// DeadLetterQueueProps are the defaults of every dead-letter and failure
// queue: SQS-managed encryption, TLS only, 14 days.
func DeadLetterQueueProps(removal awscdk.RemovalPolicy) awssqs.QueueProps {
	return awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(DeadLetterRetentionDays)),
		RemovalPolicy:   removal,
	}
}
