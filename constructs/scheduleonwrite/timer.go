package scheduleonwrite

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/contract"
)

// Timer is what fires an item at its due time: NewSchedulerTimer (one
// EventBridge Scheduler schedule per item, the default),
// NewStepFunctionsTimer (one waiting execution per item) or NewTTLTimer
// (one expiring marker per item). Every timer uses the same item
// contract, the same conditional claim (the firing function's
// core) and hands the Target the same payload: switching the timer
// changes none of the adopter's code. See the README's "Choosing a
// timer".
//
// NewScheduleOnWrite drives a timer in two steps, like aws-cdk's
// scheduler targets bind to their schedule: Plan, before it builds
// anything, then Bind, once its table and firing function exist. A
// construct with its own table and firing function (constructs/campaigns)
// drives it the same way, with TimerNeeds.ApplyTo on its new table. A
// timer serves one construct: binding it twice panics.
type Timer interface {
	// Plan checks the timer's props against the core (panicking with how
	// to fix a bad one) and says what the core must build for it.
	Plan(plan TimerPlan) TimerNeeds
	// Bind creates the timer's resources as children of scope (the
	// ScheduleOnWrite construct) and returns what the functions that
	// create, move and cancel timers need.
	Bind(scope constructs.Construct, core TimerCore) TimerBinding
}

// TimerPlan is what a timer learns of the core before anything is built.
type TimerPlan struct {
	// ID is the ScheduleOnWrite's construct id, for messages.
	ID string
	// Schema is the item schema, defaults filled.
	Schema contract.Schema
	// ExistingTable is ScheduleOnWriteProps.ExistingTable; nil when the
	// core creates the table.
	ExistingTable awsdynamodb.ITable
}

// TimerNeeds is what a timer asks of the table and the firing function
// the core builds.
type TimerNeeds struct {
	// TableTTLAttribute becomes a new table's TimeToLiveAttribute.
	// Default: "" (no TTL).
	TableTTLAttribute string
	// TableStream is the stream view the timer reads from the table (the
	// TTL timer reads each deleted marker's old image): the table's stream
	// must carry it.
	// Default: "" (the timer reads no stream).
	TableStream awsdynamodb.StreamViewType
	// FireReservedConcurrency is the firing function's reserved
	// concurrency.
	// Default: nil (none).
	FireReservedConcurrency *float64
}

// ApplyTo sets on the props of a table to be created what the timer asks
// of it: its TTL attribute, and a stream that carries TableStream as
// well as the view tp already has. A construct that drives a timer
// outside NewScheduleOnWrite (its own table and firing function) calls
// Plan, ApplyTo on its new table, then Bind.
func (n TimerNeeds) ApplyTo(tp *awsdynamodb.TableProps) {
	if n.TableTTLAttribute != "" {
		tp.TimeToLiveAttribute = &n.TableTTLAttribute
	}
	tp.Stream = MergeStreamViews(tp.Stream, n.TableStream)
}

// MergeStreamViews is the narrowest stream view that carries both a and
// b ("" for none): NEW_IMAGE and OLD_IMAGE give NEW_AND_OLD_IMAGES.
func MergeStreamViews(a, b awsdynamodb.StreamViewType) awsdynamodb.StreamViewType {
	newA, oldA := streamImages(a)
	newB, oldB := streamImages(b)
	switch n, o := newA || newB, oldA || oldB; {
	case n && o:
		return awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES
	case n:
		return awsdynamodb.StreamViewType_NEW_IMAGE
	case o:
		return awsdynamodb.StreamViewType_OLD_IMAGE
	case a != "" || b != "":
		return awsdynamodb.StreamViewType_KEYS_ONLY
	}
	return ""
}

// StreamCarries reports whether a stream of view have carries what view
// want does.
func StreamCarries(have, want awsdynamodb.StreamViewType) bool {
	return have != "" && MergeStreamViews(have, want) == have
}

