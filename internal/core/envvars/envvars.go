// Package envvars names the environment variables of the scheduling
// core: what its constructs set on its functions and their mains read,
// in one place, so the two sides cannot drift apart. An adopter declares
// its own beside its code and registers them (Register), as a database/sql
// driver registers itself: Unknown then knows them too. It imports
// nothing but the item contract: constructs (the CDK app) and Lambda
// mains both use it.
package envvars

import (
	"slices"
	"sort"
	"sync"

	"github.com/unschedule/unschedule/contract"
)

// The variables, one line each: who sets it, and what it carries.
const (
	// MetricsStack is the stack's name, the Stack dimension of every metric (every function; internal/core/metrics).
	MetricsStack = "METRICS_STACK"
	// ItemSchema is the table's item schema as JSON (contract.EnvVar; scheduleonwrite, cancellation, reconciler).
	ItemSchema = contract.EnvVar
	// TimerKind is the timer the cancel worker drives (internal/core/timerspec; scheduleonwrite).
	TimerKind = "UNSCHEDULE_TIMER"
	// Table is the item table's name (every function of the core; an adopter's own functions too).
	Table = "TABLE_NAME"
	// ScheduleGroup is the EventBridge Scheduler schedule group (scheduleonwrite, campaigns).
	ScheduleGroup = "SCHEDULE_GROUP"
	// ScheduleTargetArn is the function every task schedule invokes (scheduleonwrite).
	ScheduleTargetArn = "SCHEDULE_TARGET_ARN"
	// SchedulerRoleArn is the role schedules run as (scheduleonwrite, campaigns).
	SchedulerRoleArn = "SCHEDULER_ROLE_ARN"
	// SchedulerDLQArn is the schedules' dead-letter queue (scheduleonwrite, campaigns).
	SchedulerDLQArn = "SCHEDULER_DLQ_ARN"
	// ScheduleRetries is a schedule's retry attempts (scheduleonwrite).
	ScheduleRetries = "SCHEDULE_RETRIES"
	// ScheduleMaxEventAge is a schedule's maximum event age in seconds (scheduleonwrite).
	ScheduleMaxEventAge = "SCHEDULE_MAX_EVENT_AGE"
	// QueueURL is the cancellation FIFO queue the stream processor sends to (cancellation).
	QueueURL = "QUEUE_URL"
	// TargetFunctionArn is the adopter's target the firing function invokes instead of notifying (scheduleonwrite).
	TargetFunctionArn = "TARGET_FUNCTION_ARN"
	// FireLeaseSeconds is how long a firing attempt holds the right to run the target (scheduleonwrite).
	FireLeaseSeconds = "FIRE_LEASE_SECONDS"
	// FireFunctionArn is the firing function the reconciler invokes to fire an overdue item when the target runs inside it (scheduleonwrite FireEntry).
	FireFunctionArn = "FIRE_FUNCTION_ARN"
	// TTLAttribute is the table's TTL attribute, for the TTL timer (scheduleonwrite).
	TTLAttribute = "TTL_ATTRIBUTE"
	// MaxLatenessSeconds is the TTL watch's MaxLateness in seconds (scheduleonwrite).
	MaxLatenessSeconds = "MAX_LATENESS_SECONDS"
	// StateMachineArn is the Step Functions timer's state machine (scheduleonwrite).
	StateMachineArn = "STATE_MACHINE_ARN"
	// GraceSec is how long past due the reconciler leaves a task to its schedule (reconciler).
	GraceSec = "GRACE_SEC"
	// BudgetSec is a reconciler run's time budget (reconciler).
	BudgetSec = "BUDGET_SEC"
	// ArmedIndex is the armed index the reconciler lists the armed items
	// from, as JSON (armedindex.Spec); unset, it scans the table (reconciler).
	ArmedIndex = "RECONCILE_ARMED_INDEX"
	// RatePerSec is the reconciler's scheduler calls per second (reconciler).
	RatePerSec = "RATE_PER_SEC"
	// PageCursorSecretArn is the Secrets Manager secret whose key seals an API's page cursors (internal/core/pagecursor; taskapi, campaigns).
	PageCursorSecretArn = "PAGE_CURSOR_SECRET_ARN"
)

// All lists every name above: what a construct of the core may set on a
// function.
var All = []string{
	MetricsStack, ItemSchema, TimerKind, Table, ScheduleGroup, ScheduleTargetArn, SchedulerRoleArn, SchedulerDLQArn,
	ScheduleRetries, ScheduleMaxEventAge, QueueURL, TargetFunctionArn, FireLeaseSeconds, FireFunctionArn, TTLAttribute, MaxLatenessSeconds,
	StateMachineArn, GraceSec, BudgetSec, ArmedIndex, RatePerSec, PageCursorSecretArn,
}

var (
	mu         sync.Mutex
	registered []string
)

// Register adds an adopter's names to what Known accepts; each adopter's
// package of names calls it from its init, once per name list.
func Register(names ...string) {
	mu.Lock()
	defer mu.Unlock()
	for _, n := range names {
		if !slices.Contains(registered, n) {
			registered = append(registered, n)
		}
	}
}

// Known reports whether name is one of All or a registered name.
func Known(name string) bool {
	mu.Lock()
	defer mu.Unlock()
	return slices.Contains(All, name) || slices.Contains(registered, name)
}

// Unknown returns the sorted "function: variable" pairs of a synthesized
// CloudFormation template whose variable is not Known, for the synth
// tests: a construct that sets a name from nowhere fails them. Only
// this library's functions count (constructs/gofn gives every one
// MetricsStack); the CDK's own (a BucketDeployment's handler) set theirs.
func Unknown(template map[string]any) []string {
	var out []string
	resources, _ := template["Resources"].(map[string]any)
	for id, r := range resources {
		r, _ := r.(map[string]any)
		if r["Type"] != "AWS::Lambda::Function" {
			continue
		}
		props, _ := r["Properties"].(map[string]any)
		env, _ := props["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		if _, ours := vars[MetricsStack]; !ours {
			continue
		}
		for name := range vars {
			if !Known(name) {
				out = append(out, id+": "+name)
			}
		}
	}
	sort.Strings(out)
	return out
}
