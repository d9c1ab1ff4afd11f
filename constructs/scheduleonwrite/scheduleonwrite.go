// Package scheduleonwrite is the core of the pattern: a DynamoDB table
// whose items each own one timer, the function the timer invokes to fire
// an item at its due time (Fire, lambdas/fire), and the Timer that
// fires them (NewSchedulerTimer: one EventBridge Scheduler schedule per
// item, the default; NewStepFunctionsTimer; NewTTLTimer). At the due time
// the firing function claims the item with the contract's conditional
// write (contract.Schema.Claim) and, only when the claim succeeded,
// invokes the adopter's Target function.
//
// The item format is the public contract (package contract): the Schema
// prop names the keys, the due and state attributes and the armed states;
// every function of the pipeline reads it from contract.EnvVar.
package scheduleonwrite

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

// ScheduleOnWriteProps configures the table, its timers and firing.
type ScheduleOnWriteProps struct {
	// Schema names the item's keys, due and state attributes and armed
	// states (see contract.Schema); unset fields take contract.Default()'s
	// values. It is validated at synth and handed to the firing function
	// in contract.EnvVar.
	// Default: contract.Default().
	Schema contract.Schema
	// ExistingTable is your own table, keyed as Schema says (string keys)
	// with a stream of NEW_AND_OLD_IMAGES. For a Table or TableV2 of this
	// app, synth checks its keys and stream; for a table imported with
	// attributes (Table_FromTableAttributes, with TableStreamArn) the key
	// names in Schema are trusted.
	// Default: a new table: on-demand, point-in-time recovery, encrypted,
	// streamed, keyed by Schema (and, with NewTTLTimer, its TTL attribute).
	ExistingTable awsdynamodb.ITable
	// Target is your function to run at an item's due time, after the
	// claim succeeded, so at most once per firing of the item (the firing
	// function invokes it synchronously with the payload
	// contract.Schema.EncodePayload, e.g. {"tenantId":…,"jobId":…,"runAt":…},
	// and records the delivery only when it returned without error).
	// Not with FireEntry.
	// Default: none; one of Target and FireEntry is required.
	Target awslambda.IFunction
	// FireEntry is the main package of your own firing function, whose
	// target is Go code that runs inside it: one function per firing
	// instead of the firing function and a Target. Its main calls
	// firefn.Start with your target (the public package
	// github.com/unschedule/unschedule/firefn), which claims the item and
	// runs the target in process, with the payload and the retry rules a
	// Target has. A package folder relative to your module's root, or its
	// import path (as gofn.FunctionProps.Entry). Grant the target's
	// permissions to Fire.Function and set its configuration with
	// FireEnvironment. The reconciler fires an overdue item by invoking
	// this function. Not with Target.
	// Default: none; one of Target and FireEntry is required.
	FireEntry string
	// FireModuleRoot is the folder of the go.mod of the module holding
	// FireEntry (as gofn.FunctionProps.ModuleRoot). Only with FireEntry.
	// Default: the module of the working directory of cdk synth (the
	// nearest go.mod at or above it).
	FireModuleRoot string
	// FireEnvironment is more environment for the firing function: what
	// your in-process target (FireEntry) reads. The names the construct
	// sets itself (TABLE_NAME, contract.EnvVar, FIRE_LEASE_SECONDS) are
	// refused.
	// Default: none.
	FireEnvironment map[string]string
	// Timer is what fires items at their due time: NewSchedulerTimer,
	// NewStepFunctionsTimer or NewTTLTimer, each with its own props. The
	// item contract, the conditional claim and the Target's payload are
	// the same for each (see the README's "Choosing a timer"). One timer
	// serves one ScheduleOnWrite.
	// Default: NewSchedulerTimer(nil).
	Timer Timer
	// RemovalPolicy applies to the table and to what the timer creates
	// that holds data (the schedule group, its queues).
	// Default: RETAIN (they outlive the stack).
	RemovalPolicy awscdk.RemovalPolicy
	// DeletionProtection keeps the table from being deleted by
	// CloudFormation or the API until it is turned off. Not with
	// ExistingTable (set it on your table).
	// Default: on exactly when the table is retained (RemovalPolicy
	// RETAIN, the default), off with DESTROY: the rule of every table a
	// construct creates for an adopter.
	DeletionProtection *bool
	// Logs of the firing function (and the timer's functions).
	// Default: one month, retained.
	Logs gofn.LogOptions
	// FireMemoryMiB is the firing function's memory.
	// Default: 128.
	FireMemoryMiB float64
	// FireTimeout is the firing function's timeout (1 s..15 min); it
	// must cover the target's run. The delivery lease (how long an
	// attempt holds the right to run the target) is this plus 30
	// seconds, at least 60; synth fails when a Target of this app has a
	// longer timeout than the lease.
	// Default: 10 seconds.
	FireTimeout awscdk.Duration
	// AlarmTopic receives alarm notifications (the timer's too).
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
	// Reconciler configures the core's reconciler: a recurring job that,
	// for this table and timer, arms what is missing, disarms what is left
	// over and fires what is overdue (constructs/reconciler). Its Table,
	// Timer and Core are this construct's and are ignored here; Schema,
	// AlarmTopic and Logs default to this construct's.
	// Default: reconciler.ReconcilerProps defaults (every 30 minutes, a
	// Scan of the table).
	Reconciler *reconciler.ReconcilerProps
	// NoReconciler leaves the reconciler out: a schedule lost to a fault,
	// or a marker deleted by hand, then means an item that never fires.
	// Not with Reconciler.
	// Default: false.
	NoReconciler bool
}

