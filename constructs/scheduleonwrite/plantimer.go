package scheduleonwrite

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"

	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// PlannedTimer is a timer between its two steps: planned (PlanTimer) and
// not yet bound (Bind). It is how every construct that builds its own
// table and firing function drives a timer: NewScheduleOnWrite, and
// adopters such as constructs/campaigns, so the steps have one
// implementation.
type PlannedTimer struct {
	// Needs is what the timer asks of the table and the firing function:
	// apply it to a new table's props (TimerNeeds.ApplyTo) and give the
	// firing function its FireReservedConcurrency.
	Needs TimerNeeds
	timer Timer
	plan  TimerPlan
}

// PlanTimer is the first step: it checks the timer's props against plan
// (Timer.Plan panics with how to fix a bad one) and that the stream of
// plan.ExistingTable, when synth can read it, carries the view the timer
// reads. Build the table and the firing function next, then call Bind.
func PlanTimer(timer Timer, plan TimerPlan) *PlannedTimer {
	if timer == nil {
		panic(fmt.Sprintf("%s: no timer to plan: pass NewSchedulerTimer(nil), NewStepFunctionsTimer(nil) or NewTTLTimer(...)", plan.ID))
	}
	needs := timer.Plan(plan)
	if plan.ExistingTable != nil && needs.TableStream != "" {
		checkTimerStream(plan.ID, plan.ExistingTable, needs.TableStream)
	}
	return &PlannedTimer{Needs: needs, timer: timer, plan: plan}
}

// checkTimerStream panics unless the stream of table (as synth can read
// it) carries want, saying which view to give it: the one it has merged
// with want, so that what else reads the stream keeps its images.
func checkTimerStream(id string, table awsdynamodb.ITable, want awsdynamodb.StreamViewType) {
	info := resource.InspectTable(table)
	have := awsdynamodb.StreamViewType(info.StreamView)
	if info.HasStreamAttribute && (have == "" || StreamCarries(have, want)) {
		return // carries it, or imported: its view cannot be read
	}
	panic(fmt.Sprintf("%s: ExistingTable's stream (%q) does not carry the %s view the timer reads: give it a stream of %s "+
		"(awsdynamodb.TableProps.Stream), or import it with that stream's TableStreamArn", id, have, want, MergeStreamViews(have, want)))
}

// Bind is the second step, once the table and the firing function exist:
// it binds the timer to them (Timer.Bind; core.TimerPlan is the planned
// one) and returns the binding, whose Environment names the timer's kind
// (UNSCHEDULE_TIMER) with its own variables: every function that arms,
// moves or disarms timers reads exactly that.
func (t *PlannedTimer) Bind(scope constructs.Construct, core TimerCore) TimerBinding {
	core.TimerPlan = t.plan
	b := t.timer.Bind(scope, core)
	if b.Environment()[envvars.TimerKind] == "" {
		panic(fmt.Sprintf("%s: the timer's Environment does not name its kind (%s): a function reading it could not choose the timer's adapter; "+
			"return the kind from the binding's Environment", t.plan.ID, envvars.TimerKind))
	}
	return b
}

// FireFailures are the failure queue and alarms of the firing function's
// asynchronous invocations, which a timer that invokes it asynchronously
// (the Scheduler timer) configures: the queue receives every event Lambda
// gave up on; FailureAlarm fires on a record in it, DroppedAlarm on
// Lambda's AsyncEventsDropped, DeliveryFailureAlarm when a record could
// not reach the queue.
type FireFailures struct {
	Queue                                            awssqs.IQueue
	FailureAlarm, DroppedAlarm, DeliveryFailureAlarm awscloudwatch.Alarm
}