func streamImages(v awsdynamodb.StreamViewType) (newImage, oldImage bool) {
	both := v == awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES
	return both || v == awsdynamodb.StreamViewType_NEW_IMAGE, both || v == awsdynamodb.StreamViewType_OLD_IMAGE
}

// TimerCore is what the core hands a timer to bind to.
type TimerCore struct {
	TimerPlan
	// Table holds the items (ExistingTable or the one created).
	Table awsdynamodb.ITable
	// Fire is the function that fires an item: the timer invokes it
	// with the item's payload (contract.Schema.EncodePayload) at its due
	// time.
	Fire *gofn.Function
	// AlarmTopic receives the timer's alarms (nil: alarms with no action).
	AlarmTopic awssns.ITopic
	// RemovalPolicy of what the timer creates that holds data (queues,
	// the schedule group, log groups).
	RemovalPolicy awscdk.RemovalPolicy
	// Logs of the functions the timer creates.
	Logs gofn.LogOptions
	// ArmedIndex is the table's armed index (nil: none); a state-keyed
	// one lists the TTL timer's markers.
	ArmedIndex *reconciler.ArmedIndex
}

// TimerBinding is a bound timer: what the functions that create, move and
// cancel timers need (the cancellation worker, your API). Each timer
// returns itself.
type TimerBinding interface {
	// Environment is what a function that creates, moves or cancels
	// timers reads, as the environment variables our Lambda mains read
	// (internal/core/timerspec: UNSCHEDULE_TIMER and the timer's own).
	Environment() map[string]string
	// GrantModify lets grantee create, move and cancel the timers of
	// items, and nothing outside this timer's resources.
	GrantModify(grantee awsiam.IGrantable) awsiam.Grant
	// GrantDisarm lets grantee only cancel the timers of items (what
	// timer.Timer.Disarm calls), and nothing outside this timer's
	// resources: for a function that cancels and never arms or moves.
	GrantDisarm(grantee awsiam.IGrantable) awsiam.Grant
	// GrantRead lets grantee read and list the timers of items (the
	// reconciler), and nothing outside this timer's resources but what
	// the service cannot scope.
	GrantRead(grantee awsiam.IGrantable) awsiam.Grant
	// Alarms are the timer's own alarms (each already notifies the
	// AlarmTopic).
	Alarms() []awscloudwatch.Alarm
	// FireFailures are the failure queue and alarms of the firing
	// function's asynchronous invocations when the timer invokes it
	// asynchronously and configured them (the Scheduler timer; they are
	// among Alarms); nil when it invokes it synchronously.
	FireFailures() *FireFailures
}

// binding is what every timer keeps of its one binding.
type binding struct {
	kind  string
	core  *TimerCore
	path  string
	scope constructs.Construct
}

// plan panics when the timer already serves a ScheduleOnWrite.
func (b *binding) plan(id string) {
	if b.core != nil {
		panic(fmt.Sprintf("%s: this %s is already bound to %s: a timer serves one ScheduleOnWrite, so create one timer per construct (%s)",
			id, b.kind, b.path, "New"+b.kind+"(...)"))
	}
}

// bind records the core; a second bind panics.
func (b *binding) bind(scope constructs.Construct, core TimerCore) {
	b.plan(core.ID)
	b.core, b.path, b.scope = &core, *scope.Node().Path(), scope
}

// bound returns the core, or panics with how to bind the timer first.
func (b *binding) bound(method string) *TimerCore {
	if b.core == nil {
		panic(fmt.Sprintf("%s.%s: the timer is not bound yet: pass it as ScheduleOnWriteProps.Timer to NewScheduleOnWrite first", b.kind, method))
	}
	return b.core
}

// Schema is the item schema of the ScheduleOnWrite the timer is bound to
// (the cancellation pipeline takes it as its default).
func (b *binding) Schema() contract.Schema { return b.bound("Schema").Schema }
