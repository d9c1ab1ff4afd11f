// Package resource holds the "existing object or new" builders every
// construct shares, as aws-solutions-constructs do: a construct takes
// Existing<X> or <X>Props (overrides merged over its well-architected
// defaults), never both.
package resource

import (
	"fmt"
	"reflect"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/contract"
)

// Exclusive panics, naming both props, when a construct got both an
// existing resource and props for a new one.
func Exclusive(id, existingName string, hasExisting bool, propsName string, hasProps bool) {
	if hasExisting && hasProps {
		panic(fmt.Sprintf("%s: %s and %s are both set: pass %s to use your own resource, or %s to adjust the one this construct creates, not both",
			id, existingName, propsName, existingName, propsName))
	}
}

// Merge returns defaults with every field that overrides sets (non-zero)
// copied over it. T is a props struct (pointer, interface, string and
// slice fields, as jsii structs are).
func Merge[T any](defaults T, overrides *T) *T {
	out := defaults
	if overrides == nil {
		return &out
	}
	dst, src := reflect.ValueOf(&out).Elem(), reflect.ValueOf(overrides).Elem()
	for i := 0; i < src.NumField(); i++ {
		if f := src.Field(i); !f.IsZero() {
			dst.Field(i).Set(f)
		}
	}
	return &out
}

// Queue is existing when it is set, else a new queue with defaults and
// the overrides merged over them. existingName and propsName name the
// props in the message when both are set.
func Queue(scope constructs.Construct, id, queueID string, existing awssqs.IQueue, existingName string,
	overrides *awssqs.QueueProps, propsName string, defaults awssqs.QueueProps) (awssqs.IQueue, awssqs.Queue) {
	Exclusive(id, existingName, existing != nil, propsName, overrides != nil)
	if existing != nil {
		return existing, nil
	}
	q := awssqs.NewQueue(scope, jsii.String(queueID), Merge(defaults, overrides))
	return q, q
}

// Schema is the schema a construct works with: contract.Default() for a
// zero Schema (props that leave it unset), else s with its unset fields
// filled (contract.Schema.WithDefaults).
func Schema(s contract.Schema) contract.Schema {
	if reflect.DeepEqual(s, contract.Schema{}) {
		return contract.Default()
	}
	return s.WithDefaults()
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
