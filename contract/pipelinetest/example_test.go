package pipelinetest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/contract/pipelinetest"
)

// exampleT stands in for a test's *testing.T, which an Example has not.
type exampleT struct{}

func (exampleT) Helper()                           {}
func (exampleT) Fatalf(format string, args ...any) { log.Fatalf(format, args...) }

// A job queued for 10:00:30 runs once, at 10:01:00 on EventBridge
// Scheduler (the whole minute at or after its due time); a job cancelled
// before its time never runs; the item records the delivery.
func Example() {
	schema := contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt", StateAttr: "status",
		ArmedStates: []string{"Queued"}, FiredState: "Done", ScheduleNamePrefix: "job-",
		FiredAtAttr: "firedAt", ClaimAtAttr: "claimAt", DeliveredAtAttr: "deliveredAt"}
	var t pipelinetest.TB = exampleT{} // in a test: the test's t
	p := pipelinetest.New(t, pipelinetest.Config{
		Schema: schema,
		Target: func(_ context.Context, pl contract.Payload) error {
			fmt.Println("run", pl.Key, "due", contract.FormatTime(pl.Due))
			return nil
		},
		Timer: pipelinetest.Scheduler,
		Start: time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC),
	})
	p.Put(map[string]string{"tenantId": "acme", "jobId": "j1", "status": "Queued", "runAt": "2030-01-01T10:00:30Z"})
	p.Put(map[string]string{"tenantId": "acme", "jobId": "j2", "status": "Queued", "runAt": "2030-01-01T10:00:00Z"})
	p.Put(map[string]string{"tenantId": "acme", "jobId": "j2", "status": "Cancelled", "runAt": "2030-01-01T10:00:00Z"})
	p.Advance(2 * time.Hour)

	for _, c := range p.Calls() {
		fmt.Println(c.Payload.Key, "ran at", contract.FormatTime(c.At), "error", c.Err)
	}
	j1, _ := p.Item(contract.Key{Partition: "acme", Sort: "j1"})
	fmt.Println("j1", j1["status"], "delivered at", j1["deliveredAt"])
	// Output:
	// run acme/j1 due 2030-01-01T10:00:30Z
	// acme/j1 ran at 2030-01-01T10:01:00Z error <nil>
	// j1 Done delivered at 2030-01-01T10:01:00Z
}
