// Package scheduleonwrite is the core of the pattern: a DynamoDB table
// whose items each own one one-off EventBridge Scheduler schedule, the
// schedule group, the scheduler's execution role and dead-letter queue,
// and the expiry function that the schedules invoke.
package scheduleonwrite

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/asyncinvoke"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/internal/tableschema"
)

// Notifier is where expiry notifications go
// (notifications.UserNotifications implements it).
type Notifier interface {
	// GrantPublish lets grantee publish notifications.
	GrantPublish(grantee awsiam.IGrantable) awsiam.Grant
	// Environment tells a function where to publish (TOPIC_ARN_PREFIX and
	// TOPIC_SHARDS).
	Environment() map[string]string
}

// ScheduleOnWriteProps configures the table, its schedules and expiry.
type ScheduleOnWriteProps struct {
	// Notifications receive expiry notifications. Required.
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
	// ExpiryTimeoutSec is the expiry function's timeout.
	// Default: 10.
	ExpiryTimeoutSec float64
	// ScheduleRetryAttempts is how often the scheduler retries a failed
	// invocation before it sends the event to the dead-letter queue.
	// Default: 3.
	ScheduleRetryAttempts float64
	// ScheduleMaxEventAgeSec is how long the scheduler keeps retrying.
	// Default: 86400 (one day).
	ScheduleMaxEventAgeSec float64
	// The scheduler invokes the expiry function asynchronously: its retry
	// policy and DLQ cover only the hand-over of the event to Lambda. What
	// happens when the function itself fails is the function's
	// EventInvokeConfig, set by the next two props.
	//
	// ExpiryMaxEventAgeSec is how long Lambda keeps an expiry event it
	// could not run yet (throttled, or waiting to retry), 60..21600.
	// Default: 21600 (six hours, Lambda's maximum).
	ExpiryMaxEventAgeSec float64
	// ExpiryRetryAttempts is how often Lambda retries a failed expiry,
	// 0..2; then the event goes to ExpiryFailureQueue.
	// Default: 2 (jsii.Number(0) turns retries off).
	ExpiryRetryAttempts *float64
	// WebURL is the web app's address, used for links in notifications.
	// Default: no link.
	WebURL string
	// AlarmTopic receives alarm notifications.
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
}

// ScheduleOnWrite is the table with its scheduling machinery.
type ScheduleOnWrite struct {
	constructs.Construct
	// Table holds the items; its stream carries NEW_AND_OLD_IMAGES.
	Table awsdynamodb.Table
	// ScheduleGroup holds every item's schedule.
	ScheduleGroup awsscheduler.ScheduleGroup
	// SchedulerRole is what schedules run as: it may only invoke the
	// expiry function and send to the dead-letter queue.
	SchedulerRole awsiam.Role
	// DeadLetterQueue receives invocations the scheduler gave up on.
	DeadLetterQueue awssqs.Queue
	// DeadLetterAlarm fires when anything is in the dead-letter queue.
	DeadLetterAlarm awscloudwatch.Alarm
	// Expiry is the function the schedules invoke.
	Expiry *gofn.Function
	// ExpiryFailureQueue receives every expiry event Lambda gave up on
	// (with the original payload), and is alarmed; see
	// ExpiryMaxEventAgeSec.
	ExpiryFailureQueue awssqs.Queue
	// ExpiryFailureAlarm fires when ExpiryFailureQueue holds a record;
	// ExpiryDroppedAlarm on Lambda's AsyncEventsDropped for the function;
	// ExpiryDestinationFailureAlarm when a record could not reach the
	// queue.
	ExpiryFailureAlarm, ExpiryDroppedAlarm, ExpiryDestinationFailureAlarm awscloudwatch.Alarm

	retryAttempts, maxEventAgeSec float64
}

