package sim

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// scaleFullEnv runs the 100,000-task scenarios too (they take a few
// seconds more; `make sim-scale` and `make sim` set it, and so does `make test`'s sim step).
const scaleFullEnv = "UNSCHEDULE_SCALE_FULL"

func scaleSizes(t *testing.T) []int {
	if os.Getenv(scaleFullEnv) != "" {
		return []int{10_000, 100_000}
	}
	t.Logf("100,000-task scenario skipped: set %s=1 to run it", scaleFullEnv)
	return []int{10_000}
}

// callBudget is what one run of the reconciler's defaults can afford:
// its budget at its rate.
var callBudget = int(reconcile.DefaultBudget.Seconds() * reconcile.DefaultRatePerSec)

// TestScaleRepairsDriftInOnePass: a table of pending tasks with 1% drift,
// of every kind, is fully repaired by one run of the default budget, and
// the run says so (completed, nothing left over).
func TestScaleRepairsDriftInOnePass(t *testing.T) {
	for _, n := range scaleSizes(t) {
		res := Scale(ScaleConfig{Seed: 1, Tasks: n, Drift: 0.01})
		run := res.Runs[0]
		t.Logf("%d tasks, drift %v: %d scheduler calls of %d, %v of %v virtual, %d tasks and %d schedules checked, "+
			"%d repaired, left over %d (%v wall)", n, res.Drifted, run.SchedulerCalls, callBudget, run.Took,
			reconcile.DefaultBudget, run.ItemsChecked, run.SchedulesChecked, run.Repaired(), run.LeftOver, res.Wall.Round(time.Millisecond))
		if !res.Repaired(0) {
			t.Errorf("%d tasks: still wrong after one run: %v", n, res.Unrepaired[0])
		}
		if !run.Completed || run.LeftOver != 0 || run.Errors != 0 {
			t.Errorf("%d tasks: run %+v, want a completed pass with nothing left over", n, run.Result)
		}
		if run.SchedulerCalls > callBudget || run.Took > reconcile.DefaultBudget {
			t.Errorf("%d tasks: %d calls in %v, over the budget of %d calls in %v", n, run.SchedulerCalls, run.Took,
				callBudget, reconcile.DefaultBudget)
		}
		if want := n / 100; run.Repaired() < want {
			t.Errorf("%d tasks: %d repairs, want at least %d", n, run.Repaired(), want)
		}
	}
}

// TestScaleUpgrade: the first runs after an upgrade find every item
// unconfirmed (written before Task.ScheduledFor). Each run still expires
// every overdue task first, reports what it left over, and confirms what
// it checked; in about N / (calls a run affords) runs every schedule is
// confirmed and passes fit one run again.
func TestScaleUpgrade(t *testing.T) {
	n := 10_000
	runs := n/callBudget + 3
	res := Scale(ScaleConfig{Seed: 2, Tasks: n, Drift: 0.01, Unconfirmed: true, Runs: runs})
	first := res.Runs[0]
	if res.Unrepaired[0][DriftOverdue] != 0 {
		t.Errorf("the first run left %d overdue tasks unexpired", res.Unrepaired[0][DriftOverdue])
	}
	if first.Completed || first.LeftOver < n/2 {
		t.Errorf("first run %+v: want it unfinished, with most of the table left over", first.Result)
	}
	done := -1
	for i, r := range res.Runs {
		t.Logf("run %d: %d calls, %d confirmed, left over %d, %d unconfirmed after, completed %v", i+1, r.SchedulerCalls,
			r.SchedulesConfirmed, r.LeftOver, res.Unconfirmed[i], r.Completed)
		// A resumed page may have lost items that left the index (the
		// overdue tasks expired), so a few tasks wait for the next pass.
		if done < 0 && r.Completed && r.LeftOver == 0 && res.Unconfirmed[i] == 0 && res.Repaired(i) {
			done = i
		}
	}
	if done < 0 {
		t.Fatalf("no run completed a pass with every schedule confirmed and repaired in %d runs", runs)
	}
	if last := res.Runs[len(res.Runs)-1]; !last.Completed || last.SchedulerCalls > n/100+1 {
		t.Errorf("after the upgrade a pass costs %d calls, want the listing's %d", last.SchedulerCalls, n/100)
	}
}

