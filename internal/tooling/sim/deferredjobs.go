package sim

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/deferredjobs/writer"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/deferredjobs/jobdispatch"
)

// The deferred jobs' invariants (runDeferredJobs).
const (
	invJobOnce     = "J1"
	invJobOnTime   = "J2"
	invJobNoRearm  = "J3"
	invJobLive     = "J4"
	jobWriterCond  = "attribute_not_exists(#t)"
	firstJobWindow = "2030-01-07T03:00:00Z" // the Monday 03:00 after start
)

// jobWindow is one tenant's window as the history saw it: written when a
// MarkActivity's put created the item; marks counts the activities that
// named it, runs are its jobs.
type jobWindow struct {
	record
	marks int
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

// runDeferredJobs simulates one deferred-jobs history: from up to 3 hours
// before a window (Monday 03:00 UTC), a few tenants' activities before and
// after it (some written late), then J1 to J5
// (docs/simulation.md#future-events-and-deferred-jobs).
func runDeferredJobs(cfg Config) Result {
	window, _ := time.Parse(time.RFC3339, firstJobWindow)
	rng0 := newCore(cfg).rng // the same seed picks the start
	begin := window.Add(-time.Duration(5*60+rng0.Intn(3*3600)) * time.Second)
	a := newAdopter(cfg, job.Schema(), begin, invJobOnce, invJobOnTime, invJobLive, "J5")
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
	a.step = func() time.Duration {
		if job.DefaultWeekly.Next(a.clock.Now()).Sub(a.clock.Now()) < 10*time.Minute {
			return time.Duration(1+a.rng.Intn(20)) * time.Second // close to a window: its firing, early or not
		}
		return time.Duration(1+a.rng.Intn(300)) * time.Second
	}
	a.history(40+a.rng.Intn(120), j.op)
	j.check()
	return a.res
}

func (j *jobs) window(k contract.Key, at time.Time) *jobWindow {
	w, ok := j.windows[k]
	if !ok {
		w = &jobWindow{record: record{key: k, due: at}}
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
		j.checkRecord(&w.record, fmt.Sprintf("window %s (%d activities)", k, w.marks), w.written, true)
	}
	// A write that took an item from the fired state back to an armed one.
	all, _ := j.items.Changes(0)
	for _, c := range all {
		if c.Old != nil && c.New != nil && c.Old.State == j.schema.FiredState && j.schema.Armed(*c.New) {
			j.violate(invJobNoRearm, "a write re-armed %s, which the core had fired (record %s)", c.Key, c.EventID)
		}
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
		w.runs = append(w.runs, j.clock.Now())
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
	key := func(attrs map[string]string) contract.Key {
		return contract.Key{Partition: attrs[job.TenantAttr], Sort: attrs[job.WindowAttr]}
	}
	return t.j.putIfAbsent(in, jobWriterCond, "#t", job.TenantAttr, key, t.j.cfg.Mutation.Adopter.WriteAlways, func(attrs map[string]string) {
		at, err := time.Parse(time.RFC3339, attrs[job.WindowAttr])
		must(err)
		t.j.window(key(attrs), at).written = true
	})
}
