package sim

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/deferredjobs/writer"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/deferredjobs/jobdispatch"
)

// The deferred jobs' invariants.
const (
	invJobOnce     = "J1"
	invJobOnTime   = "J2"
	invJobNoRearm  = "J3"
	invJobLive     = "J4"
	jobLossInv     = 5
	jobWriterCond  = "attribute_not_exists(#t)"
	firstJobWindow = "2030-01-07T03:00:00Z" // the Monday 03:00 after start
)

// jobWindow is one tenant's window as the history saw it.
type jobWindow struct {
	key contract.Key
	at  time.Time
	// created: a MarkActivity's put created the item; marks counts the
	// activities that named the window.
	created bool
	marks   int
	jobs    []time.Time
}

// jobs is a deferred-jobs history: tenants' activities marked with the
// real writer (deferredjobs/writer) over a DynamoDB stand-in (jobsTable)
// on the adopter's table, and the real dispatcher (jobdispatch) queuing
// jobs as the core's target.
type jobs struct {
	*adopter
	writer  *writer.Writer
	tenants []string
	windows map[contract.Key]*jobWindow
}

// runDeferredJobs simulates one deferred-jobs history: it starts up to 3
// hours before a window (Monday 03:00 UTC) and marks activity of a few
// tenants, many times each, before and after it (after it: the next
// window's; sometimes a late write of an activity from before it), and
// checks:
//
//   - J1 (exactly once): one job per tenant and window that saw activity
//     (one more per crash after the job was sent or lost record of it),
//     none for a window without activity;
//   - J2 (never early): no job before its window;
//   - J3 (no re-arm): no write takes an item the core fired back to an
//     armed state (a late activity finds it and changes nothing);
//   - J4 (liveness): every window that saw activity has its job by the
//     end, its item Fired and marked delivered;
//   - J5: nothing is lost or loops (stream, queue, firings; as I4).
func runDeferredJobs(cfg Config) Result {
	window, _ := time.Parse(time.RFC3339, firstJobWindow)
	rng0 := newCore(cfg).rng // the same seed picks the start
	begin := window.Add(-time.Duration(5*60+rng0.Intn(3*3600)) * time.Second)
	a := newAdopter(cfg, job.Schema(), "J", jobLossInv, begin)
	j := &jobs{adopter: a, windows: map[contract.Key]*jobWindow{}}
	for i := range 2 + a.rng.Intn(5) {
		j.tenants = append(j.tenants, fmt.Sprintf("shop-%d", i))
	}
	w, err := writer.New(&jobsTable{j: j}, "DeferredJobs", job.DefaultWeekly)
	must(err)
	j.writer = w.WithClock(a.clock.Now)
	d, err := jobdispatch.NewDispatcher(jobQueue{j}, discard, noMetrics{}, jobdispatch.Metrics{})
	must(err)
	a.target = fire.DeliverFunc(func(ctx context.Context, p contract.Payload) error {
		return d.Handle(ctx, []byte(a.schema.EncodePayload(p)))
	})
	busy := true
	a.step = func() time.Duration {
		if job.DefaultWeekly.Next(a.clock.Now()).Sub(a.clock.Now()) < 10*time.Minute {
			return time.Duration(1+a.rng.Intn(20)) * time.Second // close to a window: its firing, early or not
		}
		if busy {
			return time.Duration(1+a.rng.Intn(300)) * time.Second
		}
		return time.Duration(1+a.rng.Intn(900)) * time.Second
	}
	a.history(40+a.rng.Intn(120), j.op)
	busy = false
	j.check()
	return a.res
}

func (j *jobs) window(k contract.Key, at time.Time) *jobWindow {
	w, ok := j.windows[k]
	if !ok {
		w = &jobWindow{key: k, at: at}
		j.windows[k] = w
	}
	return w
}