// NewScheduleOnWrite builds the table, schedule group, role, DLQ, alarm
// and expiry function.
func NewScheduleOnWrite(scope constructs.Construct, id *string, props *ScheduleOnWriteProps) *ScheduleOnWrite {
	p := withDefaults(props)
	validate(*id, p)
	c := constructs.NewConstruct(scope, id)
	s := &ScheduleOnWrite{Construct: c, retryAttempts: p.ScheduleRetryAttempts, maxEventAgeSec: p.ScheduleMaxEventAgeSec}

	s.Table = awsdynamodb.NewTable(c, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(tableschema.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String(tableschema.SortKey), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:         awsdynamodb.TableEncryption_AWS_MANAGED,
		Stream:             awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		RemovalPolicy:      p.RemovalPolicy,
		DeletionProtection: jsii.Bool(p.DeletionProtection),
	})
	s.Table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String(tableschema.PendingIndex),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(tableschema.PendingShardAttr), Type: awsdynamodb.AttributeType_STRING},
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String(tableschema.PendingSortAttr), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
	// Each user's Pending tasks, for the per-user cap's count (see
	// tableschema.UserPendingIndex).
	s.Table.AddLocalSecondaryIndex(&awsdynamodb.LocalSecondaryIndexProps{
		IndexName:      jsii.String(tableschema.UserPendingIndex),
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String(tableschema.UserPendingAttr), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_KEYS_ONLY,
	})

	s.ScheduleGroup = awsscheduler.NewScheduleGroup(c, jsii.String("ScheduleGroup"), &awsscheduler.ScheduleGroupProps{
		RemovalPolicy: p.RemovalPolicy,
	})

	s.DeadLetterQueue = awssqs.NewQueue(c, jsii.String("ScheduleDeadLetterQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		RemovalPolicy:   p.RemovalPolicy,
	})
	nag.Suppress(s.DeadLetterQueue, nag.Rule{ID: "AwsSolutions-SQS3", Reason: "This queue is the scheduler's dead-letter queue; a DLQ of a DLQ adds nothing"})
	s.DeadLetterAlarm = QueueNotEmptyAlarm(c, "ScheduleDeadLetterAlarm", s.DeadLetterQueue,
		"Scheduler gave up invoking the expiry function: tasks may not have expired. Inspect the messages, then redrive or let the reconciler expire them.", p.AlarmTopic)

	env := map[string]string{"TABLE_NAME": *s.Table.TableName(), "WEB_URL": p.WebURL}
	for k, v := range p.Notifications.Environment() {
		env[k] = v
	}
	s.Expiry = gofn.NewFunction(c, jsii.String("Expiry"), &gofn.FunctionProps{
		Entry:       "lambdas/expiry",
		Description: "Expires a task at its deadline: conditional write, then notify",
		MemoryMiB:   p.ExpiryMemoryMiB,
		TimeoutSec:  p.ExpiryTimeoutSec,
		Logs:        p.Logs,
		Environment: env,
	})
	async := asyncinvoke.Configure(c, "Expiry", s.Expiry.Function, asyncinvoke.Props{
		Name: "expiry", MaxEventAgeSec: p.ExpiryMaxEventAgeSec, RetryAttempts: *p.ExpiryRetryAttempts,
		Remedy:     "Those tasks stay Pending until the reconciler expires them (at most one period late); to expire them now, invoke the expiry function with each record's requestPayload.",
		AlarmTopic: p.AlarmTopic, RemovalPolicy: p.RemovalPolicy,
	})
	s.ExpiryFailureQueue = async.FailureQueue
	s.ExpiryFailureAlarm, s.ExpiryDroppedAlarm, s.ExpiryDestinationFailureAlarm = async.FailureAlarm, async.DroppedAlarm, async.DeliveryFailureAlarm
	s.GrantExpire(s.Expiry.Function)
	p.Notifications.GrantPublish(s.Expiry.Function)
	nag.Suppress(nag.RolePolicy(s.Expiry.Function), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{nag.Regex(`/^Resource::arn:<AWS::Partition>:sns:<AWS::Region>:<AWS::AccountId>:.+-\*$/g`)},
		Reason: "Publish to the notification shard topics: thousands of deterministic names <prefix>-<n>; one pattern keeps the policy under IAM's size limit"})

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
	return s
}

// Defaults of the expiry function's asynchronous invocation.
const (
	DefaultExpiryMaxEventAgeSec = asyncinvoke.MaxMaxEventAgeSec
	DefaultExpiryRetryAttempts  = asyncinvoke.MaxRetryAttempts
)

func withDefaults(props *ScheduleOnWriteProps) ScheduleOnWriteProps {
	var p ScheduleOnWriteProps
	if props != nil {
		p = *props
	}
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	if p.ScheduleRetryAttempts == 0 {
		p.ScheduleRetryAttempts = 3
	}
	if p.ScheduleMaxEventAgeSec == 0 {
		p.ScheduleMaxEventAgeSec = 86400
	}
	p.ExpiryMaxEventAgeSec = propcheck.OrDefault(p.ExpiryMaxEventAgeSec, DefaultExpiryMaxEventAgeSec)
	if p.ExpiryRetryAttempts == nil {
		p.ExpiryRetryAttempts = jsii.Number(DefaultExpiryRetryAttempts)
	}
	return p
}

func validate(id string, p ScheduleOnWriteProps) {
	if p.Notifications == nil {
		panic(fmt.Sprintf("%s: Notifications is required: pass where expiry notifications go (notifications.NewUserNotifications)", id))
	}
	if p.ScheduleRetryAttempts < 0 || p.ScheduleRetryAttempts > 185 {
		panic(fmt.Sprintf("%s: ScheduleRetryAttempts must be between 0 and 185 inclusive (given %v)", id, p.ScheduleRetryAttempts))
	}
	if p.ScheduleMaxEventAgeSec < 60 || p.ScheduleMaxEventAgeSec > 86400 {
		panic(fmt.Sprintf("%s: ScheduleMaxEventAgeSec must be between 60 and 86400 inclusive (given %v)", id, p.ScheduleMaxEventAgeSec))
	}
	asyncinvoke.Validate(id, "Expiry", p.ExpiryMaxEventAgeSec, *p.ExpiryRetryAttempts)
	if p.WebURL != "" && !*awscdk.Token_IsUnresolved(jsii.String(p.WebURL)) && !strings.HasPrefix(p.WebURL, "https://") && !strings.HasPrefix(p.WebURL, "http://localhost") {
		panic(fmt.Sprintf("%s: WebURL must start with https:// (or http://localhost) (given %q)", id, p.WebURL))
	}
}

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
func (s *ScheduleOnWrite) SchedulerEnvironment() map[string]string {
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
// the cancel worker needs.
func (s *ScheduleOnWrite) GrantModifySchedules(grantee awsiam.IGrantable) awsiam.Grant {
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
	return GrantTable(s.Table, grantee, "dynamodb:GetItem", "dynamodb:UpdateItem")
}

// GrantTable grants actions on the table itself only (not its indexes),
// which is tighter than ITable.Grant.
func GrantTable(table awsdynamodb.ITable, grantee awsiam.IGrantable, actions ...string) awsiam.Grant {
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings(actions...), ResourceArns: &[]*string{table.TableArn()},
	})
}

// QueueNotEmptyAlarm alarms as soon as a queue holds a message. Used for
// every dead-letter queue of the project.
func QueueNotEmptyAlarm(scope constructs.Construct, id string, q awssqs.IQueue, description string, topic awssns.ITopic) awscloudwatch.Alarm {
	return alarms.AtLeast(scope, id, description, q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
		Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum"),
	}), 1, topic)
}