// noOverdueSweep is mutation (g): the reconciler's overdue sweep finds
// nothing, so overdue tasks wait for the tasks phase to reach them.
type noOverdueSweep struct{ task.PendingLister }

func (m noOverdueSweep) ListPending(ctx context.Context, req task.PendingRequest) (task.Page, error) {
	if !req.DueBy.IsZero() {
		return task.Page{}, nil
	}
	return m.PendingLister.ListPending(ctx, req)
}

// recordIgnored is mutation (h): the reconciler does not see the record
// of a confirmed schedule, so it reads every schedule back.
type recordIgnored struct{ task.PendingLister }

func (m recordIgnored) ListPending(ctx context.Context, req task.PendingRequest) (task.Page, error) {
	p, err := m.PendingLister.ListPending(ctx, req)
	for i := range p.Tasks {
		p.Tasks[i].ScheduledFor = time.Time{}
	}
	return p, err
}

// TestScaleMutantsAreCaught: each of the pass's economies is needed for
// the scale scenarios to hold.
func TestScaleMutantsAreCaught(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    ScaleConfig
		caught func(ScaleResult) bool
	}{
		{"(g) no overdue sweep: overdue tasks wait behind the upgrade's backlog",
			ScaleConfig{Seed: 2, Tasks: 10_000, Drift: 0.01, Unconfirmed: true,
				Pending: func(p task.PendingLister) task.PendingLister { return noOverdueSweep{p} }},
			func(r ScaleResult) bool { return r.Unrepaired[0][DriftOverdue] > 0 }},
		{"(h) every schedule read back: 1% drift no longer fits one run",
			ScaleConfig{Seed: 1, Tasks: 10_000, Drift: 0.01,
				Pending: func(p task.PendingLister) task.PendingLister { return recordIgnored{p} }},
			func(r ScaleResult) bool { return !r.Runs[0].Completed || !r.Repaired(0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Scale(tc.cfg)
			if !tc.caught(res) {
				t.Fatalf("mutant survived: run %+v, unrepaired %v", res.Runs[0].Result, res.Unrepaired[0])
			}
			t.Logf("caught: unrepaired after one run %v, left over %d", res.Unrepaired[0], res.Runs[0].LeftOver)
		})
	}
}

// ScaleConfig is a large table with some drift, repaired by the real
// reconciler alone, on the memory adapters and the virtual clock. It
// measures what the issue asks of a pass: that its cost follows the drift,
// not the table.
type ScaleConfig struct {
	Seed int64
	// Tasks is how many Pending tasks the table holds.
	Tasks int
	// Drift is the fraction of them that drifted, spread evenly over the
	// kinds; the orphans' Done tasks come on top of Tasks.
	Drift float64
	// Unconfirmed: no schedule recorded (Task.ScheduledFor), as the first
	// run after an upgrade finds the table.
	Unconfirmed bool
	// Reconcile configures the reconciler. Default: its defaults (a
	// 4-minute budget at 10 scheduler calls a second).
	Reconcile reconcile.Config
	// Runs is how many runs, an interval apart, to make. Default: 1.
	Runs int
	// Pending wraps the reconciler's listing of the pending index.
	Pending func(task.PendingLister) task.PendingLister
}

// DriftKind is one way a task and its schedule disagree.
type DriftKind string

// The kinds of drift a scale table holds, in the order tasks are given
// them (driftKinds).
const (
	DriftRepairMarked    DriftKind = "repair-marked"    // the API's schedule create failed and marked the task for repair
	DriftStaleReschedule DriftKind = "stale-reschedule" // the reschedule was dead-lettered: it fires at the old time
	DriftDeletedByHand   DriftKind = "deleted-by-hand"  // a confirmed schedule was deleted outside the app
	DriftOrphan          DriftKind = "orphan"           // the cancel of a completed task was dead-lettered
	DriftOverdue         DriftKind = "overdue"          // every expiry attempt failed: Pending, an hour overdue
)

var driftKinds = []DriftKind{DriftRepairMarked, DriftStaleReschedule, DriftDeletedByHand, DriftOrphan, DriftOverdue}

