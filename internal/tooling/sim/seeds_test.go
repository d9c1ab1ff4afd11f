package sim

import "testing"

// raceSeeds is how many seeded histories each history test runs under the
// race detector (make test's unit step), from seed 1: a fixed few, to look
// for data races, at about a tenth of the speed. The same tests run their
// full numbers without -race in make test's sim step, and make sim runs
// 10,000 per timer and workload. Campaign histories use it too (seeds 1-12
// show every campaign fault), and the adopters' on each timer.
const raceSeeds = 12

// histories is how many seeded histories a test runs (seeds 1..n): full,
// 50 with -short, raceSeeds under -race. Every assertion holds for each:
// the invariants on every history, and the fault coverage (seeds 1..12
// inject every fault the tests ask for).
func histories(t *testing.T, full int) int {
	t.Helper()
	switch {
	case raceDetector:
		t.Logf("race detector: seeds 1-%d (without -race: 1-%d)", raceSeeds, full)
		return raceSeeds
	case testing.Short():
		return 50
	}
	return full
}

// skipUnderRace skips a test whose seed budget is its assertion (a mutant
// must be caught within it): it runs in full without -race.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("race detector: runs without -race (make test's sim step), where its seed budget holds")
	}
}

// campaignSeeds is how many campaign histories TestCampaignHistories runs
// without -race (make sim runs 10,000).
const campaignSeeds = 300
