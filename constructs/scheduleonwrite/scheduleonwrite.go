// Package scheduleonwrite is the core of the pattern: a DynamoDB table
// whose items each own one one-off EventBridge Scheduler schedule, the
// schedule group, the scheduler's execution role and dead-letter queue,
// and the expiry function that the schedules invoke. At the due time the
// expiry function claims the item with the contract's conditional write
// (contract.Schema.Claim) and, only when the claim succeeded, runs what
// happens at the due time: the adopter's Target function, or the to-do
// app's Notifications.
//
// The item format is the public contract (package contract): the Schema
// prop names the keys, the due and state attributes and the armed states;
// every function of the pipeline reads it from contract.EnvVar.
package scheduleonwrite

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/asyncinvoke"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/metrics"
	"github.com/unschedule/unschedule/internal/tableschema"
)

// Notifier is where the to-do app's expiry notifications go
// (notifications.UserNotifications implements it).
type Notifier interface {
	// GrantPublish lets grantee publish notifications.
	GrantPublish(grantee awsiam.IGrantable) awsiam.Grant
	// Environment tells a function where to publish (TOPIC_ARN_PREFIX and
	// TOPIC_SHARDS).
	Environment() map[string]string
}

// ScheduleOnWriteProps configures the table, its schedules and expiry.
// Exactly one of Target and Notifications is required.
type ScheduleOnWriteProps struct {
	// Schema names the item's keys, due and state attributes and armed
	// states (see contract.Schema); unset fields of a partial Schema take
	// the contract's neutral names (contract.Default). It is validated at
	// synth and handed to the expiry function in contract.EnvVar.
	// Default: tableschema.Todo(), the to-do app's items, when unset.
	Schema contract.Schema
	// ExistingTable is your own table, keyed as Schema says (string keys)
	// with a stream of NEW_AND_OLD_IMAGES. For a Table or TableV2 of this
	// app, synth checks its keys and stream; for a table imported with
	// attributes (Table_FromTableAttributes, with TableStreamArn) the key
	// names in Schema are trusted.
	// Default: a new table: on-demand, point-in-time recovery, encrypted,
	// streamed, keyed by Schema; with the to-do schema it also gets the
	// to-do app's indexes (pending, userPending).
	ExistingTable awsdynamodb.ITable
	// Target is your function to run at an item's due time, after the
	// claim succeeded, so at most once per firing of the item (the expiry
	// function invokes it synchronously with the payload
	// contract.Schema.EncodePayload, e.g. {"tenantId":…,"jobId":…,"runAt":…},
	// and records the delivery only when it returned without error).
	// Default: none; then Notifications is required.
	Target awslambda.IFunction
	// Notifications receive the to-do app's expiry notifications.
	// Default: none; then Target is required.
	Notifications Notifier
	// RemovalPolicy applies to the table, the schedule group, the
	// scheduler's dead-letter queue and the expiry failure queue.
	// Default: RETAIN (they outlive the stack).
	RemovalPolicy awscdk.RemovalPolicy
	// DeletionProtection keeps the table from being deleted by
	// CloudFormation or the API until it is turned off.
	// Default: false.
	DeletionProtection bool
	// Logs of the expiry function.
	// Default: one month, retained.
	Logs gofn.LogOptions
	// ExpiryMemoryMiB is the expiry function's memory.
	// Default: 128.
	ExpiryMemoryMiB float64
	// ExpiryTimeout is the expiry function's timeout (1 s..15 min); with
	// a Target it must cover the target's run. The delivery lease (how
	// long an attempt holds the right to run the target) is this plus 30
	// seconds, at least 60; synth fails when a Target of this app has a
	// longer timeout than the lease.
	// Default: 10 seconds.
	ExpiryTimeout awscdk.Duration
	// ScheduleRetryAttempts is how often the scheduler retries a failed
	// invocation before it sends the event to the dead-letter queue
	// (0..185; jsii.Number(0) turns retries off).
	// Default: 3.
	ScheduleRetryAttempts *float64
	// ScheduleMaxEventAge is how long the scheduler keeps retrying
	// (1 minute..1 day, whole seconds).
	// Default: one day.
	ScheduleMaxEventAge awscdk.Duration
	// The scheduler invokes the expiry function asynchronously: its retry
	// policy and DLQ cover only the hand-over of the event to Lambda. What
	// happens when the function itself fails is the function's
	// EventInvokeConfig, set by the next two props. The Step Functions and
	// TTL layers invoke it synchronously: there the six props from
	// ScheduleRetryAttempts to ExpiryFailureQueueProps do not apply, and
	// setting one fails synth.
	//
	// ExpiryMaxEventAge is how long Lambda keeps an expiry event it could
	// not run yet (throttled, or waiting to retry), 1 minute..6 hours.
	// Default: six hours, Lambda's maximum.
	ExpiryMaxEventAge awscdk.Duration
	// ExpiryRetryAttempts is how often Lambda retries a failed expiry,
	// 0..2; then the event goes to ExpiryFailureQueue.
	// Default: 2 (jsii.Number(0) turns retries off).
	ExpiryRetryAttempts *float64
	// ExistingDeadLetterQueue is your own standard queue for the
	// invocations the scheduler gave up on (the scheduler's role gets
	// sqs:SendMessage on it). Not with DeadLetterQueueProps.
	// Default: a new queue (DeadLetterQueueProps).
	ExistingDeadLetterQueue awssqs.IQueue
	// DeadLetterQueueProps override, field by field, the new dead-letter
	// queue's: SQS-managed encryption, TLS only, 14 days. Not with
	// ExistingDeadLetterQueue.
	// Default: those.
	DeadLetterQueueProps *awssqs.QueueProps
	// ExistingExpiryFailureQueue is your own standard queue for the
	// expiry events Lambda gave up on. Not with ExpiryFailureQueueProps.
	// Default: a new queue (ExpiryFailureQueueProps).
	ExistingExpiryFailureQueue awssqs.IQueue
	// ExpiryFailureQueueProps override the new failure queue's props
	// (SQS-managed encryption, TLS only, 14 days). Not with
	// ExistingExpiryFailureQueue.
	// Default: those.
	ExpiryFailureQueueProps *awssqs.QueueProps
	// WebURL is the web app's address, used for links in notifications.
	// Default: no link.
	WebURL string
	// AlarmTopic receives alarm notifications.
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
	// ExecutionLayer is what fires items at their due time:
	// LayerEventBridgeScheduler, LayerStepFunctions or LayerTTL. The item
	// contract, the conditional claim and the Target's payload are the
	// same for each (see the README's "Choosing a layer"). The schedule
	// group, its role and dead-letter queue exist only with
	// LayerEventBridgeScheduler.
	// Default: LayerEventBridgeScheduler.
	ExecutionLayer ExecutionLayer
	// MaxLateness is how late an item may fire. LayerTTL is refused
	// unless it is at least 48 hours (DynamoDB deletes expired items
	// typically within two days).
	// Default: unstated; then LayerTTL is refused.
	MaxLateness awscdk.Duration
	// TTLAttribute is the table's TTL attribute that markers carry
	// (LayerTTL). A new table gets it as its TimeToLiveAttribute. For an
	// ExistingTable, TTL must be enabled on it: synth fails otherwise for
	// a Table or TableV2 of this app; for an imported table synth cannot
	// see its TTL, so the prop is required.
	// Default: "unscheduleTtl" (required with an imported ExistingTable).
	TTLAttribute string
	// TTLOverdueCheckEvery is how often the TTL watch scans the table for
	// markers still there more than MaxLateness after their expiry, and
	// publishes their count (alarmed by TTLOverdueAlarm), 1 hour..1 day.
	// Each check is a Scan: it reads the whole table.
	// Default: 6 hours.
	TTLOverdueCheckEvery awscdk.Duration
	// TTLBatchSize is how many stream records the expiry function gets
	// at once (LayerTTL), 1..10000.
	// Default: 10.
	TTLBatchSize *float64
	// TTLParallelizationFactor is how many batches of one shard run at
	// once (LayerTTL), 1..10.
	// Default: 1.
	TTLParallelizationFactor *float64
	// TTLMaxConcurrency bounds the concurrent expiry invocations
	// (LayerTTL), 1..1000, as the expiry function's reserved concurrency
	// (a stream mapping has no MaximumConcurrency; that is SQS only).
	// Default: no bound beyond shards x TTLParallelizationFactor.
	TTLMaxConcurrency *float64
}