// op marks one activity of a tenant, now or (a late write) as of a
// moment before the last window that passed.
func (j *jobs) op() {
	tenant := j.tenants[j.rng.Intn(len(j.tenants))]
	wr := j.writer
	now := j.clock.Now()
	last := job.DefaultWeekly.Next(now).AddDate(0, 0, -7)
	if last.After(j.epoch) && j.rng.Float64() < 0.15 {
		at := last.Add(-time.Duration(1+j.rng.Intn(7200)) * time.Second)
		wr = wr.WithClock(func() time.Time { return at })
		j.res.Faults[FaultLateActivity]++ // an action, not a failure
	}
	it, err := wr.MarkActivity(j.ctx, tenant)
	if err != nil && injected(err) {
		it, err = wr.MarkActivity(j.ctx, tenant)
	}
	j.tracef("activity of %s: window %s: %v", tenant, it.WindowKey(), err)
	switch {
	case err == nil:
		j.window(it.Key(), it.Window).marks++
		if _, ok := j.items.Attrs(it.Key()); !ok {
			j.violate(invJobLive, "MarkActivity of %s succeeded but the table holds no item for %s", tenant, it.WindowKey())
		}
	case !injected(err):
		j.violate(j.lossInv, "MarkActivity of %s failed without an injected fault: %v", tenant, err)
	}
}

func (j *jobs) check() {
	keys := make([]contract.Key, 0, len(j.windows))
	for k := range j.windows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a].String() < keys[b].String() })
	for _, k := range keys {
		w := j.windows[k]
		if w.created {
			j.res.Items++
		}
		j.res.Deliveries += len(w.jobs)
		for _, at := range w.jobs {
			if !w.created {
				j.violate(invJobOnce, "a job for %s, a window without activity", k)
			}
			if at.Before(w.at) {
				j.violate(invJobOnTime, "the job of %s was queued %s before its window", k, w.at.Sub(at))
			}
		}
		if !w.created {
			continue
		}
		cur, found, err := j.items.Get(j.ctx, k)
		switch {
		case len(w.jobs) == 0:
			j.violate(invJobLive, "%s saw %d activities and got no job", k, w.marks)
		case len(w.jobs) > 1+j.dupAllowed[k]:
			j.violate(invJobOnce, "%s got %d jobs (%d allowed by crashes)", k, len(w.jobs), 1+j.dupAllowed[k])
		case err != nil || !found || cur.State != job.FiredState || !cur.Delivered:
			j.violate(invJobLive, "the item of %s ends %+v, want Fired and delivered", k, cur)
		}
	}
	for _, c := range j.reArmed() {
		j.violate(invJobNoRearm, "a write re-armed %s, which the core had fired (record %s)", c.Key, c.EventID)
	}
}

// jobQueue is the job queue: it records each job sent, with the
// target's faults.
type jobQueue struct{ j *jobs }

func (q jobQueue) Send(_ context.Context, jb job.Job) error {
	j := q.j
	it := job.Item{Tenant: jb.Tenant, Window: jb.Window}
	w := j.window(it.Key(), it.Window)
	return j.effect(it.Key(), func() {
		w.jobs = append(w.jobs, j.clock.Now())
		j.tracef("job of %s queued", it.Key())
	})
}

// jobsTable is DynamoDB as the writer sees it, on the adopter's table:
// it evaluates MarkActivity's condition exactly and refuses any other,
// and injects refused calls and lost answers. WriteAlways drops the
// condition.
type jobsTable struct{ j *jobs }

var _ writer.PutAPI = (*jobsTable)(nil)

func (t *jobsTable) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	j := t.j
	if aws.ToString(in.ConditionExpression) != jobWriterCond || in.ExpressionAttributeNames["#t"] != job.TenantAttr {
		return nil, fmt.Errorf("dynamodb PutItem: unsupported condition %q %v", aws.ToString(in.ConditionExpression), in.ExpressionAttributeNames)
	}
	if j.inject(FaultTableCallFailed, 0.05) {
		return nil, fmt.Errorf("dynamodb PutItem: %w", errThrottled)
	}
	attrs := strAttrs(in.Item)
	k := contract.Key{Partition: attrs[job.TenantAttr], Sort: attrs[job.WindowAttr]}
	if _, ok := j.items.Attrs(k); ok && !j.cfg.Mutation.Adopter.WriteAlways {
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	must(j.items.Put(attrs))
	at, err := time.Parse(time.RFC3339, attrs[job.WindowAttr])
	must(err)
	j.window(k, at).created = true
	if j.inject(FaultTableAnswerLost, 0.04) {
		return nil, fmt.Errorf("dynamodb PutItem: %w", errTimeout)
	}
	return &dynamodb.PutItemOutput{}, nil
}
