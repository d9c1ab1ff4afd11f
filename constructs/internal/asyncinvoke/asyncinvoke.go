// Package asyncinvoke gives a function that AWS services invoke
// asynchronously (EventBridge Scheduler, EventBridge rules) an explicit
// EventInvokeConfig: how long Lambda keeps an event, how often it retries a
// failed one, and an encrypted SQS queue that receives every event Lambda
// gives up on, with alarms on that queue and on Lambda's own count of
// dropped events.
//
// Without it, Lambda retries a failed event twice and then discards it:
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
// Destinations: https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
// Metrics (AsyncEventsDropped, DestinationDeliveryFailures):
// https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html
package asyncinvoke

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
)

// Lambda's limits on an EventInvokeConfig.
const (
	MinMaxEventAgeSec = 60
	MaxMaxEventAgeSec = 21600
	MaxRetryAttempts  = 2
)

// Props configures one function's asynchronous invocation.
type Props struct {
	// Name is the function's short name, for alarm descriptions
	// ("expiry").
	Name string
	// MaxEventAgeSec is how long Lambda keeps an event it could not yet
	// run (throttled, or waiting for a retry), 60..21600.
	MaxEventAgeSec float64
	// RetryAttempts after the function returned an error, 0..2.
	RetryAttempts float64
	// Remedy tells the operator what to do with a failed event.
	Remedy string
	// AlarmTopic receives the alarms; nil for alarms with no action.
	AlarmTopic awssns.ITopic
	// RemovalPolicy of the failure queue (empty: CDK's default for
	// queues, DESTROY).
	RemovalPolicy awscdk.RemovalPolicy
	// ExistingFailureQueue is the caller's own queue (standard: Lambda's
	// on-failure destination); nil for a new one.
	ExistingFailureQueue awssqs.IQueue
	// FailureQueueProps override the new queue's props; not with
	// ExistingFailureQueue.
	FailureQueueProps *awssqs.QueueProps
	// ExistingName and PropsName name the two props above in the
	// construct's message when both are set.
	ExistingName, PropsName string
}

// Config is what Configure built.
type Config struct {
	// Queue receives an invocation record (with the original event) for
	// every event Lambda gave up on: the caller's, or FailureQueue.
	Queue awssqs.IQueue
	// FailureQueue is the queue Configure created (nil when the caller
	// passed its own).
	FailureQueue awssqs.Queue
	// FailureAlarm fires when the failure queue holds a record.
	FailureAlarm awscloudwatch.Alarm
	// DroppedAlarm fires on Lambda's AsyncEventsDropped: an event was
	// given up (sent to the failure queue first, when it can be).
	DroppedAlarm awscloudwatch.Alarm
	// DeliveryFailureAlarm fires on DestinationDeliveryFailures: a given-up
	// event could not even reach the failure queue, so it is lost.
	DeliveryFailureAlarm awscloudwatch.Alarm
}

// Validate panics with a message that names the construct and prop, unless
// the values are within Lambda's limits. Unresolved tokens are not checked.
func Validate(id, prefix string, maxEventAgeSec, retryAttempts float64) {
	propcheck.CheckWhole(id, prefix+"MaxEventAge", maxEventAgeSec, MinMaxEventAgeSec, MaxMaxEventAgeSec,
		"seconds Lambda keeps an asynchronous event; Lambda allows 60 to 21600")
	propcheck.CheckWhole(id, prefix+"RetryAttempts", retryAttempts, 0, MaxRetryAttempts,
		"retries of a failed asynchronous invocation; Lambda allows 0 to 2")
}

// Configure sets fn's EventInvokeConfig with an on-failure destination and
// adds the queue and alarms to scope, their ids prefixed with prefix
// ("Fire" gives FireFailureQueue, FireFailureAlarm,
// FireAsyncEventsDroppedAlarm, FireDestinationFailureAlarm).
// SqsDestination grants fn's role sqs:SendMessage on the queue: Lambda
// sends the record as the function.
func Configure(scope constructs.Construct, prefix string, fn awslambda.IFunction, p Props) *Config {
	c := &Config{}
	if p.ExistingName == "" {
		p.ExistingName, p.PropsName = "ExistingFailureQueue", "FailureQueueProps"
	}
	c.Queue, c.FailureQueue = resource.Queue(scope, *scope.Node().Id(), prefix+"FailureQueue", p.ExistingFailureQueue, p.ExistingName,
		p.FailureQueueProps, p.PropsName, resource.DeadLetterQueueProps(p.RemovalPolicy))
	if c.FailureQueue != nil {
		nag.Suppress(c.FailureQueue, nag.Rule{ID: "AwsSolutions-SQS3",
			Reason: fmt.Sprintf("This queue is the %s function's on-failure destination (a dead-letter queue itself); a DLQ of a DLQ adds nothing", p.Name)})
	}
	fn.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{
		MaxEventAge:   awscdk.Duration_Seconds(jsii.Number(p.MaxEventAgeSec)),
		RetryAttempts: jsii.Number(p.RetryAttempts),
		OnFailure:     awslambdadestinations.NewSqsDestination(c.Queue),
	})

	c.FailureAlarm = alarms.QueueNotEmpty(scope, prefix+"FailureAlarm", c.Queue,
		fmt.Sprintf("Lambda gave up on an asynchronous invocation of the %s function; the record, with the original event, is in its failure queue. %s", p.Name, p.Remedy),
		p.AlarmTopic)
	sum := &awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5))}
	c.DroppedAlarm = alarms.AtLeast(scope, prefix+"AsyncEventsDroppedAlarm",
		fmt.Sprintf("Lambda dropped asynchronous events of the %s function (errors after every retry, or older than the maximum event age). Check its failure queue and logs. %s", p.Name, p.Remedy),
		fn.Metric(jsii.String("AsyncEventsDropped"), sum), 1, p.AlarmTopic)
	c.DeliveryFailureAlarm = alarms.AtLeast(scope, prefix+"DestinationFailureAlarm",
		fmt.Sprintf("Lambda could not send a failed %s event to its failure queue: the event is lost. Check the queue's policy and the function's sqs:SendMessage grant. %s", p.Name, p.Remedy),
		fn.Metric(jsii.String("DestinationDeliveryFailures"), sum), 1, p.AlarmTopic)
	return c
}
