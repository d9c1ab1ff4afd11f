package scheduleonwrite

import (
	"fmt"

	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/timerspec"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/asyncinvoke"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/schedulegroup"
)

// Defaults of SchedulerTimerProps.
const (
	DefaultScheduleRetryAttempts  = 3
	DefaultScheduleMaxEventAgeSec = 86400
	// The firing function's asynchronous invocation.
	DefaultFireMaxEventAgeSec = asyncinvoke.MaxMaxEventAgeSec
	DefaultFireRetryAttempts  = asyncinvoke.MaxRetryAttempts
)

// SchedulerTimerProps configures the EventBridge Scheduler timer.
//
// The scheduler invokes the firing function asynchronously: its retry
// policy and DLQ (ScheduleRetryAttempts, ScheduleMaxEventAge, the
// dead-letter queue) cover only the hand-over of the event to Lambda.
// What happens when the function itself fails is the function's
// EventInvokeConfig: FireMaxEventAge, FireRetryAttempts and the
// firing failure queue.
type SchedulerTimerProps struct {
	// ScheduleRetryAttempts is how often the scheduler retries a failed
	// invocation before it sends the event to the dead-letter queue
	// (0..185; jsii.Number(0) turns retries off).
	// Default: 3.
	ScheduleRetryAttempts *float64
	// ScheduleMaxEventAge is how long the scheduler keeps retrying
	// (1 minute..1 day, whole seconds).
	// Default: one day.
	ScheduleMaxEventAge awscdk.Duration
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
	// FireMaxEventAge is how long Lambda keeps a firing event it could
	// not run yet (throttled, or waiting to retry), 1 minute..6 hours.
	// Default: six hours, Lambda's maximum.
	FireMaxEventAge awscdk.Duration
	// FireRetryAttempts is how often Lambda retries a failed firing,
	// 0..2; then the event goes to FireFailureQueue.
	// Default: 2 (jsii.Number(0) turns retries off).
	FireRetryAttempts *float64
	// ExistingFireFailureQueue is your own standard queue for the
	// firing events Lambda gave up on. Not with FireFailureQueueProps.
	// Default: a new queue (FireFailureQueueProps).
	ExistingFireFailureQueue awssqs.IQueue
	// FireFailureQueueProps override the new failure queue's props
	// (SQS-managed encryption, TLS only, 14 days). Not with
	// ExistingFireFailureQueue.
	// Default: those.
	FireFailureQueueProps *awssqs.QueueProps
}

// SchedulerTimer fires each item with one one-off EventBridge Scheduler
// schedule: within 2 minutes after its due time. Its fields are set when
// NewScheduleOnWrite binds it.
type SchedulerTimer struct {
	binding
	props SchedulerTimerProps
	group *schedulegroup.Group
	// ScheduleGroup holds every item's schedule.
	ScheduleGroup awsscheduler.ScheduleGroup
	// SchedulerRole is what schedules run as: it may only invoke the
	// firing function and send to the dead-letter queue.
	SchedulerRole awsiam.Role
	// DeadLetterQueue receives invocations the scheduler gave up on.
	DeadLetterQueue awssqs.IQueue
	// DeadLetterAlarm fires when anything is in the dead-letter queue.
	DeadLetterAlarm awscloudwatch.Alarm
	// FireFailureQueue receives every firing event Lambda gave up on
	// (with the original payload), and is alarmed; see FireMaxEventAge.
	FireFailureQueue awssqs.IQueue
	// FireFailureAlarm fires when FireFailureQueue holds a record;
	// FireDroppedAlarm on Lambda's AsyncEventsDropped for the function;
	// FireDestinationFailureAlarm when a record could not reach the
	// queue.
	FireFailureAlarm, FireDroppedAlarm, FireDestinationFailureAlarm awscloudwatch.Alarm
}

