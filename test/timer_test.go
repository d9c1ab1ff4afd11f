package test

import (
	"fmt"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/todoapp"
)

// importedTarget is an adopter's function, imported by ARN.
func importedTarget(scope awscdk.Stack, id string) awslambda.IFunction {
	return awslambda.Function_FromFunctionArn(scope, jsii.String(id), jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:run"))
}

// todoCore is the to-do app's core as the app builds it: its own table
// (todoapp.NewTaskTable, with the pending index), the to-do schema, a
// target, and a scheduler timer, under the id "Tasks".
func todoCore(stack awscdk.Stack) (*scheduleonwrite.ScheduleOnWrite, *scheduleonwrite.SchedulerTimer) {
	timer := scheduleonwrite.NewSchedulerTimer(nil)
	s := scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Tasks"), &scheduleonwrite.ScheduleOnWriteProps{
		ExistingTable: todoapp.NewTaskTable(stack, "TaskTable", nil), Schema: tableschema.Todo(),
		Target: importedTarget(stack, "TodoTarget"), Timer: timer,
	})
	return s, timer
}

// TestEachTimerCreatesOnlyItsOwnResources: a timer's resources exist with
// that timer only (no schedule group with the Step Functions or TTL
// timer, no state machine with the others, no stream mapping or TTL but
// with the TTL timer), and its typed fields are set once it is bound.
func TestEachTimerCreatesOnlyItsOwnResources(t *testing.T) {
	const (
		group   = "AWS::Scheduler::ScheduleGroup"
		sm      = "AWS::StepFunctions::StateMachine"
		mapping = "AWS::Lambda::EventSourceMapping"
		invoke  = "AWS::Lambda::EventInvokeConfig"
		rule    = "AWS::Events::Rule"
	)
	for _, tc := range []struct {
		name  string
		timer func() scheduleonwrite.Timer
		want  map[string]int
		ttl   bool
		bound func(t *testing.T, b scheduleonwrite.TimerBinding)
	}{
		{"Scheduler", func() scheduleonwrite.Timer { return scheduleonwrite.NewSchedulerTimer(nil) },
			map[string]int{group: 1, sm: 0, mapping: 0, invoke: 1, rule: 0}, false,
			func(t *testing.T, b scheduleonwrite.TimerBinding) {
				x := b.(*scheduleonwrite.SchedulerTimer)
				if x.ScheduleGroup == nil || x.SchedulerRole == nil || x.DeadLetterQueue == nil || x.FireFailureQueue == nil || len(x.Alarms()) != 4 {
					t.Errorf("scheduler timer fields unset: %+v", x)
				}
			}},
		{"StepFunctions", func() scheduleonwrite.Timer { return scheduleonwrite.NewStepFunctionsTimer(nil) },
			map[string]int{group: 0, sm: 1, mapping: 0, invoke: 0, rule: 0}, false,
			func(t *testing.T, b scheduleonwrite.TimerBinding) {
				x := b.(*scheduleonwrite.StepFunctionsTimer)
				if x.StateMachine == nil || x.FailedExecutionsAlarm == nil || len(x.Alarms()) != 1 {
					t.Errorf("Step Functions timer fields unset: %+v", x)
				}
			}},
		{"TTL", func() scheduleonwrite.Timer {
			return scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: awscdk.Duration_Days(jsii.Number(2))})
		}, map[string]int{group: 0, sm: 0, mapping: 1, invoke: 0, rule: 1}, true,
			func(t *testing.T, b scheduleonwrite.TimerBinding) {
				x := b.(*scheduleonwrite.TTLTimer)
				if x.TTLMapping == nil || x.TTLFailureQueue == nil || x.TTLWatch == nil || len(x.Alarms()) != 4 {
					t.Errorf("TTL timer fields unset: %+v", x)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stack := customStack(t, "Own"+tc.name)
			var sow *scheduleonwrite.ScheduleOnWrite
			Check(t, func() {
				sow = scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Jobs"), &scheduleonwrite.ScheduleOnWriteProps{
					Schema: jobsSchema, Target: importedTarget(stack, "Target"), Timer: tc.timer(),
					NoReconciler: true, // the timer's own resources only
				})
			})
			s := synthOf(t, stack)
			for typ, n := range tc.want {
				if got := len(s.Resources(typ)); got != n {
					t.Errorf("%d %s, want %d", got, typ, n)
				}
			}
			for _, tbl := range s.Resources("AWS::DynamoDB::Table") {
				if hasTTL := Props(tbl)["TimeToLiveSpecification"] != nil; hasTTL != tc.ttl {
					t.Errorf("table TTL %v, want %v", JSON(Props(tbl)["TimeToLiveSpecification"]), tc.ttl)
				}
			}
			tc.bound(t, sow.Timer)
		})
	}
}

// TestTimerBoundTwicePanics: a timer serves one ScheduleOnWrite; a second
// one panics and says to create one timer per construct.
func TestTimerBoundTwicePanics(t *testing.T) {
	for _, tc := range []struct {
		name  string
		timer scheduleonwrite.Timer
	}{
		{"SchedulerTimer", scheduleonwrite.NewSchedulerTimer(nil)},
		{"StepFunctionsTimer", scheduleonwrite.NewStepFunctionsTimer(nil)},
		{"TTLTimer", scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: awscdk.Duration_Days(jsii.Number(2))})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stack := customStack(t, "Twice"+tc.name)
			mk := func(i int) {
				scheduleonwrite.NewScheduleOnWrite(stack, jsii.String(fmt.Sprint("Jobs", i)), &scheduleonwrite.ScheduleOnWriteProps{
					Schema: jobsSchema, Target: importedTarget(stack, fmt.Sprint("Target", i)), Timer: tc.timer,
				})
			}
			Check(t, func() { mk(1) })
			WantPanic(t, func() { mk(2) }, "Jobs2: this "+tc.name+" is already bound to", "/Jobs1",
				"create one timer per construct (New"+tc.name+"(...))")
		})
	}
}

// TestUnboundTimerPanics: a timer's environment and grants exist once it
// is bound; before, they panic with how to bind it.
func TestUnboundTimerPanics(t *testing.T) {
	WantPanic(t, func() { scheduleonwrite.NewSchedulerTimer(nil).Environment() },
		"SchedulerTimer.Environment: the timer is not bound yet: pass it as ScheduleOnWriteProps.Timer")
}
