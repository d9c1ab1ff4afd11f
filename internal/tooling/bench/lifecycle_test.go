package bench

import (
	"context"
	"testing"

	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// The call counts of each lifecycle on each timer are the basis of the
// cost model: pin them, so a change to the pipeline that adds an AWS call
// shows here.
func TestCountLifecycle(t *testing.T) {
	for _, tc := range []struct {
		timer                                 timerspec.Name
		path                                  Path
		api, writes, reads, sched, fired, sqs int
		stream, worker, fire, publish         int
		// Step Functions: executions started and state transitions; TTL:
		// marker writes and the TTL deletions the stream delivers.
		execs, transitions, markers, ttlReads int
	}{
		// create (a count of the user's pending tasks, the write,
		// CreateSchedule, the MarkScheduled write); expiry, in the one
		// firing function (lambdas/todofire): the claim write (which
		// returns the task: the target reads it from there, not again),
		// publish and MarkNotified write (the store's, which keeps the table's indexes, and records
		// the delivery: the core writes no second record); the INSERT and
		// the two MODIFYs of a pending task pass the stream filter and
		// invoke the processor, which sends nothing.
		{timerspec.EventBridgeScheduler, PathExpire, 1, 4, 1, 1, 1, 0, 3, 0, 1, 1, 0, 0, 0, 0},
		// create; complete (write) -> processor -> SQS -> worker ->
		// DeleteSchedule; nothing fires.
		{timerspec.EventBridgeScheduler, PathCancel, 2, 3, 1, 2, 0, 3, 3, 1, 0, 0, 0, 0, 0, 0},
		// create; move (a consistent read, since the reminder time derives
		// from the task's reminder and the new deadline; the write) ->
		// processor -> SQS -> worker -> UpdateSchedule; then it expires as
		// PathExpire.
		{timerspec.EventBridgeScheduler, PathReschedule, 2, 5, 2, 2, 1, 3, 4, 1, 1, 1, 0, 0, 0, 0},
		// One execution: Wait, then LambdaInvoke.
		{timerspec.StepFunctions, PathExpire, 1, 4, 1, 0, 0, 0, 3, 0, 1, 1, 1, 2, 0, 0},
		// Started, then stopped in its Wait.
		{timerspec.StepFunctions, PathCancel, 2, 3, 1, 0, 0, 3, 3, 1, 0, 0, 1, 1, 0, 0},
		// The move stops the first and starts a second, which fires.
		{timerspec.StepFunctions, PathReschedule, 2, 5, 2, 0, 0, 3, 4, 1, 1, 1, 2, 3, 0, 0},
		// The marker put is a write of its own; its TTL deletion is free.
		{timerspec.TTL, PathExpire, 1, 5, 1, 0, 0, 0, 3, 0, 1, 1, 0, 0, 1, 1},
		// Put, then the worker's delete of the marker.
		{timerspec.TTL, PathCancel, 2, 5, 1, 0, 0, 3, 3, 1, 0, 0, 0, 0, 2, 0},
		// Put, then overwritten with the new TTL.
		{timerspec.TTL, PathReschedule, 2, 7, 2, 0, 0, 3, 4, 1, 1, 1, 0, 0, 2, 1},
	} {
		t.Run(string(tc.timer)+"/"+string(tc.path), func(t *testing.T) {
			u, err := CountLifecycle(context.Background(), tc.path, tc.timer)
			if err != nil {
				t.Fatal(err)
			}
			got := []int{u.APIRequests, Total(u.DynamoWrites), Total(u.DynamoReads), Total(u.SchedulerCalls), u.SchedulerInvocations,
				u.SQSRequests, u.Invocations["streamprocessor"], u.Invocations["cancelworker"],
				u.Invocations["todofire"], u.SNSPublishes, u.Executions, u.StateTransitions, u.MarkerWrites, u.StreamReads}
			want := []int{tc.api, tc.writes, tc.reads, tc.sched, tc.fired, tc.sqs, tc.stream, tc.worker, tc.fire, tc.publish,
				tc.execs, tc.transitions, tc.markers, tc.ttlReads}
			names := []string{"api", "writes", "reads", "scheduler calls", "fired", "sqs", "stream", "worker", "todofire", "publish",
				"executions", "state transitions", "marker writes", "TTL stream reads"}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s: got %d, want %d (usage %+v)", names[i], got[i], want[i], u)
				}
			}
			// The target runs inside the firing function: no other
			// function is invoked per firing.
			if u.Invocations["notify"] != 0 || u.Invocations["expiry"] != 0 {
				t.Errorf("invocations %v: want the firing function only (todofire), no notify or expiry function", u.Invocations)
			}
		})
	}
	if _, err := CountLifecycle(context.Background(), "nope", timerspec.EventBridgeScheduler); err == nil {
		t.Error("unknown path: want an error")
	}
}
