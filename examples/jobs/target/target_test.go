package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/contract/pipelinetest"
	"github.com/unschedule/unschedule/examples/jobs/jobschema"
)

// The job's handler, behind the whole pipeline on each timer, with the
// jobs schema: a Queued job runs once after its runAt; a job the writer
// finishes (Done) or deletes first never runs; a new runAt moves it; a
// run that fails is retried, and the job records one delivery.
func TestHandleRunsOnceThroughThePipeline(t *testing.T) {
	runAt := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	start := runAt.Add(-time.Hour)
	later := runAt.Add(2 * time.Hour)
	k := contract.Key{Partition: "acme", Sort: "j1"}
	job := func(status string, at time.Time) map[string]string {
		return map[string]string{jobschema.Tenant: k.Partition, jobschema.Job: k.Sort, jobschema.Status: status,
			jobschema.RunAt: contract.FormatTime(at)}
	}
	for _, timer := range pipelinetest.Timers {
		for _, tc := range []struct {
			name  string
			write func(p *pipelinetest.Pipeline)
			fails int
			want  []contract.Payload // delivered
			calls int
		}{
			{"queued", func(*pipelinetest.Pipeline) {}, 0, []contract.Payload{{Key: k, Due: runAt}}, 1},
			{"finished by the writer", func(p *pipelinetest.Pipeline) { p.Put(job(jobschema.Done, runAt)) }, 0, nil, 0},
			{"deleted", func(p *pipelinetest.Pipeline) { p.Delete(k) }, 0, nil, 0},
			{"moved", func(p *pipelinetest.Pipeline) { p.Put(job(jobschema.Queued, later)) }, 0,
				[]contract.Payload{{Key: k, Due: later}}, 1},
			{"first run fails", func(*pipelinetest.Pipeline) {}, 1, []contract.Payload{{Key: k, Due: runAt}}, 2},
		} {
			t.Run(string(timer)+"/"+tc.name, func(t *testing.T) {
				fails := tc.fails
				h := func(ctx context.Context, raw json.RawMessage) error {
					if fails > 0 {
						fails--
						return errors.New("job runner unavailable")
					}
					return handle(ctx, raw)
				}
				p := pipelinetest.New(t, pipelinetest.Config{Schema: jobschema.Schema, Timer: timer, Start: start,
					Target: pipelinetest.LambdaTarget(jobschema.Schema, h)})
				p.Put(job(jobschema.Queued, runAt))
				p.Advance(time.Minute)
				tc.write(p)
				p.Advance(later.Add(time.Hour).Sub(p.Now()))

				if calls := p.Calls(); len(calls) != tc.calls {
					t.Fatalf("%d runs, want %d: %+v", len(calls), tc.calls, calls)
				}
				got := p.Delivered()
				if len(got) != len(tc.want) || (len(got) == 1 && !got[0].Equal(tc.want[0])) {
					t.Fatalf("delivered %+v, want %+v", got, tc.want)
				}
				if item, _ := p.Item(k); (item[jobschema.Schema.DeliveredAtAttr] != "") != (len(tc.want) == 1) {
					t.Errorf("job %v: want a delivery recorded only when the handler succeeded", item)
				}
			})
		}
	}
}
