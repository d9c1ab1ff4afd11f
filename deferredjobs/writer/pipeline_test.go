package writer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/contract/pipelinetest"
	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/deferredjobs/writer"
	"github.com/unschedule/unschedule/internal/deferredjobs/jobdispatch"
)

// pipelineTable is the writer's PutAPI on the in-memory pipeline: a
// PutItem is the pipeline's Put, and MarkActivity's condition
// (attribute_not_exists of the key) is evaluated on the item there.
type pipelineTable struct {
	p    *pipelinetest.Pipeline
	puts int
	kept int
}

func (f *pipelineTable) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	attrs := map[string]string{}
	for k, v := range in.Item {
		attrs[k] = v.(*types.AttributeValueMemberS).Value
	}
	f.puts++
	if in.ConditionExpression == nil || *in.ConditionExpression != "attribute_not_exists(#t)" || in.ExpressionAttributeNames["#t"] != job.TenantAttr {
		return nil, fmt.Errorf("unexpected condition %v %v", in.ConditionExpression, in.ExpressionAttributeNames)
	}
	if _, ok := f.p.Item(contract.Key{Partition: attrs[job.TenantAttr], Sort: attrs[job.WindowAttr]}); ok {
		f.kept++
		return nil, &types.ConditionalCheckFailedException{Message: new(string)}
	}
	f.p.Put(attrs)
	return &dynamodb.PutItemOutput{}, nil
}

// queued is a job queue that records when each job was sent.
type queued struct {
	now  func() time.Time
	jobs []sentJob
}

type sentJob struct {
	job.Job
	at time.Time
}

func (q *queued) Send(_ context.Context, j job.Job) error {
	q.jobs = append(q.jobs, sentJob{j, q.now()})
	return nil
}

type noMetrics struct{}

func (noMetrics) Add(string, float64) {}

// TestManyActivitiesInOneWindowGiveOneJobOnTheTTLTimer runs the writer,
// the core's pipeline on its TTL timer (contract/pipelinetest: stream,
// FIFO, cancel worker, TTL marker, expiry claim) and the dispatcher as the
// core's Target: a tenant active a hundred times in one week gets exactly
// one job for that window, a tenant active once gets one, a tenant never
// active none; no job is queued before its window, and each comes the
// TTL deletion's lateness after it. Activity after the window belongs to
// the next one.
func TestManyActivitiesInOneWindowGiveOneJobOnTheTTLTimer(t *testing.T) {
	start := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)  // a Wednesday
	window := time.Date(2030, 1, 7, 3, 0, 0, 0, time.UTC) // the coming Monday 03:00
	for _, late := range []time.Duration{0, time.Second, 30 * time.Hour, 47 * time.Hour} {
		t.Run(fmt.Sprint("TTL deletes ", late, " late"), func(t *testing.T) {
			q := &queued{}
			d, err := jobdispatch.NewDispatcher(q, slog.New(slog.NewTextHandler(io.Discard, nil)), noMetrics{}, jobdispatch.Metrics{})
			if err != nil {
				t.Fatal(err)
			}
			p := pipelinetest.New(t, pipelinetest.Config{
				Schema: job.Schema(), Timer: pipelinetest.TTL, Start: start, Late: late,
				Target: pipelinetest.LambdaTarget(job.Schema(), func(ctx context.Context, payload json.RawMessage) error {
					return d.Handle(ctx, payload)
				}),
			})
			q.now = p.Now
			table := &pipelineTable{p: p}
			w, err := writer.New(table, "jobs", job.DefaultWeekly)
			if err != nil {
				t.Fatal(err)
			}
			w = w.WithClock(p.Now)
			mark := func(tenant string) {
				t.Helper()
				it, err := w.MarkActivity(context.Background(), tenant)
				if err != nil {
					t.Fatal(err)
				}
				if !it.Window.After(p.Now()) {
					t.Fatalf("activity at %s marked window %s", p.Now(), it.Window)
				}
			}

			mark("shop-2")
			for range 100 { // shop-1: busy all week, up to the last second
				mark("shop-1")
				p.Advance(window.Sub(start) / 101)
			}
			p.Advance(window.Add(-time.Second).Sub(p.Now()))
			mark("shop-1")
			if len(q.jobs) != 0 {
				t.Fatalf("jobs before the window: %+v", q.jobs)
			}
			p.Advance(time.Second)
			mark("shop-1") // at the window: the next one's
			p.Advance(late + time.Hour)

			if table.puts != 103 || table.kept != 100 {
				t.Fatalf("puts %d, of which %d found the item: want 103 and 100", table.puts, table.kept)
			}
			got := map[string]int{}
			for _, j := range q.jobs {
				got[j.Tenant]++
				if !j.Window.Equal(window) {
					t.Fatalf("job %+v, want window %s", j, window)
				}
				if j.at.Before(window) || j.at.Sub(window) != late {
					t.Fatalf("job of %s queued at %s: want the window %s plus the TTL lateness %s", j.Tenant, j.at, window, late)
				}
			}
			if len(q.jobs) != 2 || got["shop-1"] != 1 || got["shop-2"] != 1 {
				t.Fatalf("jobs %+v: want one for shop-1 and one for shop-2", q.jobs)
			}

			// The next window: shop-1's activity at 03:00 Monday.
			p.Advance(7*24*time.Hour + late)
			if len(q.jobs) != 3 || q.jobs[2].Tenant != "shop-1" || !q.jobs[2].Window.Equal(window.AddDate(0, 0, 7)) {
				t.Fatalf("jobs %+v: want shop-1's next window", q.jobs)
			}
			if it, ok := p.Item(job.Item{Tenant: "shop-1", Window: window}.Key()); !ok || it[job.StateAttr] != job.FiredState || it[contract.DefaultDeliveredAtAttr] == "" {
				t.Fatalf("shop-1's item %v: want fired and delivered", it)
			}
		})
	}
}