// ScheduleOnWrite is the table with its firing function and timer.
type ScheduleOnWrite struct {
	constructs.Construct
	// Table holds the items (ExistingTable, or the one created); its
	// stream carries NEW_AND_OLD_IMAGES.
	Table awsdynamodb.ITable
	// Fire is the function the timer invokes at an item's due time: it
	// claims the item, then runs the Target (lambdas/fire), or the
	// target inside it (FireEntry). Grant an in-process target's
	// permissions to Fire.Function.
	Fire *gofn.Function
	// FireBadInputAlarm fires when the firing function got a payload it
	// cannot read (its FireBadInput metric); FireErrorsAlarm when its
	// invocations failed (FireErrors). One per error metric of the
	// function (metrics.ErrorMetrics[metrics.FunctionExpiry]).
	FireBadInputAlarm, FireErrorsAlarm awscloudwatch.Alarm
	// Timer is ScheduleOnWriteProps.Timer, bound: hand it to the functions
	// that create, move and cancel timers (cancellation.CancellationProps.Timer).
	// Its concrete type (*SchedulerTimer, ...) holds its resources.
	Timer TimerBinding
	// Reconciler is the core's reconciler (nil with NoReconciler).
	Reconciler *reconciler.Reconciler

	schema contract.Schema
	// target is the Target, nil with FireEntry.
	target awslambda.IFunction
	firing map[string]string
	// armedIndex is the index AddArmedIndex added to the table created.
	armedIndex *reconciler.ArmedIndex
}