// NewSchedulerTimer is the EventBridge Scheduler timer; nil props take
// every default. Pass it as ScheduleOnWriteProps.Timer.
func NewSchedulerTimer(props *SchedulerTimerProps) *SchedulerTimer {
	t := &SchedulerTimer{binding: binding{kind: "SchedulerTimer"}}
	if props != nil {
		t.props = *props
	}
	p := &t.props
	seconds := func(n float64) awscdk.Duration { return awscdk.Duration_Seconds(jsii.Number(n)) }
	p.ScheduleRetryAttempts = jsii.Number(propcheck.Number(p.ScheduleRetryAttempts, DefaultScheduleRetryAttempts))
	p.ScheduleMaxEventAge = propcheck.DurationOr(p.ScheduleMaxEventAge, seconds(DefaultScheduleMaxEventAgeSec))
	p.FireMaxEventAge = propcheck.DurationOr(p.FireMaxEventAge, seconds(DefaultFireMaxEventAgeSec))
	p.FireRetryAttempts = jsii.Number(propcheck.Number(p.FireRetryAttempts, DefaultFireRetryAttempts))
	return t
}

// Plan implements Timer: it checks the props.
func (t *SchedulerTimer) Plan(plan TimerPlan) TimerNeeds {
	t.plan(plan.ID)
	id, p := plan.ID, t.props
	propcheck.CheckWhole(id, "ScheduleRetryAttempts", *p.ScheduleRetryAttempts, 0, 185, "retries of a failed invocation; the scheduler allows 0 to 185")
	propcheck.CheckSeconds(id, "ScheduleMaxEventAge", p.ScheduleMaxEventAge, 60, 86400, "the scheduler allows 1 minute to 1 day")
	asyncinvoke.Validate(id, "Fire", *p.FireMaxEventAge.ToSeconds(nil), *p.FireRetryAttempts)
	if p.ExistingDeadLetterQueue != nil && p.ExistingDeadLetterQueue.Fifo() != nil && *p.ExistingDeadLetterQueue.Fifo() {
		panic(fmt.Sprintf("%s: ExistingDeadLetterQueue is a FIFO queue: the scheduler accepts only a standard queue as its dead-letter queue", id))
	}
	return TimerNeeds{}
}

// Bind implements Timer: the schedule group, its dead-letter queue and
// alarm, the role its schedules run as, and the firing function's
// asynchronous-invocation settings with their failure queue and alarms.
// Only this timer invokes the firing function asynchronously; the Step
// Functions task and the stream mapping invoke it synchronously, where an
// EventInvokeConfig never applies.
func (t *SchedulerTimer) Bind(c constructs.Construct, core TimerCore) TimerBinding {
	t.bind(c, core)
	id, p := core.ID, t.props
	// The ids keep their first prefix, "Expiry": a new id would replace the
	// failure queue on upgrade and lose the records it holds.
	async := asyncinvoke.Configure(c, "Expiry", core.Fire.Function, asyncinvoke.Props{
		Name: "expiry", MaxEventAgeSec: *p.FireMaxEventAge.ToSeconds(nil), RetryAttempts: *p.FireRetryAttempts,
		Remedy:     "Those items stay armed until the reconciler fires them (at most one period late); to fire them now, invoke the firing function with each record's requestPayload.",
		AlarmTopic: core.AlarmTopic, RemovalPolicy: core.RemovalPolicy,
		ExistingFailureQueue: p.ExistingFireFailureQueue, FailureQueueProps: p.FireFailureQueueProps,
		ExistingName: "ExistingFireFailureQueue", PropsName: "FireFailureQueueProps",
	})
	t.FireFailureQueue = async.Queue
	t.FireFailureAlarm, t.FireDroppedAlarm, t.FireDestinationFailureAlarm = async.FailureAlarm, async.DroppedAlarm, async.DeliveryFailureAlarm

	g := schedulegroup.New(c, schedulegroup.Props{
		ID: id, Target: core.Fire.Function, RemovalPolicy: core.RemovalPolicy, AlarmTopic: core.AlarmTopic,
		RoleDescription:            "Assumed by this group's schedules: invoke the firing function, send to the DLQ",
		DeadLetterAlarmDescription: "Scheduler gave up invoking the firing function: items may not have fired. Inspect the messages, then redrive or let the reconciler fire them.",
		ExistingDeadLetterQueue:    p.ExistingDeadLetterQueue, DeadLetterQueueProps: p.DeadLetterQueueProps,
	})
	t.group = g
	t.ScheduleGroup, t.SchedulerRole, t.DeadLetterQueue, t.DeadLetterAlarm = g.ScheduleGroup, g.Role, g.DeadLetterQueue, g.DeadLetterAlarm
	return t
}

