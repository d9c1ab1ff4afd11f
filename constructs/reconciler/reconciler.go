// Package reconciler is the recurring repair job of a schedule-on-write
// table: every interval (Every) it gives each armed item a correct schedule,
// deletes the schedules of items that are gone or no longer armed, and
// fires (and delivers) armed items long past their due time. See
// internal/core/reconcile for what a run does, and lambdas/reconciler for the
// function.
package reconciler

import (
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/asyncinvoke"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// Timer is what the reconciler needs of the table's timer (each
// scheduleonwrite timer implements it: SchedulerTimer,
// StepFunctionsTimer, TTLTimer).
type Timer interface {
	// Environment is what a function that arms, moves or disarms the
	// timer reads.
	Environment() map[string]string
	// GrantModify lets grantee arm, move and disarm the items' timers.
	GrantModify(grantee awsiam.IGrantable) awsiam.Grant
	// GrantRead lets grantee read and list them.
	GrantRead(grantee awsiam.IGrantable) awsiam.Grant
}

// ArmedIndex is an armed index of the table: a global secondary index
// keyed by a partition attribute and the schema's due attribute, whose
// listed partitions hold every armed item (and every fired one whose
// delivery is not recorded). The zero value is the state-keyed index
// scheduleonwrite.AddArmedIndex adds ("armed": the schema's state and due
// attribute, which every writer's PutItem fills); a sharded one names
// the attribute its writer sets and the shard values. See
// docs/decisions/armed-index.md.
type ArmedIndex = armedindex.Spec

// FiringCore fires an item the way the firing function does: the claim,
// then the Target (scheduleonwrite.ScheduleOnWrite implements it).
type FiringCore interface {
	// FiringEnvironment names the Target and the delivery lease.
	FiringEnvironment() map[string]string
	// GrantFire lets fn claim items and invoke the Target only.
	GrantFire(fn awslambda.IFunction) awsiam.Grant
}

// ReconcilerProps configures the job. Zero numbers take their default.
// It works for any item schema and every timer.
type ReconcilerProps struct {
	// Table is the schedule-on-write table. Required.
	Table awsdynamodb.ITable
	// Timer is the table's timer: the reconciler arms what is missing and
	// disarms what is left over. Required.
	Timer Timer
	// Core is the table's ScheduleOnWrite: the reconciler fires overdue
	// items through it, with the same claim, Target and delivery lease as
	// the firing function. Required.
	Core FiringCore
	// Schema of the items, handed to the function in contract.EnvVar.
	// Default: the Core's schema (scheduleonwrite.ScheduleOnWrite.Schema).
	Schema contract.Schema
	// ArmedIndex is the table's armed index: a pass Queries it, so its
	// reads grow with the armed items, not with the table. The table must
	// have it (scheduleonwrite.AddArmedIndex adds the default one).
	// Default: none: a pass Scans the whole table (a ScheduleOnWrite sets
	// the index it adds to a table it creates).
	ArmedIndex *ArmedIndex
	// Every is the interval between runs (1 minute..1 day, whole
	// minutes).
	// Default: 30 minutes.
	Every awscdk.Duration
	// Grace is how long past its due time an armed item may stay before
	// the reconciler fires it (1 s..1 day).
	// Default: 5 minutes.
	Grace awscdk.Duration
	// RatePerSec caps the reconciler's Scheduler API calls (above 0, at
	// most 1000).
	// Default: 10.
	RatePerSec float64
	// Budget is how long one run works before it saves its checkpoint
	// and stops (10 s..14 min, shorter than the interval); the next run
	// resumes there. The function's timeout is Budget + 60 s.
	// Default: 4 minutes, or half the interval when that is shorter.
	Budget awscdk.Duration
	// RepairAlarmThreshold: RepairsAlarm fires when one run repairs more
	// than this many tasks or schedules, a sign that the cancellation
	// pipeline or the API's schedule creation is failing.
	// Default: 10.
	RepairAlarmThreshold float64
	// AsyncMaxEventAge: the rule invokes the function asynchronously; an
	// invocation that waited longer than this (throttled behind a running
	// one) is dropped to FailureQueue, 1 minute..6 hours.
	// Default: the interval between runs (at least a minute), so a late
	// run never overlaps the next one's turn.
	AsyncMaxEventAge awscdk.Duration
	// FailureQueueRemovalPolicy: RETAIN keeps FailureQueue, and the
	// records it holds, when the stack is deleted.
	// Default: RETAIN.
	FailureQueueRemovalPolicy awscdk.RemovalPolicy
	// ExistingFailureQueue is your own standard queue for the runs Lambda
	// gave up on. Not with FailureQueueProps.
	// Default: a new queue (FailureQueueProps).
	ExistingFailureQueue awssqs.IQueue
	// FailureQueueProps override, field by field, the new failure
	// queue's props (SQS-managed encryption, TLS only, 14 days).
	// Default: those.
	FailureQueueProps *awssqs.QueueProps
	// AsyncRetryAttempts of a failed run, 0..2.
	// Default: 0: the next run comes within an interval and resumes from
	// the checkpoint.
	AsyncRetryAttempts *float64
	// AlarmTopic receives the job's alarms.
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
	// Logs of the function.
	// Default: one month, retained.
	Logs gofn.LogOptions
	// ExistingFunction is your own reconciler function, for an adopter
	// whose repairs follow its own rules (constructs/campaigns:
	// lambdas/campaignreconciler). The construct adds to it what every
	// reconciler reads and may do (the table, Schema, the Timer's and the
	// Core's environment, the Timer's GrantModify and GrantRead, the
	// Core's GrantFire), its failure queue and alarms, the rule and
	// ErrorsAlarm. What only the core's entry does is yours: its table
	// grants, its reserved concurrency, its configuration and the alarms
	// on its metrics. Not with Grace, RatePerSec, Budget, ArmedIndex or
	// RepairAlarmThreshold.
	// Default: a new function of the core's entry (lambdas/reconciler).
	ExistingFunction *gofn.Function
	// IdPrefix starts the construct id of every resource the construct
	// adds ("Reconciler" gives ReconcilerFailureQueue,
	// ReconcilerSchedule, ReconcilerErrorsAlarm). An adopter that built
	// those resources itself under those ids keeps their logical ids by
	// giving the construct the id "Default", which logical ids leave out.
	// Default: "" (Function, FailureQueue, Schedule, ErrorsAlarm, ...).
	IdPrefix string
}

// Reconciler is the function, its timer and alarms.
type Reconciler struct {
	constructs.Construct
	// Function runs one bounded reconciliation per invocation, never two
	// at once (reserved concurrency 1).
	Function *gofn.Function
	// Rule invokes Function every interval (Every).
	Rule awsevents.Rule
	// ErrorsAlarm fires when a run failed as a whole (the checkpoint or a
	// page could not be read).
	ErrorsAlarm awscloudwatch.Alarm
	// RepairsAlarm fires when a run repaired more than
	// RepairAlarmThreshold tasks or schedules.
	RepairsAlarm awscloudwatch.Alarm
	// LeftOverAlarm fires when a run stopped at its budget with work left
	// (its LeftOver metric): a pass no longer fits one run, so drift may
	// wait more than an interval for its repair.
	LeftOverAlarm awscloudwatch.Alarm
	// StalledAlarm fires when no pass completed in two intervals in a
	// row (PassesCompleted summed to 0, or no run reported at all).
	StalledAlarm awscloudwatch.Alarm
	// FailureQueue receives the record of every run Lambda gave up on
	// (its on-failure destination).
	FailureQueue awssqs.IQueue
	// RunErrorsAlarm fires when repairs of a run failed (its Errors
	// metric, the one error metric of the function:
	// metrics.ErrorMetrics[metrics.FunctionReconciler]).
	RunErrorsAlarm awscloudwatch.Alarm
	// FailureAlarm fires when FailureQueue holds a record, DroppedAlarm on
	// Lambda's AsyncEventsDropped, DestinationFailureAlarm when a record
	// could not reach the queue.
	FailureAlarm, DroppedAlarm, DestinationFailureAlarm awscloudwatch.Alarm
}

// NewReconciler builds the function, its recurring trigger, grants and
// alarms.
func NewReconciler(scope constructs.Construct, id *string, props *ReconcilerProps) *Reconciler {
	validateExisting(*id, props)
	p := withDefaults(*id, props)
	validate(*id, p)
	c := constructs.NewConstruct(scope, id)
	r := &Reconciler{Construct: c}
	pre := p.IdPrefix

	// What every reconciler reads: the table, the schema, the timer and
	// how to fire an item.
	env := map[string]string{envvars.Table: *p.Table.TableName(), envvars.ItemSchema: p.Schema.EnvValue()}
	maps.Copy(env, p.Timer.Environment())
	maps.Copy(env, p.Core.FiringEnvironment())
	if p.ExistingFunction != nil {
		r.Function = p.ExistingFunction
		for _, k := range slices.Sorted(maps.Keys(env)) {
			r.Function.Function.AddEnvironment(jsii.String(k), jsii.String(env[k]), nil)
		}
	} else {
		r.Function = newFunction(c, pre, p, env)
	}
	fn := r.Function.Function
	// What a failed run means: the core's entry resumes from its
	// checkpoint; of an adopter's entry only that the next run repairs.
	remedy, failed := "Nothing to redrive: the next run resumes from the checkpoint. See the reconciler's logs for why the run failed.",
		"A reconciler run failed (the checkpoint or a page could not be read): drift is not being repaired. Check the reconciler's logs."
	if p.ExistingFunction != nil {
		remedy, failed = "Nothing to redrive: the next run repairs what this one left. See the reconciler's logs for why the run failed.",
			"A reconciler run failed: drift is not being repaired. Check the reconciler's logs."
	}
	// A run that failed is not retried by default: the next one comes
	// within an interval and resumes from the checkpoint. An invocation
	// that waited (throttled behind a running one) longer than an interval
	// is dropped. Either way its record goes to FailureQueue, alarmed.
	async := asyncinvoke.Configure(c, pre, fn, asyncinvoke.Props{
		Name: "reconciler", MaxEventAgeSec: *p.AsyncMaxEventAge.ToSeconds(nil), RetryAttempts: *p.AsyncRetryAttempts,
		Remedy:     remedy,
		AlarmTopic: p.AlarmTopic, RemovalPolicy: p.FailureQueueRemovalPolicy,
		ExistingFailureQueue: p.ExistingFailureQueue, FailureQueueProps: p.FailureQueueProps,
	})
	r.FailureQueue = async.Queue
	r.FailureAlarm, r.DroppedAlarm, r.DestinationFailureAlarm = async.FailureAlarm, async.DroppedAlarm, async.DeliveryFailureAlarm

	if p.ExistingFunction == nil {
		grantTable(p.Table, p.ArmedIndex, fn)
	}
	p.Timer.GrantModify(fn)
	p.Timer.GrantRead(fn)
	p.Core.GrantFire(fn)

	nag.Suppress(nag.RolePolicy(fn),
		nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{"Resource::*"},
			Reason: "scheduler:ListSchedules has no resource-level permissions (it is the only action on *); it reveals schedule names only."},
		nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{nag.ScheduleGroupWildcard},
			Reason: "The reconciler repairs the schedule of any item, and only those: every schedule inside the table's schedule group, none outside it."},
		nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{nag.ExecutionsWildcard},
			Reason: "The reconciler describes and stops the executions of the table's state machine only: their names derive from the items, so they are not known at deploy time."},
	)

	// An EventBridge rule rather than a Scheduler schedule: its event is
	// the "Scheduled Event" the handler decodes as is, it needs no IAM
	// role (the function's resource policy names the rule), and the
	// reconciler's own timer stays out of the Scheduler, whose task
	// schedule group the reconciler cleans.
	r.Rule = awsevents.NewRule(c, jsii.String(pre+"Schedule"), &awsevents.RuleProps{
		Description: jsii.String(fmt.Sprintf("Runs the reconciler every %v minutes", *p.Every.ToMinutes(nil))),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(p.Every.ToMinutes(nil))),
		Targets:     &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(fn, nil)},
	})

	period := awscdk.Duration_Minutes(p.Every.ToMinutes(nil))
	r.ErrorsAlarm = alarms.AtLeast(c, pre+"ErrorsAlarm", failed,
		fn.MetricErrors(&awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: period}), 1, p.AlarmTopic)
	if p.ExistingFunction == nil {
		r.alarmMetrics(c, pre, p)
	}
	return r
}