// ScheduleOnWrite is the table with its scheduling machinery.
type ScheduleOnWrite struct {
	constructs.Construct
	// Table holds the items (ExistingTable, or the one created); its
	// stream carries NEW_AND_OLD_IMAGES.
	Table awsdynamodb.ITable
	// ScheduleGroup holds every item's schedule (LayerEventBridgeScheduler
	// only, like SchedulerRole, DeadLetterQueue and DeadLetterAlarm).
	ScheduleGroup awsscheduler.ScheduleGroup
	// SchedulerRole is what schedules run as: it may only invoke the
	// expiry function and send to the dead-letter queue.
	SchedulerRole awsiam.Role
	// DeadLetterQueue receives invocations the scheduler gave up on.
	DeadLetterQueue awssqs.IQueue
	// DeadLetterAlarm fires when anything is in the dead-letter queue.
	DeadLetterAlarm awscloudwatch.Alarm
	// Expiry is the function the schedules invoke.
	Expiry *gofn.Function
	// ExpiryFailureQueue receives every expiry event Lambda gave up on
	// (with the original payload), and is alarmed; see
	// ExpiryMaxEventAge. LayerEventBridgeScheduler only, like the three
	// alarms below: the other layers invoke the function synchronously.
	ExpiryFailureQueue awssqs.IQueue
	// ExpiryFailureAlarm fires when ExpiryFailureQueue holds a record;
	// ExpiryDroppedAlarm on Lambda's AsyncEventsDropped for the function;
	// ExpiryDestinationFailureAlarm when a record could not reach the
	// queue.
	ExpiryFailureAlarm, ExpiryDroppedAlarm, ExpiryDestinationFailureAlarm awscloudwatch.Alarm
	// ErrorMetricAlarms alarm on each error metric the expiry function
	// writes (metrics.ErrorMetrics[metrics.FunctionExpiry]), by name.
	ErrorMetricAlarms map[string]awscloudwatch.Alarm
	// StateMachine waits and fires (LayerStepFunctions only);
	// FailedExecutionsAlarm fires on a failed execution.
	StateMachine          awsstepfunctions.StateMachine
	FailedExecutionsAlarm awscloudwatch.Alarm
	// TTLMapping maps the table's stream, filtered to TTL deletions of
	// markers, to the expiry function (LayerTTL only). TTLFailureQueue gets
	// the records it gave up on (alarmed by TTLFailureAlarm);
	// TTLDispatchFailedAlarm watches the firings that failed.
	TTLMapping                              awslambda.EventSourceMapping
	TTLFailureQueue                         awssqs.IQueue
	TTLFailureAlarm, TTLDispatchFailedAlarm awscloudwatch.Alarm
	// TTLWatch scans the table every TTLOverdueCheckEvery (LayerTTL only);
	// TTLOverdueAlarm fires while a marker is still there more than
	// MaxLateness after its own expiry (TTL off, or deletions far behind),
	// TTLWatchErrorsAlarm when the scan fails.
	TTLWatch                             *gofn.Function
	TTLOverdueAlarm, TTLWatchErrorsAlarm awscloudwatch.Alarm

	layer                         ExecutionLayer
	ttlAttr                       string
	schema                        contract.Schema
	retryAttempts, maxEventAgeSec float64
}