// NewScheduleOnWrite builds the table (unless ExistingTable), the firing
// function, and binds the timer.
func NewScheduleOnWrite(scope constructs.Construct, id *string, props *ScheduleOnWriteProps) *ScheduleOnWrite {
	p := withDefaults(*id, props)
	validate(*id, p)
	timer := PlanTimer(p.Timer, TimerPlan{ID: *id, Schema: p.Schema, ExistingTable: p.ExistingTable})
	needs := timer.Needs
	c := constructs.NewConstruct(scope, id)
	s := &ScheduleOnWrite{Construct: c, schema: p.Schema, target: p.Target}

	if p.ExistingTable != nil {
		s.Table = p.ExistingTable
	} else {
		tp := TableProps(p.Schema, p.RemovalPolicy, resource.Protected(p.RemovalPolicy, p.DeletionProtection))
		needs.ApplyTo(tp)
		table := awsdynamodb.NewTable(c, jsii.String("Table"), tp)
		s.Table, s.armedIndex = table, AddArmedIndex(table, p.Schema)
	}

	entry, root, description := "lambdas/fire", "", "Fires an item at its due time: conditional claim, then invoke the target"
	if p.FireEntry != "" {
		entry, root, description = p.FireEntry, fireModuleRoot(*id, p), "Fires an item at its due time: conditional claim, then run the target in process"
	}
	s.Fire = gofn.NewFunction(c, jsii.String("FireFunction"), &gofn.FunctionProps{
		Entry:       entry,
		ModuleRoot:  root,
		Description: description,
		MemoryMiB:   p.FireMemoryMiB,
		Timeout:     p.FireTimeout,
		Logs:        p.Logs,
		Environment: s.fireEnvironment(p),
		// The TTL timer's TTLMaxConcurrency.
		ReservedConcurrentExecutions: needs.FireReservedConcurrency,
	})
	errorAlarms := alarms.ErrorMetricAlarms(c, "", metrics.FunctionExpiry, map[string]string{
		metrics.FireBadInput: "The firing function got a payload it cannot read: that schedule can never fire its item. " +
			"Check the schedule's input against the schema in " + contract.EnvVar + " (keys and due attribute).",
		metrics.FireErrors: "Expiry invocations failed (the table, or the target); the timer retries them (with the scheduler timer, Lambda retries them, then " +
			"sends them to the fire failure queue). Check the firing function's logs.",
	}, p.AlarmTopic)
	alarms.Assign(metrics.FunctionExpiry, errorAlarms, map[string]*awscloudwatch.Alarm{
		metrics.FireBadInput: &s.FireBadInputAlarm, metrics.FireErrors: &s.FireErrorsAlarm,
	})
	grants.Table(s.Table, s.Fire.Function, "dynamodb:GetItem", "dynamodb:UpdateItem")
	if s.target != nil {
		grantInvokeOnly(s.target, s.Fire.Function, "the Target")
	}

	s.Timer = timer.Bind(c, TimerCore{Table: s.Table, Fire: s.Fire,
		AlarmTopic: p.AlarmTopic, RemovalPolicy: p.RemovalPolicy, Logs: p.Logs, ArmedIndex: s.armedIndexFor(p)})
	s.addReconciler(p)
	return s
}

// fireEnvironment is the firing function's environment: the table, the
// schema, the delivery lease, the Target (none with FireEntry) and
// FireEnvironment.
func (s *ScheduleOnWrite) fireEnvironment(p ScheduleOnWriteProps) map[string]string {
	lease := fmt.Sprint(int(fireLeaseSec(*p.FireTimeout.ToSeconds(nil))))
	env := map[string]string{envvars.Table: *s.Table.TableName(), envvars.ItemSchema: p.Schema.EnvValue(), EnvFireLease: lease}
	if p.Target != nil {
		s.firing = map[string]string{EnvTargetFunction: *p.Target.FunctionArn(), EnvFireLease: lease}
		env[EnvTargetFunction] = *p.Target.FunctionArn()
	}
	maps.Copy(env, p.FireEnvironment)
	return env
}

// FiringEnvironment is what a function that fires items the way the
// firing function does reads besides the table and schema: the Target
// (TARGET_FUNCTION_ARN) and the delivery lease (FIRE_LEASE_SECONDS), so
// that both agree on when an attempt may take over another's delivery;
// with FireEntry, the firing function (FIRE_FUNCTION_ARN) to invoke
// instead. The reconciler's overdue sweep fires with it.
func (s *ScheduleOnWrite) FiringEnvironment() map[string]string {
	if s.target == nil {
		return map[string]string{envvars.FireFunctionArn: *s.Fire.Function.FunctionArn()}
	}
	return maps.Clone(s.firing)
}

