package sim

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/todo/task"
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