// Scale latencies of the table and notification calls, which the rate
// limiter does not pace: the virtual clock moves by them, so they spend
// the budget as they would in AWS.
const (
	scaleReadPage = 10 * time.Millisecond // one Query of the pending index
	scaleItemCall = 5 * time.Millisecond  // one GetItem or UpdateItem
	scaleExpire   = 40 * time.Millisecond // conditional write, SNS publish, record
)

// ScaleRun is one run's result and its virtual duration.
type ScaleRun struct {
	reconcile.Result
	Took time.Duration
}

// ScaleResult is what the runs did, and what is still wrong after each.
type ScaleResult struct {
	Runs []ScaleRun
	// Drifted counts the drifted tasks by kind.
	Drifted map[DriftKind]int
	// Unrepaired counts, after each run, the drifted tasks still wrong:
	// a Pending task with no schedule at its deadline, a schedule left of
	// a Done task, an overdue task not expired and notified.
	Unrepaired []map[DriftKind]int
	// Unconfirmed counts, after each run, the Pending tasks with a future
	// deadline that the table does not vouch for.
	Unconfirmed []int
	// Wall is the real time the scenario took (setup included).
	Wall time.Duration
}

// Repaired reports whether nothing drifted is left after run i.
func (r ScaleResult) Repaired(i int) bool {
	for _, n := range r.Unrepaired[i] {
		if n > 0 {
			return false
		}
	}
	return true
}

type scaleTask struct {
	t    task.Task
	kind DriftKind // "" when healthy
}

// Scale builds the table and runs the reconciler on it.
func Scale(cfg ScaleConfig) ScaleResult {
	began := time.Now()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(cfg.Seed))
	clock := inproc.NewClock(start)
	store, sched, outbox := memory.NewStore(), inmem.NewScheduler(), &memory.Outbox{}
	svc, err := task.InProcess(task.InProcessConfig{Store: store, Notifier: outbox, Clock: clock, Log: slog.New(slog.DiscardHandler)})
	must(err)
	ids := &simIDs{rng: rng}
	kinds := driftKinds
	drifted := int(float64(cfg.Tasks) * cfg.Drift)
	res := ScaleResult{Drifted: map[DriftKind]int{}}
	var all []scaleTask
	for i := range cfg.Tasks + drifted/len(kinds) {
		created := start.Add(-time.Duration(1+rng.Intn(30*24)) * time.Hour)
		t := task.Task{UserID: fmt.Sprintf("%s%012d", userPrefix, rng.Intn(cfg.Tasks/20+1)), TaskID: ids.NewID(created),
			Title: "t", Status: task.StatusPending, CreatedAt: created, UpdatedAt: created, ScheduleToken: ids.NewToken(),
			DueAt: start.Add(time.Duration(600+rng.Intn(30*24*3600)) * time.Second)}
		t.ScheduledFor = t.DueAt
		var kind DriftKind
		if i < drifted {
			kind = kinds[i%len(kinds)]
		}
		if i >= cfg.Tasks {
			kind = DriftOrphan // the orphans come on top of the Pending tasks
		} else if kind == DriftOrphan {
			kind = ""
		}
		schedule := task.ScheduleFor(t)
		has := true
		switch kind {
		case DriftRepairMarked:
			t.ScheduledFor, t.ScheduleRepair, has = time.Time{}, true, false
		case DriftStaleReschedule:
			schedule.At = t.DueAt.Add(-time.Duration(1+rng.Intn(3600)) * time.Second)
			schedule.Payload.Due = schedule.At
			t.ScheduledFor, t.UpdatedAt = time.Time{}, start.Add(-3*time.Hour)
		case DriftDeletedByHand:
			has = false
		case DriftOrphan:
			t.Status, t.CompletedAt, t.UpdatedAt = task.StatusDone, start.Add(-time.Hour), start.Add(-time.Hour)
		case DriftOverdue:
			t.DueAt = start.Add(-time.Hour)
			t.ScheduledFor, has = t.DueAt, false
		}
		if cfg.Unconfirmed {
			t.ScheduledFor = time.Time{}
		}
		store.Put(t)
		if has {
			must(sched.Arm(ctx, schedule))
		}
		if kind != "" {
			res.Drifted[kind]++
		}
		all = append(all, scaleTask{t: t, kind: kind})
	}

	var pending task.PendingLister = latentStore{store, clock}
	if cfg.Pending != nil {
		pending = cfg.Pending(pending)
	}
	r, err := reconcile.New(cfg.Reconcile, reconcile.Deps{Schema: task.Schema,
		Items: task.NewReconcileView(latentStore{store, clock}, pending), Scheduler: sched, Schedules: sched,
		Firer: task.FireByExpire{Expirer: latentExpirer{svc, clock}}, Checkpoints: &inmem.Checkpoints{},
		Clock: clock, Sleep: clock.Sleep, Log: slog.New(slog.DiscardHandler)})
	must(err)
	runs := max(cfg.Runs, 1)
	every := 30 * time.Minute
	for i := range runs {
		at := start.Add(time.Duration(i) * every)
		clock.Set(at)
		// Between runs, the schedules due fire and expire their tasks.
		for _, s := range sched.Fire(at) {
			req, err := task.DecodePayload([]byte(task.EncodePayload(s.Payload)))
			must(err)
			_, err = svc.Expire(ctx, req)
			must(err)
		}
		out, err := r.Run(ctx)
		must(err)
		res.Runs = append(res.Runs, ScaleRun{Result: out, Took: clock.Now().Sub(at)})
		res.Unrepaired = append(res.Unrepaired, unrepaired(ctx, store, sched, outbox, all))
		n := 0
		for _, t := range store.All() {
			if t.Status == task.StatusPending && t.DueAt.After(clock.Now()) && !t.ScheduleConfirmed() {
				n++
			}
		}
		res.Unconfirmed = append(res.Unconfirmed, n)
	}
	res.Wall = time.Since(began)
	return res
}

