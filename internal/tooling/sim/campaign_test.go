package sim

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// TestCampaignHistories runs seeded campaign histories under the
// workload's faults; C1 to C5 must hold on each, and every fault must
// show up somewhere, or the simulation tests less than it claims (make sim
// runs 10,000: go run ./cmd/sim -workload campaigns).
func TestCampaignHistories(t *testing.T) {
	n := histories(t, campaignSeeds)
	all := map[Fault]int{}
	for _, l := range timerkind.Names() {
		t.Run(string(l), func(t *testing.T) {
			s := RunMany(Config{Workload: WorkloadCampaigns, Timer: l}, 1, n, 0)
			for i, r := range s.Failed {
				if i == 5 {
					break
				}
				t.Errorf("seed %d: %s (replay: go run ./cmd/sim -workload campaigns -timer %s -seed %d)", r.Seed, r.Violations[0], l, r.Seed)
			}
			t.Logf("%d histories, %d sends: %d sent, %d failed, %d cancelled; faults %v", s.Histories, s.Sends, s.Sent, s.SendsFailed, s.SendsCancelled, s.Faults)
			if s.SendsCancelled == 0 {
				t.Errorf("no send was cancelled in %d histories", n)
			}
			for f, k := range s.Faults {
				all[f] += k
			}
			// Each timer's own: fires early on the EventBridge Scheduler
			// (and late, twice); a duplicate execution on Step Functions;
			// a late sweep and a redelivered deletion on TTL.
			for _, f := range map[timerspec.Name][]Fault{
				timerspec.EventBridgeScheduler: {FaultFiredTwice, FaultFiredEarly, FaultFiredLate},
				timerspec.StepFunctions:        {FaultDuplicateExecution, FaultFiredLate},
				timerspec.TTL:                  {FaultStreamRedeliveredTTL, FaultTTLDeleteLate},
			}[l] {
				if s.Faults[f] == 0 {
					t.Errorf("no %s in %d histories", f, n)
				}
			}
		})
	}
	// The rest, on some timer (a recreated schedule is rare on one).
	for _, f := range []Fault{FaultProvisionKilled, FaultSchedulerThrottled, FaultSchedulerError, FaultSchedulerResponseLost,
		FaultFireDropped, FaultCrashAfterClaim, FaultCrashAfterPublish,
		FaultPublishFailed, FaultBounce, FaultCampaignCancelled, FaultSenderRemoved,
		FaultSendRecovered, FaultScheduleRecreated, FaultSendRetimed, FaultSendDispatched} {
		if all[f] == 0 {
			t.Errorf("no %s in %d histories on each timer", f, n)
		}
	}
}

// TestCampaignSendBeforeALateCancel: in the history below the send of
// c1-00003 fires in the tick of the cancel's planned time and runs
// before the cancel (a reconciler pass that moves the clock on delays a
// cancel so too). The send was claimed after the cancel's planned time
// but before the campaign was marked Cancelled, so C3 holds: it is
// measured from when the cancel ran, not from when it was planned.
func TestCampaignSendBeforeALateCancel(t *testing.T) {
	var trace []string
	r := Run(Config{Seed: 5719, Workload: WorkloadCampaigns, Timer: timerspec.EventBridgeScheduler,
		Trace: func(l string) { trace = append(trace, l) }})
	if len(r.Violations) > 0 {
		t.Fatalf("seed 5719: %v", r.Violations)
	}
	var planned time.Duration
	sent, cancelled := -1, -1
	for i, l := range trace {
		at, rest, _ := strings.Cut(l, " ")
		if p, ok := strings.CutPrefix(rest, "cancel planned at "); ok {
			planned, _ = time.ParseDuration(p)
		}
		if d, _ := time.ParseDuration(at); strings.HasPrefix(rest, "deliver c1-00003: sent") && planned > 0 && d > planned {
			sent = i
		}
		if strings.HasPrefix(rest, "cancel {") {
			cancelled = i
		}
	}
	if sent < 0 || cancelled < sent {
		t.Fatalf("the history changed (send at line %d, cancel at line %d): pick a seed where a send after the cancel's planned time precedes the cancel", sent, cancelled)
	}
}

// TestCampaignDeterministic: a campaign seed replays the same history,
// trace included.
func TestCampaignDeterministic(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 7, 42, 12345} {
		l := timerkind.Names()[int(seed)%len(timerkind.Names())]
		t.Run(fmt.Sprint(seed, l), func(t *testing.T) {
			var ta, tb []string
			a := Run(Config{Seed: seed, Workload: WorkloadCampaigns, Timer: l, Trace: func(l string) { ta = append(ta, l) }})
			b := Run(Config{Seed: seed, Workload: WorkloadCampaigns, Timer: l, Trace: func(l string) { tb = append(tb, l) }})
			if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(ta, tb) {
				t.Errorf("seed %d gave two different histories:\n%+v\n%+v", seed, a, b)
			}
		})
	}
}

// noIdempotency is a mutant sender that keeps no record of what it sent:
// a repeated send goes out again, under a key of its own.
type noIdempotency struct {
	campaign.Sender
	seen map[string]int
}

