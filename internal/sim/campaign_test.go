package sim

import (
	"fmt"
	"reflect"
	"testing"
)

// TestCampaignHistories runs seeded campaign histories under the
// workload's faults; C1 to C4 must hold on each, and every fault must
// show up somewhere, or the simulation tests less than it claims (make sim
// runs 10,000: go run ./cmd/sim -workload campaigns).
func TestCampaignHistories(t *testing.T) {
	n := histories(t, campaignSeeds)
	s := RunMany(Config{Workload: WorkloadCampaigns}, 1, n, 0)
	for i, r := range s.Failed {
		if i == 5 {
			break
		}
		t.Errorf("seed %d: %s (replay: go run ./cmd/sim -workload campaigns -seed %d)", r.Seed, r.Violations[0], r.Seed)
	}
	t.Logf("%d histories, %d sends: %d sent, %d failed, %d cancelled; faults %v", s.Histories, s.Sends, s.Sent, s.SendsFailed, s.SendsCancelled, s.Faults)
	if s.SendsCancelled == 0 {
		t.Errorf("no send was cancelled in %d histories", n)
	}
	for _, f := range []Fault{FaultProvisionKilled, FaultSchedulerThrottled, FaultSchedulerError, FaultSchedulerResponseLost,
		FaultFiredTwice, FaultFiredEarly, FaultFiredLate, FaultFireDropped, FaultCrashAfterClaim, FaultCrashAfterPublish,
		FaultPublishFailed, FaultBounce, FaultCampaignCancelled,
		FaultSendRecovered, FaultScheduleRecreated, FaultSendRetimed, FaultSendDispatched} {
		if s.Faults[f] == 0 {
			t.Errorf("no %s in %d histories", f, n)
		}
	}
}

// TestCampaignDeterministic: a campaign seed replays the same history,
// trace included.
func TestCampaignDeterministic(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 7, 42, 12345} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			var ta, tb []string
			a := Run(Config{Seed: seed, Workload: WorkloadCampaigns, Trace: func(l string) { ta = append(ta, l) }})
			b := Run(Config{Seed: seed, Workload: WorkloadCampaigns, Trace: func(l string) { tb = append(tb, l) }})
			if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(ta, tb) {
				t.Errorf("seed %d gave two different histories:\n%+v\n%+v", seed, a, b)
			}
		})
	}
}