// NewScheduleOnWrite builds the table, schedule group, role, DLQ, alarm
// and expiry function.
func NewScheduleOnWrite(scope constructs.Construct, id *string, props *ScheduleOnWriteProps) *ScheduleOnWrite {
	p := withDefaults(props)
	validate(*id, p)
	c := constructs.NewConstruct(scope, id)
	s := &ScheduleOnWrite{Construct: c, schema: p.Schema, layer: p.ExecutionLayer, ttlAttr: p.TTLAttribute, retryAttempts: *p.ScheduleRetryAttempts,
		maxEventAgeSec: *p.ScheduleMaxEventAge.ToSeconds(nil)}

	if p.ExistingTable != nil {
		s.Table = p.ExistingTable
	} else {
		tp := tableProps(p.Schema, p.RemovalPolicy, p.DeletionProtection)
		if p.ExecutionLayer == LayerTTL {
			tp.TimeToLiveAttribute = jsii.String(p.TTLAttribute)
		}
		table := awsdynamodb.NewTable(c, jsii.String("Table"), tp)
		if reflect.DeepEqual(p.Schema, tableschema.Todo()) {
			addTodoIndexes(table)
		}
		s.Table = table
	}

	env := map[string]string{"TABLE_NAME": *s.Table.TableName(), contract.EnvVar: p.Schema.EnvValue()}
	description := "Fires an item at its due time: conditional claim, then "
	if p.Target != nil {
		env[EnvTargetFunction] = *p.Target.FunctionArn()
		env[EnvFireLease] = fmt.Sprint(int(fireLeaseSec(*p.ExpiryTimeout.ToSeconds(nil))))
		description += "invoke the target"
	} else {
		env["WEB_URL"] = p.WebURL
		for k, v := range p.Notifications.Environment() {
			env[k] = v
		}
		description += "notify"
	}
	s.Expiry = gofn.NewFunction(c, jsii.String("Expiry"), &gofn.FunctionProps{
		Entry:       "lambdas/expiry",
		Description: description,
		MemoryMiB:   p.ExpiryMemoryMiB,
		Timeout:     p.ExpiryTimeout,
		Logs:        p.Logs,
		Environment: env,
		// LayerTTL's TTLMaxConcurrency.
		ReservedConcurrentExecutions: expiryReservedConcurrency(p),
	})
	s.ErrorMetricAlarms = alarms.ErrorMetricAlarms(c, "", metrics.FunctionExpiry, map[string]string{
		metrics.ExpiryBadInput: "The expiry function got a payload it cannot read: that schedule can never fire its item. " +
			"Check the schedule's input against the schema in " + contract.EnvVar + " (keys and due attribute).",
		metrics.ExpiryErrors: "Expiry invocations failed (the table, or the target or notification); Lambda retries them, then " +
			"sends them to the expiry failure queue. Check the expiry function's logs.",
	}, p.AlarmTopic)
	s.GrantExpire(s.Expiry.Function)
	if p.Target != nil {
		// Invoke the target only (its ARN and its versions/aliases).
		grants.Invoke(p.Target, s.Expiry.Function)
		targetVersions := any("Resource::" + *p.Target.FunctionArn() + ":*")
		if *awscdk.Token_IsUnresolved(p.Target.FunctionArn()) {
			targetVersions = nag.Regex(`/^Resource::<[^>]+\.Arn>:\*$/g`)
		}
		nag.Suppress(nag.RolePolicy(s.Expiry.Function), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{targetVersions},
			Reason: "The expiry function invokes the Target only: its ARN and its versions and aliases (ARN:*), nothing else."})
	} else {
		p.Notifications.GrantPublish(s.Expiry.Function)
		nag.Suppress(nag.RolePolicy(s.Expiry.Function), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{nag.Regex(`/^Resource::arn:<AWS::Partition>:sns:<AWS::Region>:<AWS::AccountId>:.+-\*$/g`)},
			Reason: "Publish to the notification shard topics: thousands of deterministic names <prefix>-<n>; one pattern keeps the policy under IAM's size limit"})
	}

	switch p.ExecutionLayer {
	case LayerStepFunctions:
		s.buildStepFunctions(c, p)
		return s
	case LayerTTL:
		s.buildTTL(c, *id, p)
		return s
	}
	s.buildScheduler(c, *id, p)
	return s
}

