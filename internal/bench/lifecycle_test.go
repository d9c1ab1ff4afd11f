package bench

import (
	"context"
	"testing"
)

// The call counts of each lifecycle are the basis of the cost model:
// pin them, so a change to the pipeline that adds an AWS call shows here.
func TestCountLifecycle(t *testing.T) {
	for _, tc := range []struct {
		path                                  Path
		api, writes, reads, sched, fired, sqs int
		stream, worker, expiry, publish       int
	}{
		// create (a count of the user's pending tasks, the write,
		// CreateSchedule, the MarkScheduled write); expiry: the claim
		// write, then the notify target's consistent read of the task,
		// publish and MarkNotified write (the store's, which keeps the
		// table's indexes), then the core's record of the delivery, a
		// conditional write that finds it recorded (still a write unit);
		// the three MODIFYs invoke the processor, which sends nothing for
		// them. Not counted yet: the notify function's invocation.
		{PathExpire, 1, 5, 2, 1, 1, 0, 3, 0, 1, 1},
		// create; complete (write) -> processor -> SQS -> worker ->
		// DeleteSchedule; nothing fires.
		{PathCancel, 2, 3, 1, 2, 0, 3, 2, 1, 0, 0},
		// create; move (a consistent read, since the reminder time derives
		// from the task's reminder and the new deadline; the write) ->
		// processor -> SQS -> worker -> UpdateSchedule; then it expires as
		// PathExpire.
		{PathReschedule, 2, 6, 3, 2, 1, 3, 4, 1, 1, 1},
	} {
		t.Run(string(tc.path), func(t *testing.T) {
			u, err := CountLifecycle(context.Background(), tc.path)
			if err != nil {
				t.Fatal(err)
			}
			got := []int{u.APIRequests, Total(u.DynamoWrites), Total(u.DynamoReads), Total(u.SchedulerCalls), u.SchedulerInvocations,
				u.SQSRequests, u.Invocations["streamprocessor"], u.Invocations["cancelworker"],
				u.Invocations["expiry"], u.SNSPublishes}
			want := []int{tc.api, tc.writes, tc.reads, tc.sched, tc.fired, tc.sqs, tc.stream, tc.worker, tc.expiry, tc.publish}
			names := []string{"api", "writes", "reads", "scheduler calls", "fired", "sqs", "stream", "worker", "expiry", "publish"}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s: got %d, want %d (usage %+v)", names[i], got[i], want[i], u)
				}
			}
		})
	}
	if _, err := CountLifecycle(context.Background(), "nope"); err == nil {
		t.Error("unknown path: want an error")
	}
}