// Environment implements TimerBinding: the timer
// (UNSCHEDULE_TIMER=EventBridgeScheduler), the group, the firing function,
// the role, the dead-letter queue and the retry policy every schedule
// gets (internal/core/adapters/awsscheduler reads them).
func (t *SchedulerTimer) Environment() map[string]string {
	core := t.bound("Environment")
	return map[string]string{
		envvars.TimerKind:           string(timerspec.EventBridgeScheduler),
		envvars.ScheduleGroup:       *t.ScheduleGroup.ScheduleGroupName(),
		envvars.ScheduleTargetArn:   *core.Fire.Function.FunctionArn(),
		envvars.SchedulerRoleArn:    *t.SchedulerRole.RoleArn(),
		envvars.SchedulerDLQArn:     *t.DeadLetterQueue.QueueArn(),
		envvars.ScheduleRetries:     fmt.Sprint(*t.props.ScheduleRetryAttempts),
		envvars.ScheduleMaxEventAge: fmt.Sprint(*t.props.ScheduleMaxEventAge.ToSeconds(nil)),
	}
}

// GrantModify implements TimerBinding: create, move and delete schedules
// inside the group (never outside it), and pass the scheduler role: what
// the cancel worker needs (it creates the schedules of items that their
// writer did not schedule).
func (t *SchedulerTimer) GrantModify(grantee awsiam.IGrantable) awsiam.Grant {
	return t.grantSchedules("GrantModify", grantee, "scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule")
}

// GrantDisarm implements TimerBinding: delete schedules inside the
// group, no role to pass (awsscheduler's Delete is one DeleteSchedule).
func (t *SchedulerTimer) GrantDisarm(grantee awsiam.IGrantable) awsiam.Grant {
	t.bound("GrantDisarm")
	return t.group.Grant(grantee, "", "scheduler:DeleteSchedule")
}

// GrantRead implements TimerBinding: read the schedules of the group,
// and list schedules (ListSchedules has no resource-level permissions).
func (t *SchedulerTimer) GrantRead(grantee awsiam.IGrantable) awsiam.Grant {
	t.bound("GrantRead")
	g := t.group.Grant(grantee, "", "scheduler:GetSchedule")
	t.GrantListSchedules(grantee)
	return g
}

// GrantCreateSchedules lets grantee create schedules in the group, and
// pass the scheduler role to the scheduler service, and nothing more.
func (t *SchedulerTimer) GrantCreateSchedules(grantee awsiam.IGrantable) awsiam.Grant {
	return t.grantSchedules("GrantCreateSchedules", grantee, "scheduler:CreateSchedule")
}

// GrantManageSchedules lets grantee create, read, move and delete schedules
// inside the group (never outside it), and pass the scheduler role.
func (t *SchedulerTimer) GrantManageSchedules(grantee awsiam.IGrantable) awsiam.Grant {
	return t.grantSchedules("GrantManageSchedules", grantee, "scheduler:CreateSchedule", "scheduler:UpdateSchedule",
		"scheduler:DeleteSchedule", "scheduler:GetSchedule")
}

// GrantListSchedules lets grantee list schedules. ListSchedules has no
// resource-level permissions, so this is the one grant on "*"; it reveals
// names only, not targets or payloads.
func (t *SchedulerTimer) GrantListSchedules(grantee awsiam.IGrantable) awsiam.Grant {
	return schedulegroup.GrantList(grantee)
}

func (t *SchedulerTimer) grantSchedules(method string, grantee awsiam.IGrantable, actions ...string) awsiam.Grant {
	t.bound(method)
	return t.group.Grant(grantee, "", actions...)
}

// Alarms implements TimerBinding: the dead-letter queue's, and the three
// of the firing function's asynchronous invocation.
func (t *SchedulerTimer) Alarms() []awscloudwatch.Alarm {
	t.bound("Alarms")
	return []awscloudwatch.Alarm{t.DeadLetterAlarm, t.FireFailureAlarm, t.FireDroppedAlarm, t.FireDestinationFailureAlarm}
}

// FireFailures implements TimerBinding: the firing function's
// asynchronous invocations are this timer's (FireFailureQueue and its
// alarms).
func (t *SchedulerTimer) FireFailures() *FireFailures {
	t.bound("FireFailures")
	return &FireFailures{Queue: t.FireFailureQueue, FailureAlarm: t.FireFailureAlarm,
		DroppedAlarm: t.FireDroppedAlarm, DeliveryFailureAlarm: t.FireDestinationFailureAlarm}
}