// newFunction is the core's reconciler function (lambdas/reconciler),
// its environment env with the core entry's configuration.
func newFunction(c constructs.Construct, pre string, p ReconcilerProps, env map[string]string) *gofn.Function {
	budget := *p.Budget.ToSeconds(nil)
	env = maps.Clone(env)
	env[envvars.GraceSec] = fmt.Sprint(*p.Grace.ToSeconds(nil))
	env[envvars.RatePerSec] = fmt.Sprint(p.RatePerSec)
	env[envvars.BudgetSec] = fmt.Sprint(budget)
	if p.ArmedIndex != nil {
		env[envvars.ArmedIndex] = p.ArmedIndex.EnvValue()
	}
	return gofn.NewFunction(c, jsii.String(pre+"Function"), &gofn.FunctionProps{
		Entry:       "lambdas/reconciler",
		Description: "Repairs drift between items and their timers; fires items long past their due time",
		Timeout:     awscdk.Duration_Seconds(jsii.Number(budget + TimeoutMarginSec)),
		Logs:        p.Logs,
		Environment: env,
		// Runs never overlap: two would repair the same page twice and
		// fight over the checkpoint.
		ReservedConcurrentExecutions: jsii.Number(1),
	})
}

// alarmMetrics alarms on the metrics the core's entry publishes.
func (r *Reconciler) alarmMetrics(c constructs.Construct, pre string, p ReconcilerProps) {
	period := awscdk.Duration_Minutes(p.Every.ToMinutes(nil))
	metric := func(name, statistic string) awscloudwatch.Metric {
		return alarms.CustomMetric(c, metrics.FunctionReconciler, name, statistic, period)
	}
	errorAlarms := alarms.ErrorMetricAlarms(c, pre+"Run", metrics.FunctionReconciler, map[string]string{
		metrics.ReconcilerErrors: "Repairs of a reconciler run failed (a Scheduler or table call): those tasks or schedules stay drifted " +
			"until a later run repairs them. Check the reconciler's logs.",
	}, p.AlarmTopic)
	alarms.Assign(metrics.FunctionReconciler, errorAlarms, map[string]*awscloudwatch.Alarm{metrics.ReconcilerErrors: &r.RunErrorsAlarm})
	r.RepairsAlarm = alarms.New(c, pre+"RepairsAlarm",
		fmt.Sprintf("A reconciler run repaired more than %v tasks or schedules: the cancellation pipeline "+
			"or the API's schedule creation is failing. Check their alarms and logs.", p.RepairAlarmThreshold),
		metric(metrics.Repaired, "Sum"), p.RepairAlarmThreshold, awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		p.AlarmTopic)
	r.LeftOverAlarm = alarms.AtLeast(c, pre+"LeftOverAlarm",
		"A reconciler run stopped at its budget with work left over: a pass no longer fits one run, so a drifted "+
			"schedule may wait more than one interval (overdue tasks are still expired first in every run). "+
			"Expected for a few runs after an upgrade; otherwise raise the RatePerSec or Budget prop, or check the Repaired metric.",
		metric(metrics.LeftOver, "Maximum"), 1, p.AlarmTopic)
	r.StalledAlarm = alarms.New(c, pre+"StalledAlarm",
		"No reconciler pass completed in two intervals: runs fail, time out, or do not start. "+
			"Check the reconciler's Errors alarm and logs, and its schedule rule.",
		metric(metrics.PassesCompleted, "Sum"), 1, awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD, p.AlarmTopic)
	// Two intervals in a row, and a missing datapoint (no run reported)
	// counts as one without a pass. Period x EvaluationPeriods stays
	// within CloudWatch's limit (7 days; 1 day below 1-hour periods):
	// https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html
	stalled := r.StalledAlarm.Node().DefaultChild().(awscloudwatch.CfnAlarm)
	stalled.SetEvaluationPeriods(jsii.Number(2))
	stalled.SetDatapointsToAlarm(jsii.Number(2))
	stalled.SetTreatMissingData(jsii.String("breaching"))
}

