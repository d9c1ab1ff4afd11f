package bench

import (
	"math"
	"slices"
	"testing"
)

func TestQuantile(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{nil, 0.5, 0},
		{[]float64{7}, 0.25, 7},
		{[]float64{4, 1, 3, 2}, 0.5, 2.5},
		{[]float64{1, 2, 3, 4, 5}, 0.25, 2},
		{[]float64{1, 2, 3, 4, 5}, 0.75, 4},
		{[]float64{1, 2}, 0.25, 1.25},
		{[]float64{1, 2, 3}, 1, 3},
	} {
		if got := Quantile(tc.xs, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Quantile(%v, %v) = %v, want %v", tc.xs, tc.q, got, tc.want)
		}
	}
}

func TestPairedStats(t *testing.T) {
	// Rounds slowed by the load slow both runs of the round: pairing
	// keeps the ratio of every resample at 1.2, so the interval is a point,
	// where unpaired resampling would spread it widely.
	load := []float64{1, 3, 1.5, 2, 1, 4, 1.2, 2.5, 1, 1.1}
	var fn, floor []float64
	for _, l := range load {
		fn, floor = append(fn, 12*l), append(floor, 10*l)
	}
	for _, tc := range []struct {
		name             string
		p                PairedInit
		ratio, lo, hi    float64
		runs             int
		within           string
		wantWideInterval bool
	}{
		{"paired load", PairedInit{Floor: "f", Fn: fn, FloorMs: floor}, 1.2, 1.2, 1.2, 10, "**no**", false},
		{"equal", PairedInit{Floor: "f", Fn: []float64{10, 10, 10}, FloorMs: []float64{10, 10, 10}}, 1, 1, 1, 3, "yes", false},
		{"noisy, at the budget", PairedInit{Floor: "f", Fn: []float64{10, 11, 12, 9, 10.5, 13, 10}, FloorMs: []float64{10, 10, 10, 10, 10, 10, 10}},
			1.05, 0, 0, 7, "yes (interval reaches", true},
		{"a failed round is dropped from both", PairedInit{Floor: "f", Fn: []float64{10, 10}, FloorMs: []float64{5}}, 2, 2, 2, 1, "**no**", false},
		{"nothing measured", PairedInit{Floor: "f"}, 0, 0, 0, 0, "–", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.p.Stats("fn")
			if s.Runs != tc.runs || math.Abs(s.Ratio-tc.ratio) > 1e-9 {
				t.Fatalf("runs %d ratio %v, want %d %v", s.Runs, s.Ratio, tc.runs, tc.ratio)
			}
			if tc.wantWideInterval {
				if !(s.RatioLo < s.Ratio && s.Ratio < s.RatioHi && s.RatioHi > InitBudget) {
					t.Errorf("interval %v–%v around %v: want it to reach above %v", s.RatioLo, s.RatioHi, s.Ratio, InitBudget)
				}
			} else if math.Abs(s.RatioLo-tc.lo) > 1e-9 || math.Abs(s.RatioHi-tc.hi) > 1e-9 {
				t.Errorf("interval %v–%v, want %v–%v", s.RatioLo, s.RatioHi, tc.lo, tc.hi)
			}
			if w := s.Within(InitBudget); len(w) < len(tc.within) || w[:len(tc.within)] != tc.within {
				t.Errorf("Within = %q, want %q…", w, tc.within)
			}
			if again := tc.p.Stats("fn"); again != s {
				t.Errorf("not deterministic: %+v then %+v", s, again)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		s    PairedStats
		want string
	}{
		{PairedStats{Runs: 30, Ratio: 1.05, RatioLo: 1.0, RatioHi: 1.09}, "yes"},
		{PairedStats{Runs: 30, Ratio: 1.05, RatioLo: 1.0, RatioHi: 1.12}, "yes (interval reaches 1.12×)"},
		{PairedStats{Runs: 30, Ratio: 1.12, RatioLo: 1.08, RatioHi: 1.16}, "**no** (interval from 1.08×)"},
		{PairedStats{Runs: 30, Ratio: 1.2, RatioLo: 1.15, RatioHi: 1.25}, "**no**"},
		{PairedStats{Runs: 30, Ratio: 1.1, RatioLo: 1.1, RatioHi: 1.1}, "yes"},
	} {
		if got := tc.s.Within(1.1); got != tc.want {
			t.Errorf("%+v: Within = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestPlanRound(t *testing.T) {
	fns := []string{"api", "expiry", "presignup", "ttlwatch"}
	refs := []string{RefBare, RefPythonBare}
	reverse := func(n int) []int {
		p := make([]int, n)
		for i := range p {
			p[i] = n - 1 - i
		}
		return p
	}
	flip := false
	coin := func() bool { flip = !flip; return flip }
	units := PlanRound(fns, refs, reverse, coin)
	if len(units) != len(fns)+len(refs) {
		t.Fatalf("%d units, want %d: %v", len(units), len(fns)+len(refs), units)
	}
	if !slices.Equal(units[0], Unit{RefPythonBare}) {
		t.Errorf("units not in the permutation's order: %v", units)
	}
	seen := map[string]int{}
	floorFirst := 0
	for _, u := range units {
		for _, n := range u {
			seen[n]++
		}
		if len(u) == 2 {
			fn, floor := u[0], u[1]
			if slices.Contains(fns, u[1]) {
				fn, floor = u[1], u[0]
				floorFirst++
			}
			if floor != FunctionFloor(fn) {
				t.Errorf("%s paired with %q, want its floor %q", fn, floor, FunctionFloor(fn))
			}
		}
	}
	for _, fn := range fns {
		if seen[fn] != 1 {
			t.Errorf("%s runs %d times in the round, want once", fn, seen[fn])
		}
	}
	// presignup's floor is bare, which also runs alone as a reference.
	if seen[RefBare] != 2 {
		t.Errorf("bare runs %d times, want 2 (alone and as presignup's floor)", seen[RefBare])
	}
	if floorFirst != 2 {
		t.Errorf("%d pairs ran their floor first, want 2 (the coin alternates)", floorFirst)
	}
}