// GrantFire lets fn fire items as the firing function does: the claim
// (read an item and update it conditionally: GetItem and UpdateItem on
// the table only; no put, delete, query or scan, and no index) and
// invoking the Target only (its ARN and its versions and aliases),
// nothing else. With FireEntry, it lets fn invoke the firing function
// instead (that function claims). It returns the invoke grant.
func (s *ScheduleOnWrite) GrantFire(fn awslambda.IFunction) awsiam.Grant {
	if s.target == nil {
		return grantInvokeOnly(s.Fire.Function, fn, "the firing function")
	}
	grants.Table(s.Table, fn, "dynamodb:GetItem", "dynamodb:UpdateItem")
	return grantInvokeOnly(s.target, fn, "the Target")
}

// grantInvokeOnly lets fn invoke target (its ARN and its versions and
// aliases) only; what names target in the nag reason.
func grantInvokeOnly(target, fn awslambda.IFunction, what string) awsiam.Grant {
	g := grants.Invoke(target, fn)
	versions := any("Resource::" + *target.FunctionArn() + ":*")
	if *awscdk.Token_IsUnresolved(target.FunctionArn()) {
		versions = nag.Regex(`/^Resource::<[^>]+\.Arn>:\*$/g`)
	}
	nag.Suppress(nag.RolePolicy(fn), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{versions},
		Reason: "The function invokes " + what + " only: its ARN and its versions and aliases (ARN:*), nothing else."})
	return g
}

func validate(id string, p ScheduleOnWriteProps) {
	switch {
	case p.Target == nil && p.FireEntry == "":
		panic(fmt.Sprintf("%s: Target or FireEntry is required: set Target to your function to run at an item's due time (the firing function invokes it "+
			"with the item's payload, contract.Schema.EncodePayload, once the claim succeeded), or FireEntry to your main package "+
			"that runs your Go target inside the firing function (firefn.Start)", id))
	case p.Target != nil && p.FireEntry != "":
		panic(fmt.Sprintf("%s: Target and FireEntry (%q) are both set: an item has one target; keep Target to invoke your function, "+
			"or FireEntry to run your Go target inside the firing function, not both", id, p.FireEntry))
	case p.FireEntry == "" && (p.FireModuleRoot != "" || len(p.FireEnvironment) != 0):
		panic(fmt.Sprintf("%s: FireModuleRoot and FireEnvironment configure the firing function of FireEntry: set FireEntry too, "+
			"or give your Target function its own environment", id))
	}
	for _, k := range slices.Sorted(maps.Keys(p.FireEnvironment)) {
		if slices.Contains(envvars.All, k) || k == contract.EnvVar {
			panic(fmt.Sprintf("%s: FireEnvironment sets %s, a name the construct sets itself: rename your variable", id, k))
		}
	}
	if err := p.Schema.Validate(); err != nil {
		panic(fmt.Sprintf("%s: Schema: %v", id, strings.ReplaceAll(err.Error(), "\n", "; ")))
	}
	if p.ExistingTable != nil {
		CheckTable(id, "ExistingTable", p.ExistingTable, p.Schema)
		if p.DeletionProtection != nil {
			panic(fmt.Sprintf("%s: DeletionProtection applies to the table this construct creates, not to ExistingTable: set it on your table instead", id))
		}
	}
	propcheck.CheckSeconds(id, "FireTimeout", p.FireTimeout, 1, 900, "Lambda allows 1 second to 15 minutes")
	checkTargetTimeout(id, p)
}

