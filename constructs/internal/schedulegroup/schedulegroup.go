// Package schedulegroup builds what every EventBridge Scheduler adopter
// of the core needs: one schedule group, the role its schedules run as
// (trusting the scheduler only for this group and account, the
// confused-deputy condition), the dead-letter queue of the invocations the
// scheduler gave up on, and that queue's alarm. The core's SchedulerTimer
// (constructs/scheduleonwrite) builds its group here; every adopter (the
// to-do app, the campaigns construct) reaches it through that timer, so
// a fix to the trust or the grants reaches all of them.
package schedulegroup

import (
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/resource"
)

// Construct ids of the children, in the scope given to New. They are
// public API: the to-do stack's logical ids are derived from them.
const (
	GroupID           = "ScheduleGroup"
	RoleID            = "SchedulerRole"
	DeadLetterQueueID = "ScheduleDeadLetterQueue"
	DeadLetterAlarmID = "ScheduleDeadLetterAlarm"
)

// SchedulerService is the principal that assumes the role, and the only
// service the role may be passed to.
const SchedulerService = "scheduler.amazonaws.com"

// Props configures New.
type Props struct {
	// ID is the owning construct's id, for validation messages.
	ID string
	// Target is the function every schedule of the group invokes; the
	// role may invoke it and nothing else.
	Target awslambda.IFunction
	// RoleDescription describes the role.
	RoleDescription string
	// DeadLetterAlarmDescription says what a message in the dead-letter
	// queue means and what to do.
	DeadLetterAlarmDescription string
	// AlarmTopic receives the alarm's state changes (nil: no action).
	AlarmTopic awssns.ITopic
	// RemovalPolicy of the group and the new queue.
	RemovalPolicy awscdk.RemovalPolicy
	// ExistingDeadLetterQueue is a standard queue of the caller's; not
	// with DeadLetterQueueProps (the names in the message are
	// ExistingDeadLetterQueue and DeadLetterQueueProps).
	ExistingDeadLetterQueue awssqs.IQueue
	// DeadLetterQueueProps override the new queue's defaults
	// (resource.DeadLetterQueueProps).
	DeadLetterQueueProps *awssqs.QueueProps
}

// Group is the built group.
type Group struct {
	scope constructs.Construct
	// ScheduleGroup holds the schedules.
	ScheduleGroup awsscheduler.ScheduleGroup
	// Role is what the schedules run as.
	Role awsiam.Role
	// DeadLetterQueue receives the invocations the scheduler gave up on.
	DeadLetterQueue awssqs.IQueue
	// DeadLetterAlarm fires on any message in DeadLetterQueue.
	DeadLetterAlarm awscloudwatch.Alarm
}

// New builds the group, the dead-letter queue and its alarm, and the role
// as direct children of scope (ids GroupID, DeadLetterQueueID,
// DeadLetterAlarmID, RoleID).
func New(scope constructs.Construct, p Props) *Group {
	if p.Target == nil {
		panic(fmt.Sprintf("%s: schedulegroup.New needs the target function the schedules invoke", p.ID))
	}
	if q := p.ExistingDeadLetterQueue; q != nil && q.Fifo() != nil && *q.Fifo() {
		panic(fmt.Sprintf("%s: ExistingDeadLetterQueue is a FIFO queue: the scheduler accepts only a standard queue as its dead-letter queue", p.ID))
	}
	g := &Group{scope: scope}
	g.ScheduleGroup = awsscheduler.NewScheduleGroup(scope, jsii.String(GroupID), &awsscheduler.ScheduleGroupProps{RemovalPolicy: p.RemovalPolicy})

	var dlq awssqs.Queue
	g.DeadLetterQueue, dlq = resource.Queue(scope, p.ID, DeadLetterQueueID, p.ExistingDeadLetterQueue, "ExistingDeadLetterQueue",
		p.DeadLetterQueueProps, "DeadLetterQueueProps", resource.DeadLetterQueueProps(p.RemovalPolicy))
	if dlq != nil {
		nag.Suppress(dlq, nag.Rule{ID: "AwsSolutions-SQS3", Reason: "This queue is the scheduler's dead-letter queue; a DLQ of a DLQ adds nothing"})
	}
	g.DeadLetterAlarm = alarms.QueueNotEmpty(scope, DeadLetterAlarmID, g.DeadLetterQueue, p.DeadLetterAlarmDescription, p.AlarmTopic)

	g.Role = awsiam.NewRole(scope, jsii.String(RoleID), &awsiam.RoleProps{
		Description: jsii.String(p.RoleDescription),
		// EventBridge Scheduler assumes the role on behalf of the schedule
		// GROUP: aws:SourceArn is the group's ARN, never a schedule's ARN
		// or a name prefix, or every invocation (and DLQ delivery) is
		// refused. https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html
		AssumedBy: awsiam.NewServicePrincipal(jsii.String(SchedulerService), &awsiam.ServicePrincipalOpts{
			Conditions: &map[string]any{
				"StringEquals": map[string]any{
					"aws:SourceAccount": awscdk.Stack_Of(scope).Account(),
					"aws:SourceArn":     g.Arn(),
				},
			},
		}),
	})
	g.Role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("lambda:InvokeFunction"),
		Resources: jsii.Strings(*p.Target.FunctionArn()),
	}))
	g.Role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sqs:SendMessage"),
		Resources: jsii.Strings(*g.DeadLetterQueue.QueueArn()),
	}))
	return g
}

// Arn is the group's ARN as the scheduler presents it in aws:SourceArn
// when it assumes the role.
func (g *Group) Arn() *string {
	return awscdk.Stack_Of(g.scope).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("scheduler"),
		Resource:     jsii.String("schedule-group"),
		ResourceName: g.ScheduleGroup.ScheduleGroupName(),
	})
}

// ScheduleArns matches the schedules of the group whose names start with
// prefix ("" for every schedule of the group), and nothing else.
func (g *Group) ScheduleArns(prefix string) *string {
	return awscdk.Stack_Of(g.scope).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("scheduler"),
		Resource:     jsii.String("schedule"),
		ResourceName: jsii.String(*g.ScheduleGroup.ScheduleGroupName() + "/" + prefix + "*"),
	})
}

// Grant lets grantee call actions on the group's schedules named
// prefix…, and nothing outside the group. With CreateSchedule or
// UpdateSchedule among them it may also pass the role, to the scheduler
// only (a create or update names the role of its target).
func (g *Group) Grant(grantee awsiam.IGrantable, prefix string, actions ...string) awsiam.Grant {
	gr := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings(actions...), ResourceArns: &[]*string{g.ScheduleArns(prefix)},
	})
	if slices.Contains(actions, "scheduler:CreateSchedule") || slices.Contains(actions, "scheduler:UpdateSchedule") {
		grantee.GrantPrincipal().AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:    jsii.Strings("iam:PassRole"),
			Resources:  jsii.Strings(*g.Role.RoleArn()),
			Conditions: &map[string]any{"StringEquals": map[string]any{"iam:PassedToService": SchedulerService}},
		}))
	}
	return gr
}

// GrantList lets grantee list schedules. ListSchedules has no
// resource-level permissions, so this is the one grant on "*"; it
// reveals names only, not targets or payloads.
func GrantList(grantee awsiam.IGrantable) awsiam.Grant {
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("scheduler:ListSchedules"), ResourceArns: jsii.Strings("*"),
	})
}
