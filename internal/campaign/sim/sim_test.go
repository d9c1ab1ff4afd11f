package sim

import (
	"os"
	"reflect"
	"strconv"
	"testing"
	_ "time/tzdata" // the zones, even on a machine without zoneinfo
)

// TestSimulation runs 2,000 seeded histories (CAMPAIGN_SIM_SEEDS=10000
// for more; 200 with -short or -race); CAMPAIGN_SIM_SEED=<n> replays one
// with its trace.
func TestSimulation(t *testing.T) {
	if v := os.Getenv("CAMPAIGN_SIM_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(seed, true)
		for _, l := range rep.Trace {
			t.Log(l)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", *rep)
		return
	}
	seeds := 2000
	if testing.Short() || raceEnabled {
		seeds = 200
	}
	if v, err := strconv.Atoi(os.Getenv("CAMPAIGN_SIM_SEEDS")); err == nil && v > 0 {
		seeds = v
	}
	var total Report
	for seed := range uint64(seeds) {
		rep, err := Run(seed, false)
		if err != nil {
			t.Fatal(err)
		}
		total.Tasks += rep.Tasks
		total.Finished += rep.Finished
		total.Failed += rep.Failed
		total.Cancelled += rep.Cancelled
		total.ProvisionRuns += rep.ProvisionRuns
		total.ProvisionCrash += rep.ProvisionCrash
		total.Throttles += rep.Throttles
		total.LostAnswers += rep.LostAnswers
		total.Fires += rep.Fires
		total.DuplicateFires += rep.DuplicateFires
		total.EarlyFires += rep.EarlyFires
		total.DLQ += rep.DLQ
		total.WorkerCrashes += rep.WorkerCrashes
		total.Recovered += rep.Recovered
		total.Dispatched += rep.Dispatched
		total.Recreated += rep.Recreated
		total.Retime += rep.Retime
	}
	t.Logf("%d histories, %d sends: %d finished, %d failed, %d cancelled; %d provisioning runs (%d killed), %d throttles, %d lost answers; %d fires (%d duplicated, %d early, %d to the DLQ); %d worker crashes, %d stale Running recovered, %d dispatched, %d schedules recreated, %d retimed",
		seeds, total.Tasks, total.Finished, total.Failed, total.Cancelled, total.ProvisionRuns, total.ProvisionCrash, total.Throttles, total.LostAnswers,
		total.Fires, total.DuplicateFires, total.EarlyFires, total.DLQ, total.WorkerCrashes, total.Recovered, total.Dispatched, total.Recreated, total.Retime)
	// Every fault must have happened somewhere, or the simulation tests
	// less than it claims.
	for name, n := range map[string]int{"killed provisioning runs": total.ProvisionCrash, "throttles": total.Throttles, "duplicate fires": total.DuplicateFires, "early fires": total.EarlyFires,
		"DLQ fires": total.DLQ, "worker crashes": total.WorkerCrashes, "recoveries": total.Recovered, "cancelled sends": total.Cancelled, "recreated schedules": total.Recreated, "retimed sends": total.Retime, "dispatched sends": total.Dispatched} {
		if n == 0 {
			t.Errorf("no %s in %d histories", name, seeds)
		}
	}
}

// TestReplayIsDeterministic: a seed run twice gives the same history, so
// a failing seed's replay shows what failed.
func TestReplayIsDeterministic(t *testing.T) {
	for seed := range uint64(100) {
		a, errA := Run(seed, true)
		b, errB := Run(seed, true)
		if (errA == nil) != (errB == nil) || !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: two runs differ:\n%+v\n%+v", seed, *a, *b)
		}
	}
}