// buildScheduler makes the EventBridge Scheduler layer: the schedule
// group, its dead-letter queue and alarm, the role its schedules run as,
// and the expiry function's asynchronous-invocation settings with their
// failure queue and alarms. Only this layer invokes the expiry function
// asynchronously; the Step Functions task and the stream mapping invoke
// it synchronously, where an EventInvokeConfig never applies.
func (s *ScheduleOnWrite) buildScheduler(c constructs.Construct, id string, p ScheduleOnWriteProps) {
	async := asyncinvoke.Configure(c, "Expiry", s.Expiry.Function, asyncinvoke.Props{
		Name: "expiry", MaxEventAgeSec: *p.ExpiryMaxEventAge.ToSeconds(nil), RetryAttempts: *p.ExpiryRetryAttempts,
		Remedy:     "Those items stay armed until the reconciler expires them (at most one period late); to fire them now, invoke the expiry function with each record's requestPayload.",
		AlarmTopic: p.AlarmTopic, RemovalPolicy: p.RemovalPolicy,
		ExistingFailureQueue: p.ExistingExpiryFailureQueue, FailureQueueProps: p.ExpiryFailureQueueProps,
		ExistingName: "ExistingExpiryFailureQueue", PropsName: "ExpiryFailureQueueProps",
	})
	s.ExpiryFailureQueue = async.Queue
	s.ExpiryFailureAlarm, s.ExpiryDroppedAlarm, s.ExpiryDestinationFailureAlarm = async.FailureAlarm, async.DroppedAlarm, async.DeliveryFailureAlarm

	s.ScheduleGroup = awsscheduler.NewScheduleGroup(c, jsii.String("ScheduleGroup"), &awsscheduler.ScheduleGroupProps{
		RemovalPolicy: p.RemovalPolicy,
	})

	var dlq awssqs.Queue
	s.DeadLetterQueue, dlq = resource.Queue(c, id, "ScheduleDeadLetterQueue", p.ExistingDeadLetterQueue, "ExistingDeadLetterQueue",
		p.DeadLetterQueueProps, "DeadLetterQueueProps", resource.DeadLetterQueueProps(p.RemovalPolicy))
	if dlq != nil {
		nag.Suppress(dlq, nag.Rule{ID: "AwsSolutions-SQS3", Reason: "This queue is the scheduler's dead-letter queue; a DLQ of a DLQ adds nothing"})
	}
	s.DeadLetterAlarm = alarms.QueueNotEmpty(c, "ScheduleDeadLetterAlarm", s.DeadLetterQueue,
		"Scheduler gave up invoking the expiry function: items may not have fired. Inspect the messages, then redrive or let the reconciler expire them.", p.AlarmTopic)

	s.SchedulerRole = awsiam.NewRole(c, jsii.String("SchedulerRole"), &awsiam.RoleProps{
		Description: jsii.String("Assumed by this group's schedules: invoke the expiry function, send to the DLQ"),
		// EventBridge Scheduler assumes the role on behalf of the schedule
		// GROUP: aws:SourceArn is the group's ARN, never a schedule's ARN
		// or a name prefix, or every invocation (and DLQ delivery) is
		// refused. https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("scheduler.amazonaws.com"), &awsiam.ServicePrincipalOpts{
			Conditions: &map[string]any{
				"StringEquals": map[string]any{
					"aws:SourceAccount": awscdk.Stack_Of(c).Account(),
					"aws:SourceArn":     s.scheduleGroupArn(),
				},
			},
		}),
	})
	s.SchedulerRole.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("lambda:InvokeFunction"),
		Resources: jsii.Strings(*s.Expiry.Function.FunctionArn()),
	}))
	s.SchedulerRole.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sqs:SendMessage"),
		Resources: jsii.Strings(*s.DeadLetterQueue.QueueArn()),
	}))
}

