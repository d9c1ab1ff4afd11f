package jobdispatch

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/internal/core/logfield/logfieldtest"
)

type fakeQueue struct {
	jobs []job.Job
	fail bool
}

func (q *fakeQueue) Send(_ context.Context, j job.Job) error {
	if q.fail {
		return errors.New("throttled")
	}
	q.jobs = append(q.jobs, j)
	return nil
}

type counts map[string]float64

func (c counts) Add(n string, v float64) { c[n] += v }

var names = Metrics{Queued: "Queued", Malformed: "Malformed", QueueFailed: "QueueFailed"}

func TestHandle(t *testing.T) {
	mon := time.Date(2027, 3, 1, 3, 0, 0, 0, time.UTC)
	payload := job.Schema().EncodePayload(contract.Payload{Key: job.Item{Tenant: "shop-1", Window: mon}.Key(), Due: mon})
	for _, tc := range []struct {
		name      string
		payload   string
		queueDown bool
		wantJobs  int
		wantErr   error
		want      counts
		line      string // the outcome's line, which names the item in logfield.Key ("": none)
	}{
		{"a fired item is one job", payload, false, 1, nil, counts{"Queued": 1}, "job queued"},
		{"a queue that refuses fails the firing (retried)", payload, true, 0, nil, counts{"QueueFailed": 1}, "queue refused a job"},
		{"a payload that is no job fails, counted", `{"pk":"x","sk":"y","dueAt":"2027-03-01T03:00:00Z"}`, false, 0, job.ErrInvalid, counts{"Malformed": 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, c := &fakeQueue{fail: tc.queueDown}, counts{}
			log, lines := logfieldtest.New()
			d, err := NewDispatcher(q, log, c, names)
			if err != nil {
				t.Fatal(err)
			}
			err = d.Handle(context.Background(), []byte(tc.payload))
			if (err != nil) != (tc.queueDown || tc.wantErr != nil) || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v", err)
			}
			if len(q.jobs) != tc.wantJobs || tc.wantJobs == 1 && (q.jobs[0].Tenant != "shop-1" || !q.jobs[0].Window.Equal(mon)) {
				t.Fatalf("jobs %+v", q.jobs)
			}
			if tc.line != "" {
				// As the writer spells the item's sort key, and the
				// operator queries it: unschedule why pk=shop-1,sk=2027-03-01T03:00:00Z.
				lines.RequireKey(t, tc.line, "shop-1/2027-03-01T03:00:00Z")
			}
			if len(c) != len(tc.want) {
				t.Fatalf("metrics %v, want %v", c, tc.want)
			}
			for k, v := range tc.want {
				if c[k] != v {
					t.Fatalf("metrics %v, want %v", c, tc.want)
				}
			}
		})
	}
}

func TestNewDispatcherNeedsItsParts(t *testing.T) {
	if _, err := NewDispatcher(nil, slog.Default(), counts{}, names); err == nil {
		t.Fatal("a nil queue must fail")
	}
}