// unrepaired counts the drifted tasks that are still wrong.
func unrepaired(ctx context.Context, store *memory.Store, sched *inmem.Scheduler, outbox *memory.Outbox, all []scaleTask) map[DriftKind]int {
	out := map[DriftKind]int{}
	for _, x := range all {
		if x.kind == "" {
			continue
		}
		t, err := store.Get(ctx, x.t.UserID, x.t.TaskID)
		must(err)
		sc, has := sched.Lookup(task.ScheduleName(t.TaskID))
		var ok bool
		switch x.kind {
		case DriftOrphan:
			ok = !has
		case DriftOverdue:
			ok = t.Status == task.StatusExpired && !t.NotifiedAt.IsZero() && outbox.SentFor(t.TaskID) == 1
		default:
			ok = has && sc == task.ScheduleFor(t)
		}
		if !ok {
			out[x.kind]++
		}
	}
	return out
}

// latentStore is the memory store with DynamoDB's latency on the virtual
// clock.
type latentStore struct {
	*memory.Store
	clock *inproc.Clock
}

func (s latentStore) ListPending(ctx context.Context, req task.PendingRequest) (task.Page, error) {
	s.clock.Advance(scaleReadPage)
	return s.Store.ListPending(ctx, req)
}

func (s latentStore) Get(ctx context.Context, userID, taskID string) (task.Task, error) {
	s.clock.Advance(scaleItemCall)
	return s.Store.Get(ctx, userID, taskID)
}

func (s latentStore) MarkScheduled(ctx context.Context, userID, taskID string, dueAt time.Time) error {
	s.clock.Advance(scaleItemCall)
	return s.Store.MarkScheduled(ctx, userID, taskID, dueAt)
}

func (s latentStore) SetScheduleRepair(ctx context.Context, userID, taskID string, repair bool) error {
	s.clock.Advance(scaleItemCall)
	return s.Store.SetScheduleRepair(ctx, userID, taskID, repair)
}

// latentExpirer is the expiry use case with its calls' latency.
type latentExpirer struct {
	e     Expirer
	clock *inproc.Clock
}

func (e latentExpirer) Expire(ctx context.Context, req task.ExpireRequest) (task.ExpireOutcome, error) {
	e.clock.Advance(scaleExpire)
	return e.e.Expire(ctx, req)
}
