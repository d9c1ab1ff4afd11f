package sim

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// adopterSeeds is how many histories of each adopter's workload
// TestAdopterHistories runs per timer without -race (make sim runs
// 10,000).
const adopterSeeds = 100

// TestAdopterHistories runs seeded future-events and deferred-jobs
// histories on every timer under the workloads' faults; F1 to F6 and J1
// to J5 must hold on each, and every fault asked for must show up, or
// the simulation tests less than it claims.
func TestAdopterHistories(t *testing.T) {
	common := []Fault{FaultStreamReplay, FaultEnqueueRejected, FaultAckLost, FaultWorkerCrash, FaultSchedulerThrottled,
		FaultExpireWriteFailed, FaultPublishFailed, FaultCrashAfterPublish, FaultMarkNotifiedFailed,
		FaultReconcilerInterleaved, FaultTimerLost, FaultTableCallFailed, FaultTableAnswerLost}
	for _, tc := range []struct {
		w    Workload
		want []Fault
	}{
		{WorkloadFutureEvents, append([]Fault{FaultEventCancelled, FaultUnregisteredTarget, FaultDeadlineRace, FaultDLQRedriven}, common...)},
		{WorkloadDeferredJobs, append([]Fault{FaultLateActivity}, common...)},
	} {
		// The workload's faults must show up on some timer (under -race
		// its 12 seeds per timer are few), each timer's own on it.
		union := map[Fault]int{}
		for _, timer := range timerkind.Names() {
			t.Run(fmt.Sprintf("%s on %s", tc.w, timer), func(t *testing.T) {
				n := histories(t, adopterSeeds)
				s := RunMany(Config{Workload: tc.w, Timer: timer}, 1, n, 0)
				for i, r := range s.Failed {
					if i == 5 {
						break
					}
					t.Errorf("seed %d: %s (replay: go run ./cmd/sim -workload %s -timer %s -seed %d)", r.Seed, r.Violations[0], tc.w, timer, r.Seed)
				}
				t.Logf("%d histories: %d items, %d target runs; faults %v", s.Histories, s.Items, s.Deliveries, s.Faults)
				if s.Items == 0 || s.Deliveries == 0 {
					t.Errorf("%d items and %d target runs in %d histories", s.Items, s.Deliveries, n)
				}
				own := []Fault{(&core{cfg: Config{Timer: timer}}).duplicateFault()}
				switch timer {
				case timerspec.EventBridgeScheduler:
					own = append(own, FaultFiredEarly, FaultFiredLate)
				case timerspec.StepFunctions:
					own = append(own, FaultFiredLate)
				case timerspec.TTL:
					own = append(own, FaultTTLDeleteLate)
				}
				for _, f := range own {
					if s.Faults[f] == 0 {
						t.Errorf("no %s in %d histories", f, n)
					}
				}
				for f, v := range s.Faults {
					union[f] += v
				}
			})
		}
		for _, f := range tc.want {
			if union[f] == 0 {
				t.Errorf("%s: no %s on any timer", tc.w, f)
			}
		}
	}
}

// TestAdopterDeterministic: an adopter's seed replays the same history,
// trace included.
func TestAdopterDeterministic(t *testing.T) {
	for _, w := range []Workload{WorkloadFutureEvents, WorkloadDeferredJobs} {
		for _, seed := range []int64{1, 7, 42} {
			t.Run(fmt.Sprint(w, seed), func(t *testing.T) {
				var ta, tb []string
				a := Run(Config{Seed: seed, Workload: w, Timer: timerspec.StepFunctions, Trace: func(l string) { ta = append(ta, l) }})
				b := Run(Config{Seed: seed, Workload: w, Timer: timerspec.StepFunctions, Trace: func(l string) { tb = append(tb, l) }})
				if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(ta, tb) {
					t.Errorf("seed %d gave two different histories", seed)
				}
			})
		}
	}
}

// TestAdopterMutants: each mutant breaks one rule of an adopter (its
// client's or writer's condition, its target's registration, or the
// core's claim, clock or reconciler under it) and the simulation
// catches it with the invariant that guards it: every F and J invariant
// is shown able to fail.
func TestAdopterMutants(t *testing.T) {
	skipUnderRace(t)
	for _, tc := range []struct {
		name string
		w    Workload
		m    AdopterMutation
		inv  string
		// dedup: the FIFO deduplication id is unique per send (the task
		// workload's I4 mutant), so a replayed record is queued again.
		dedup bool
	}{
		{"events: the claim writes without its condition", WorkloadFutureEvents, AdopterMutation{ClaimAlways: true}, invEventOnce, false},
		{"events: the core's clock runs a minute ahead", WorkloadFutureEvents, AdopterMutation{ClockAhead: time.Minute}, invEventOnTime, false},
		{"events: Cancel deletes without its condition", WorkloadFutureEvents, AdopterMutation{CancelAlways: true}, invEventCancelled, false},
		{"events: the dispatcher allows every target", WorkloadFutureEvents, AdopterMutation{AllTargets: true}, invEventRefused, false},
		{"events: the reconciler sees no item", WorkloadFutureEvents, AdopterMutation{NoReconcile: true}, invEventLive, false},
		{"events: deduplication by send, not by stream record", WorkloadFutureEvents, AdopterMutation{}, "F6", true},
		{"jobs: deduplication by send, not by stream record", WorkloadDeferredJobs, AdopterMutation{}, "J5", true},
		{"jobs: the claim writes without its condition", WorkloadDeferredJobs, AdopterMutation{ClaimAlways: true}, invJobOnce, false},
		{"jobs: the core's clock runs a minute ahead", WorkloadDeferredJobs, AdopterMutation{ClockAhead: time.Minute}, invJobOnTime, false},
		{"jobs: MarkActivity puts without its condition", WorkloadDeferredJobs, AdopterMutation{WriteAlways: true}, invJobNoRearm, false},
		{"jobs: the reconciler sees no item", WorkloadDeferredJobs, AdopterMutation{NoReconcile: true}, invJobLive, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Mutation{Name: tc.name, Adopter: tc.m}
			if tc.dedup {
				m.DedupID = func(_ cancel.Message, n int) string { return fmt.Sprintf("send-%d", n) }
			}
			s := RunMany(Config{Workload: tc.w, Mutation: m}, 1, 60, 0)
			caught := 0
			var example Violation
			for _, r := range s.Failed {
				for _, v := range r.Violations {
					if v.Invariant == tc.inv {
						caught++
						example = v
						break
					}
				}
			}
			if caught == 0 {
				t.Fatalf("no history of %d broke %s (%d failed otherwise)", s.Histories, tc.inv, len(s.Failed))
			}
			t.Logf("%d of %d histories broke %s, e.g. %s", caught, s.Histories, tc.inv, example)
		})
	}
}