// addTodoIndexes adds the to-do app's indexes: pending, for the
// reconciler, and userPending, for the per-user cap's count (see
// tableschema).
func addTodoIndexes(table awsdynamodb.Table) {
	table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String(tableschema.PendingIndex),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(tableschema.PendingShardAttr), Type: awsdynamodb.AttributeType_STRING},
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String(tableschema.PendingSortAttr), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
	table.AddLocalSecondaryIndex(&awsdynamodb.LocalSecondaryIndexProps{
		IndexName:      jsii.String(tableschema.UserPendingIndex),
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String(tableschema.UserPendingAttr), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_KEYS_ONLY,
	})
}

func validate(id string, p ScheduleOnWriteProps) {
	if (p.Target == nil) == (p.Notifications == nil) {
		given := "neither is set"
		if p.Target != nil {
			given = "both are set"
		}
		panic(fmt.Sprintf("%s: set exactly one of Target and Notifications (%s): Target is your function to run at the due time, "+
			"Notifications the to-do app's per-user emails", id, given))
	}
	if err := p.Schema.Validate(); err != nil {
		panic(fmt.Sprintf("%s: Schema: %v", id, strings.ReplaceAll(err.Error(), "\n", "; ")))
	}
	if p.Notifications != nil && !reflect.DeepEqual(p.Schema, tableschema.Todo()) {
		panic(fmt.Sprintf("%s: Notifications sends the to-do app's emails and fires only its items (tableschema.Todo()); "+
			"with a Schema of your own, set Target to the function to run at the due time instead", id))
	}
	validateLayer(id, p)
	if p.ExistingTable != nil {
		CheckTable(id, "ExistingTable", p.ExistingTable, p.Schema)
		if p.DeletionProtection {
			panic(fmt.Sprintf("%s: DeletionProtection applies to the table this construct creates, not to ExistingTable: set it on your table instead", id))
		}
	}
	propcheck.CheckWhole(id, "ScheduleRetryAttempts", *p.ScheduleRetryAttempts, 0, 185, "retries of a failed invocation; the scheduler allows 0 to 185")
	propcheck.CheckSeconds(id, "ScheduleMaxEventAge", p.ScheduleMaxEventAge, 60, 86400, "the scheduler allows 1 minute to 1 day")
	propcheck.CheckSeconds(id, "ExpiryTimeout", p.ExpiryTimeout, 1, 900, "Lambda allows 1 second to 15 minutes")
	checkTargetTimeout(id, p)
	asyncinvoke.Validate(id, "Expiry", *p.ExpiryMaxEventAge.ToSeconds(nil), *p.ExpiryRetryAttempts)
	if p.ExistingDeadLetterQueue != nil && p.ExistingDeadLetterQueue.Fifo() != nil && *p.ExistingDeadLetterQueue.Fifo() {
		panic(fmt.Sprintf("%s: ExistingDeadLetterQueue is a FIFO queue: the scheduler accepts only a standard queue as its dead-letter queue", id))
	}
	if p.WebURL != "" && !*awscdk.Token_IsUnresolved(jsii.String(p.WebURL)) && !strings.HasPrefix(p.WebURL, "https://") && !strings.HasPrefix(p.WebURL, "http://localhost") {
		panic(fmt.Sprintf("%s: WebURL must start with https:// (or http://localhost) (given %q)", id, p.WebURL))
	}
}