// grantTable gives exactly what a run does: read single items, list the
// armed ones (a Query of the armed index, or a Scan of the table when it
// has none, never both), conditionally update single items (the claim,
// and the confirmation marks of an index that has them), and put one
// item, the checkpoint, whose partition key is reserved; with the table's
// customer-managed key when it has one.
func grantTable(table awsdynamodb.ITable, index *ArmedIndex, grantee awsiam.IGrantable) {
	grants.Table(table, grantee, "dynamodb:GetItem", "dynamodb:UpdateItem")
	if index != nil {
		grants.Index(table, index.Name, grantee, "dynamodb:Query")
	} else {
		grants.Table(table, grantee, "dynamodb:Scan")
	}
	grants.TablePartitions(table, grantee, []string{reconcile.CheckpointPartition}, "dynamodb:PutItem")
}

// MetricRepaired is the count of tasks and schedules a run repaired.
// Default: Sum over 5 minutes (likewise every Metric method).
func (r *Reconciler) MetricRepaired(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(r.Construct, metrics.FunctionReconciler, metrics.Repaired, opts)
}

// MetricLeftOver is the work a run left for the next one (above zero: a
// pass did not fit one run).
func (r *Reconciler) MetricLeftOver(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(r.Construct, metrics.FunctionReconciler, metrics.LeftOver, opts)
}

// MetricPassesCompleted is 1 per run that completed a pass.
func (r *Reconciler) MetricPassesCompleted(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(r.Construct, metrics.FunctionReconciler, metrics.PassesCompleted, opts)
}

// MetricErrors is the count of repairs that failed in runs.
func (r *Reconciler) MetricErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(r.Construct, metrics.FunctionReconciler, metrics.ReconcilerErrors, opts)
}

// ErrorAlarms are the construct's alarms on the error metrics of its
// function (operations.ErrorAlarmSource: the operations construct then
// adds no second one).
func (r *Reconciler) ErrorAlarms() []awscloudwatch.Alarm {
	return alarms.NonNil(r.RunErrorsAlarm)
}

// Alarms are every alarm of the construct, in a fixed order.
func (r *Reconciler) Alarms() []awscloudwatch.Alarm {
	return alarms.NonNil(append([]awscloudwatch.Alarm{r.ErrorsAlarm, r.RepairsAlarm, r.LeftOverAlarm, r.StalledAlarm,
		r.FailureAlarm, r.DroppedAlarm, r.DestinationFailureAlarm}, r.ErrorAlarms()...)...)
}