// checkTargetTimeout panics when the Target may run longer than the
// delivery lease: a retried firing would then take over the item and run
// the target again while the first run still goes. Only a Target of this
// app has a timeout synth can read.
func checkTargetTimeout(id string, p ScheduleOnWriteProps) {
	if p.Target == nil {
		return // in process: the firing function's own timeout bounds it
	}
	target, known := resource.FunctionTimeoutSec(p.Target)
	if !known || *p.FireTimeout.IsUnresolved() {
		return
	}
	expiry := *p.FireTimeout.ToSeconds(nil)
	if lease := fireLeaseSec(expiry); target > lease {
		panic(fmt.Sprintf("%s: the Target's timeout (%vs) is longer than the delivery lease (%vs: FireTimeout %vs + %ds, at least %ds), "+
			"so a retried firing could run the target again while the first run still goes: set FireTimeout to at least %vs "+
			"(the target's timeout), or lower the target's timeout to at most %vs",
			id, target, lease, expiry, FireLeaseMarginSec, MinFireLeaseSec, target, lease))
	}
}

// fireModuleRoot is the ModuleRoot of FireEntry's build: FireModuleRoot,
// or the module of the working directory (the adopter's, not the
// library's, which gofn would pick for a function this construct builds).
func fireModuleRoot(id string, p ScheduleOnWriteProps) string {
	if p.FireModuleRoot != "" {
		return p.FireModuleRoot
	}
	root, err := gofn.WorkingModuleRoot()
	if err != nil {
		panic(fmt.Sprintf("%s: FireEntry: %v", id, err))
	}
	return root
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

// MetricFired is the count of items the firing function fired (the
// claim succeeded). Default: Sum over 5 minutes.
func (s *ScheduleOnWrite) MetricFired(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(s.Construct, metrics.FunctionExpiry, metrics.ItemsFired, opts)
}

// MetricFireErrors is the count of failed firing invocations (retried).
// Default: Sum over 5 minutes.
func (s *ScheduleOnWrite) MetricFireErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(s.Construct, metrics.FunctionExpiry, metrics.FireErrors, opts)
}

// MetricFireBadInput is the count of firing payloads that could not be
// read. Default: Sum over 5 minutes.
func (s *ScheduleOnWrite) MetricFireBadInput(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(s.Construct, metrics.FunctionExpiry, metrics.FireBadInput, opts)
}

// MetricFireSkipped is the count of firings with nothing to do (the
// item moved on, or its target already ran). Default: Sum over 5 minutes.
func (s *ScheduleOnWrite) MetricFireSkipped(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(s.Construct, metrics.FunctionExpiry, metrics.FireSkipped, opts)
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
	// In the order of metrics.ErrorMetrics[metrics.FunctionExpiry].
	return []awscloudwatch.Alarm{s.FireBadInputAlarm, s.FireErrorsAlarm}
}

// Alarms are every alarm of the construct: the firing function's error
// alarms, then the timer's (Timer.Alarms), then the reconciler's.
func (s *ScheduleOnWrite) Alarms() []awscloudwatch.Alarm {
	all := append(s.ErrorAlarms(), s.Timer.Alarms()...)
	if s.Reconciler != nil {
		all = append(all, s.Reconciler.Alarms()...)
	}
	return alarms.NonNil(all...)
}

// addReconciler builds the core's reconciler on this table and timer.
func (s *ScheduleOnWrite) addReconciler(p ScheduleOnWriteProps) {
	if p.NoReconciler {
		return
	}
	rp := reconciler.ReconcilerProps{}
	if p.Reconciler != nil {
		rp = *p.Reconciler
	}
	rp.Table, rp.Timer, rp.Core = s.Table, s.Timer, s
	rp.ArmedIndex = s.armedIndexFor(p)
	if reflect.DeepEqual(rp.Schema, contract.Schema{}) {
		rp.Schema = s.schema
	}
	if rp.AlarmTopic == nil {
		rp.AlarmTopic = p.AlarmTopic
	}
	if reflect.DeepEqual(rp.Logs, gofn.LogOptions{}) {
		rp.Logs = p.Logs
	}
	s.Reconciler = reconciler.NewReconciler(s.Construct, jsii.String("Reconciler"), &rp)
}