// checkTargetTimeout panics when the Target may run longer than the
// delivery lease: a retried firing would then take over the item and run
// the target again while the first run still goes. Only a Target of this
// app has a timeout synth can read.
func checkTargetTimeout(id string, p ScheduleOnWriteProps) {
	target, known := resource.FunctionTimeoutSec(p.Target)
	if !known || *p.ExpiryTimeout.IsUnresolved() {
		return
	}
	expiry := *p.ExpiryTimeout.ToSeconds(nil)
	if lease := fireLeaseSec(expiry); target > lease {
		panic(fmt.Sprintf("%s: the Target's timeout (%vs) is longer than the delivery lease (%vs: ExpiryTimeout %vs + %ds, at least %ds), "+
			"so a retried firing could run the target again while the first run still goes: set ExpiryTimeout to at least %vs "+
			"(the target's timeout), or lower the target's timeout to at most %vs",
			id, target, lease, expiry, FireLeaseMarginSec, MinFireLeaseSec, target, lease))
	}
}

// CheckTable panics unless table can carry schema's items: for a Table or
// TableV2 of this app, its keys must be the schema's and its stream must
// carry NEW_AND_OLD_IMAGES; any table needs a stream. For a table imported
// with attributes, the key names cannot be read: schema is trusted.
func CheckTable(id, prop string, table awsdynamodb.ITable, schema contract.Schema) {
	info := resource.InspectTable(table)
	if !info.HasStreamAttribute {
		panic(fmt.Sprintf("%s: %s %s has no stream: enable a stream with the NEW_AND_OLD_IMAGES view "+
			"(awsdynamodb.TableProps.Stream = StreamViewType_NEW_AND_OLD_IMAGES), or import the table with its TableStreamArn",
			id, prop, *table.Node().Path()))
	}
	if !info.Known {
		return
	}
	if info.StreamView != "" && info.StreamView != "NEW_AND_OLD_IMAGES" {
		panic(fmt.Sprintf("%s: %s %s has a %s stream: the pipeline compares old and new images, so set its stream view to NEW_AND_OLD_IMAGES",
			id, prop, *table.Node().Path(), info.StreamView))
	}
	wantSort := schema.SortKey
	if info.PartitionKey != "" && (info.PartitionKey != schema.PartitionKey || info.SortKey != wantSort) {
		panic(fmt.Sprintf("%s: %s is keyed %s but Schema says %s: set Schema.PartitionKey to %q and %s",
			id, prop, keyText(info.PartitionKey, info.SortKey), keyText(schema.PartitionKey, wantSort), info.PartitionKey, sortAdvice(info.SortKey)))
	}
}

func keyText(pk, sk string) string {
	if sk == "" {
		return pk + " (no sort key)"
	}
	return pk + "/" + sk
}