func (s *noIdempotency) Send(ctx context.Context, m campaign.Message) (campaign.Receipt, error) {
	k := m.IdempotencyKey
	if n := s.seen[k]; n > 0 {
		m.IdempotencyKey = fmt.Sprintf("%s#%d", k, n)
	}
	rc, err := s.Sender.Send(ctx, m)
	if err == nil {
		s.seen[k]++
	}
	return rc, err
}

func (s *noIdempotency) Sent(_ context.Context, key string) (campaign.Receipt, error) {
	return campaign.Receipt{}, fmt.Errorf("%s: %w", key, campaign.ErrNotSent)
}

// allowAll is a mutant sender check: every owner may send.
type allowAll struct{}

func (allowAll) Check(context.Context, string) (campaign.Verdict, error) {
	return campaign.Allow(), nil
}

// TestCampaignMutants: each mutant breaks one campaign guarantee, and the
// simulation catches it with the invariant that guards it.
func TestCampaignMutants(t *testing.T) {
	skipUnderRace(t)
	for _, tc := range []struct {
		m   Mutation
		inv string
		// timers the mutant shows on: nil, every one.
		timers []timerspec.Name
	}{
		{Mutation{Name: "the sender keeps no idempotency record", CampaignSender: func(s campaign.Sender) campaign.Sender {
			return &noIdempotency{Sender: s, seen: map[string]int{}}
		}}, invExactlyOnce, nil},
		{Mutation{Name: "the services never refuse a removed sender",
			CampaignOwners: func(campaign.SenderCheck) campaign.SenderCheck { return allowAll{} }}, invRemoved, nil},
		// Only the EventBridge Scheduler fires early.
		{Mutation{Name: "the send worker takes an early fire for one on time", CampaignWorkerAhead: time.Minute}, invOnTime,
			[]timerspec.Name{timerspec.EventBridgeScheduler}},
	} {
		timers := tc.timers
		if timers == nil {
			timers = timerkind.Names()
		}
		for _, l := range timers {
			t.Run(tc.m.Name+"/"+string(l), func(t *testing.T) {
				s := RunMany(Config{Workload: WorkloadCampaigns, Timer: l, Mutation: tc.m}, 1, 60, 0)
				caught := 0
				for _, r := range s.Failed {
					for _, v := range r.Violations {
						if v.Invariant == tc.inv {
							caught++
							break
						}
					}
				}
				if caught == 0 {
					t.Fatalf("no history of %d broke %s", s.Histories, tc.inv)
				}
				t.Logf("%d of %d histories broke %s, e.g. seed %d: %s", caught, s.Histories, tc.inv, s.Failed[0].Seed, s.Failed[0].Violations[0])
			})
		}
	}
}

// An owner who cancels after leaving the sender group, before any
// service was refused them, ends Cancelled with their own reason: C5
// holds (in these seeds the owner does so; C5 once reported such seeds).
func TestOwnerCancelBeforeTheServicesLearnOfTheRemoval(t *testing.T) {
	for _, tc := range []struct {
		timer timerspec.Name
		seed  int64
	}{
		{timerspec.EventBridgeScheduler, 1880}, {timerspec.EventBridgeScheduler, 4903}, {timerspec.EventBridgeScheduler, 7201},
		{timerspec.EventBridgeScheduler, 9089}, {timerspec.StepFunctions, 1880}, {timerspec.TTL, 1880},
	} {
		removed, cancelledAfter := false, false
		r := Run(Config{Workload: WorkloadCampaigns, Timer: tc.timer, Seed: tc.seed, Trace: func(l string) {
			removed = removed || strings.Contains(l, "removed from the sender group")
			cancelledAfter = cancelledAfter || removed && strings.Contains(l, " cancel {")
		}})
		if r.Failed() {
			t.Errorf("%s seed %d: %v", tc.timer, tc.seed, r.Violations)
		}
		if !cancelledAfter {
			t.Errorf("%s seed %d: the history changed (no cancel after the owner's removal): pick another seed", tc.timer, tc.seed)
		}
	}
}

// A cancel planned after the last send refuses a Completed campaign: the
// history holds (no liveness break, and no cancel for C3 to measure
// against), in these seeds where every send ends before it.
func TestCancelOfACompletedCampaign(t *testing.T) {
	for _, tc := range []struct {
		timer timerspec.Name
		seed  int64
	}{{timerspec.EventBridgeScheduler, 3523}, {timerspec.StepFunctions, 6393}} {
		refused := false
		r := Run(Config{Workload: WorkloadCampaigns, Timer: tc.timer, Seed: tc.seed, Trace: func(l string) {
			refused = refused || strings.Contains(l, "cancel refused")
		}})
		if r.Failed() {
			t.Errorf("%s seed %d: %v", tc.timer, tc.seed, r.Violations)
		}
		if !refused {
			t.Errorf("%s seed %d: the history changed (no refused cancel): pick another seed", tc.timer, tc.seed)
		}
	}
}