func sortAdvice(sk string) string {
	if sk == "" {
		return "Schema.NoSortKey to true"
	}
	return fmt.Sprintf("Schema.SortKey to %q", sk)
}

// Schema is the item schema the construct works with (defaults filled).
func (s *ScheduleOnWrite) Schema() contract.Schema { return s.schema }

// scheduleGroupArn is the group's ARN, as the scheduler presents it in
// aws:SourceArn when it assumes the execution role.
func (s *ScheduleOnWrite) scheduleGroupArn() *string {
	return awscdk.Stack_Of(s.Construct).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("scheduler"),
		Resource:     jsii.String("schedule-group"),
		ResourceName: s.ScheduleGroup.ScheduleGroupName(),
	})
}

// scheduleArnPattern matches every schedule in the group.
func (s *ScheduleOnWrite) scheduleArnPattern() *string {
	return awscdk.Stack_Of(s.Construct).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("scheduler"),
		Resource:     jsii.String("schedule"),
		ResourceName: jsii.String(*s.ScheduleGroup.ScheduleGroupName() + "/*"),
	})
}

// SchedulerEnvironment is what a function that creates or moves schedules
// needs to know, as the environment variables our Lambda mains read.
//
// With LayerStepFunctions or LayerTTL it names the layer
// (UNSCHEDULE_EXECUTION_LAYER) and the state machine, or the table and its
// TTL attribute, instead.
func (s *ScheduleOnWrite) SchedulerEnvironment() map[string]string {
	if env := s.layerEnvironment(); env != nil {
		return env
	}
	return map[string]string{
		"SCHEDULE_GROUP":         *s.ScheduleGroup.ScheduleGroupName(),
		"EXPIRY_FUNCTION_ARN":    *s.Expiry.Function.FunctionArn(),
		"SCHEDULER_ROLE_ARN":     *s.SchedulerRole.RoleArn(),
		"SCHEDULER_DLQ_ARN":      *s.DeadLetterQueue.QueueArn(),
		"SCHEDULE_RETRIES":       fmt.Sprint(s.retryAttempts),
		"SCHEDULE_MAX_EVENT_AGE": fmt.Sprint(s.maxEventAgeSec),
	}
}

// GrantCreateSchedules lets grantee create schedules in the group, and
// pass the scheduler role to the scheduler service, and nothing more.
func (s *ScheduleOnWrite) GrantCreateSchedules(grantee awsiam.IGrantable) awsiam.Grant {
	return s.grantSchedules(grantee, "scheduler:CreateSchedule")
}

// GrantModifySchedules lets grantee create, move and delete schedules
// inside the group (never outside it), and pass the scheduler role: what
// the cancel worker needs (it creates the schedules of items that their
// writer did not schedule).
//
// With LayerStepFunctions: start and list executions of the state machine,
// stop and describe its executions only. With LayerTTL: put and delete
// items of the table (the markers).
func (s *ScheduleOnWrite) GrantModifySchedules(grantee awsiam.IGrantable) awsiam.Grant {
	if s.layer != LayerEventBridgeScheduler {
		return s.grantLayer(grantee)
	}
	return s.grantSchedules(grantee, "scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule")
}

// GrantManageSchedules lets grantee create, read, move and delete schedules
// inside the group (never outside it), and pass the scheduler role.
func (s *ScheduleOnWrite) GrantManageSchedules(grantee awsiam.IGrantable) awsiam.Grant {
	return s.grantSchedules(grantee, "scheduler:CreateSchedule", "scheduler:UpdateSchedule",
		"scheduler:DeleteSchedule", "scheduler:GetSchedule")
}

// GrantListSchedules lets grantee list schedules. ListSchedules has no
// resource-level permissions, so this is the one grant on "*"; it reveals
// names only, not targets or payloads.
func (s *ScheduleOnWrite) GrantListSchedules(grantee awsiam.IGrantable) awsiam.Grant {
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("scheduler:ListSchedules"), ResourceArns: jsii.Strings("*"),
	})
}

func (s *ScheduleOnWrite) grantSchedules(grantee awsiam.IGrantable, actions ...string) awsiam.Grant {
	if s.layer != LayerEventBridgeScheduler {
		panic(fmt.Sprintf("%s: this grant is EventBridge Scheduler's, and ExecutionLayer is %s: only GrantModifySchedules "+
			"(the cancellation worker's) works with every layer", *s.Node().Path(), s.layer))
	}
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings(actions...), ResourceArns: &[]*string{s.scheduleArnPattern()},
	})
	grantee.GrantPrincipal().AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings("iam:PassRole"),
		Resources:  jsii.Strings(*s.SchedulerRole.RoleArn()),
		Conditions: &map[string]any{"StringEquals": map[string]any{"iam:PassedToService": "scheduler.amazonaws.com"}},
	}))
	return g
}

// GrantExpire lets grantee run the expiry path: read an item and update
// it conditionally. No put, delete, query or scan, and no index.
func (s *ScheduleOnWrite) GrantExpire(grantee awsiam.IGrantable) awsiam.Grant {
	return grants.Table(s.Table, grantee, "dynamodb:GetItem", "dynamodb:UpdateItem")
}

// GrantWriteItems lets grantee (a writer of items: your service, a
// script) put, update and delete items of the table, with its
// customer-managed KMS key when it has one. Any such write arms, moves or
// cancels schedules through the stream.
func (s *ScheduleOnWrite) GrantWriteItems(grantee awsiam.IGrantable) awsiam.Grant {
	return grants.Table(s.Table, grantee, "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem")
}

// GrantReadItems lets grantee get and query items of the table (not its
// indexes), with its customer-managed KMS key when it has one.
func (s *ScheduleOnWrite) GrantReadItems(grantee awsiam.IGrantable) awsiam.Grant {
	return grants.Table(s.Table, grantee, "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
}

// GrantTable grants actions on the table itself only (not its indexes),
// with its customer-managed key. Kept for the other constructs; see
// constructs/internal/grants.
func GrantTable(table awsdynamodb.ITable, grantee awsiam.IGrantable, actions ...string) awsiam.Grant {
	return grants.Table(table, grantee, actions...)
}

// QueueNotEmptyAlarm alarms as soon as a queue holds a message (see
// alarms.QueueNotEmpty).
func QueueNotEmptyAlarm(scope constructs.Construct, id string, q awssqs.IQueue, description string, topic awssns.ITopic) awscloudwatch.Alarm {
	return alarms.QueueNotEmpty(scope, id, q, description, topic)
}

// AddAlarmAction sends the alarm's state changes to topic (no-op for nil).
func AddAlarmAction(a awscloudwatch.Alarm, topic awssns.ITopic) { alarms.AddActions(a, topic) }

// MetricExpired is the count of items the expiry function fired (the
// claim succeeded). Default: Sum over 5 minutes.
func (s *ScheduleOnWrite) MetricExpired(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(s.Construct, metrics.FunctionExpiry, metrics.TasksExpired, opts)
}

// MetricExpiryErrors is the count of failed expiry invocations (retried).
// Default: Sum over 5 minutes.
func (s *ScheduleOnWrite) MetricExpiryErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(s.Construct, metrics.FunctionExpiry, metrics.ExpiryErrors, opts)
}

// MetricExpiryBadInput is the count of expiry payloads that could not be
// read. Default: Sum over 5 minutes.
func (s *ScheduleOnWrite) MetricExpiryBadInput(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(s.Construct, metrics.FunctionExpiry, metrics.ExpiryBadInput, opts)
}

// MetricExpirySkipped is the count of firings with nothing to do (the
// item moved on, or its target already ran). Default: Sum over 5 minutes.
func (s *ScheduleOnWrite) MetricExpirySkipped(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(s.Construct, metrics.FunctionExpiry, metrics.ExpirySkipped, opts)
}

// MetricLagSeconds is the delivery time minus the due time, in seconds
// (the DeliveryLagSeconds metric).
// Default: Sum over 5 minutes; pass Statistic "p99" for the tail.
func (s *ScheduleOnWrite) MetricLagSeconds(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(s.Construct, metrics.FunctionExpiry, metrics.DeliveryLagSeconds, opts)
}

// ErrorAlarms are the construct's alarms on the error metrics of its
// function (operations.ErrorAlarmSource: the operations construct then
// adds no second one).
func (s *ScheduleOnWrite) ErrorAlarms() []awscloudwatch.Alarm {
	return alarms.List(s.ErrorMetricAlarms, metrics.ErrorMetrics[metrics.FunctionExpiry]...)
}
