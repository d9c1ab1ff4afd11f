package bench

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
)

// ColdInit is the paired cold-init comparison: the Rounds kept (not the
// warm-up), and each function's PairedInit by name. In every round each
// function runs next to its own floor, so the two share the round's load.
type ColdInit struct {
	Rounds int
	Pairs  map[string]PairedInit
}

// PairedInit is one function's init and its floor's, in ms, one of each
// per round (a round where either failed is left out of both), and the
// same runs' CPU time (InitRun.CPUMs) when measured.
type PairedInit struct {
	Floor           string
	Fn              []float64
	FloorMs         []float64
	FnCPU, FloorCPU []float64
}

// Bootstrap settings: enough resamples that the interval's ends are
// stable to the second decimal of the ratio.
const (
	BootstrapResamples = 4000
	BootstrapLevel     = 0.95
)

// PairedStats summarises one PairedInit.
type PairedStats struct {
	Fn, Floor             string
	Runs                  int
	FnMedian, FloorMedian float64
	FnQ1, FnQ3            float64
	FloorQ1, FloorQ3      float64
	Ratio                 float64 // FnMedian / FloorMedian
	RatioLo, RatioHi      float64 // bootstrap interval of Ratio at BootstrapLevel
	// The same for the CPU time (zero when it was not measured).
	FnCPUMedian, FloorCPUMedian      float64
	CPURatio, CPURatioLo, CPURatioHi float64
}

// Quantile is the q-quantile of xs (linear interpolation between the
// order statistics), 0 for none. xs is not modified.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// Stats computes the medians, their interquartile ranges and the ratio
// of the medians with a paired bootstrap interval (ratioInterval).
func (p PairedInit) Stats(fn string) PairedStats {
	n := min(len(p.Fn), len(p.FloorMs))
	s := PairedStats{Fn: fn, Floor: p.Floor, Runs: n}
	if n == 0 {
		return s
	}
	a, b := p.Fn[:n], p.FloorMs[:n]
	s.FnMedian, s.FloorMedian = Median(a), Median(b)
	s.FnQ1, s.FnQ3 = Quantile(a, 0.25), Quantile(a, 0.75)
	s.FloorQ1, s.FloorQ3 = Quantile(b, 0.25), Quantile(b, 0.75)
	s.Ratio, s.RatioLo, s.RatioHi = ratioInterval(fn, a, b)
	if len(p.FnCPU) == n && len(p.FloorCPU) == n {
		s.FnCPUMedian, s.FloorCPUMedian = Median(p.FnCPU), Median(p.FloorCPU)
		s.CPURatio, s.CPURatioLo, s.CPURatioHi = ratioInterval(fn, p.FnCPU, p.FloorCPU)
	}
	return s
}

// ratioInterval is median(a)/median(b) and its paired bootstrap interval
// (0s when b's median is not positive): rounds are resampled with
// replacement, a round's two runs together, so a load spike that slowed
// both stays paired. Seeded from seed: the same runs give the same interval.
func ratioInterval(seed string, a, b []float64) (ratio, lo, hi float64) {
	n := len(a)
	fm := Median(b)
	if fm <= 0 {
		return 0, 0, 0
	}
	h := fnv.New64a()
	h.Write([]byte(seed))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	ratios := make([]float64, 0, BootstrapResamples)
	ra, rb := make([]float64, n), make([]float64, n)
	for range BootstrapResamples {
		for i := range n {
			j := rng.IntN(n)
			ra[i], rb[i] = a[j], b[j]
		}
		if m := Median(rb); m > 0 {
			ratios = append(ratios, Median(ra)/m)
		}
	}
	tail := (1 - BootstrapLevel) / 2
	return Median(a) / fm, Quantile(ratios, tail), Quantile(ratios, 1-tail)
}

// Within says whether the function is within budget by the ratio of the
// medians, naming the interval's far end when the interval straddles it.
func (s PairedStats) Within(budget float64) string {
	switch {
	case s.Runs == 0 || s.Ratio == 0:
		return "–"
	case s.Ratio <= budget && s.RatioHi <= budget:
		return "yes"
	case s.Ratio <= budget:
		return fmt.Sprintf("yes (interval reaches %.2f×)", s.RatioHi)
	case s.RatioLo > budget:
		return "**no**"
	default:
		return fmt.Sprintf("**no** (interval from %.2f×)", s.RatioLo)
	}
}

// Stats lists the stats of every paired function, by name.
func (c ColdInit) Stats() []PairedStats {
	var out []PairedStats
	for _, fn := range Keys(c.Pairs) {
		out = append(out, c.Pairs[fn].Stats(fn))
	}
	return out
}

// ColdInitTable is the paired comparison: each function against its own
// floor measured in the same rounds.
func (r Report) ColdInitTable() Table {
	t := Table{Header: []string{"function", "its floor", "runs", "function median (ms)", "IQR (ms)", "floor median (ms)", "IQR (ms)",
		"× its floor", fmt.Sprintf("%.0f%% interval", BootstrapLevel*100), fmt.Sprintf("≤ %.1f×", InitBudget),
		"CPU: function (ms)", "CPU: floor (ms)", "CPU × its floor", fmt.Sprintf("CPU %.0f%% interval", BootstrapLevel*100)}}
	for _, s := range r.Paired().Stats() {
		row := []string{s.Fn, s.Floor, fmt.Sprint(s.Runs), "–", "", "–", "", "–", "", s.Within(InitBudget), "", "", "", ""}
		if s.Runs > 0 {
			row[3], row[4] = ms(s.FnMedian), ms(s.FnQ1)+"–"+ms(s.FnQ3)
			row[5], row[6] = ms(s.FloorMedian), ms(s.FloorQ1)+"–"+ms(s.FloorQ3)
		}
		if s.Ratio > 0 {
			row[7] = fmt.Sprintf("%.2f×", s.Ratio)
			row[8] = fmt.Sprintf("%.2f–%.2f×", s.RatioLo, s.RatioHi)
		}
		if s.CPURatio > 0 {
			row[10], row[11] = ms(s.FnCPUMedian), ms(s.FloorCPUMedian)
			row[12] = fmt.Sprintf("%.2f×", s.CPURatio)
			row[13] = fmt.Sprintf("%.2f–%.2f×", s.CPURatioLo, s.CPURatioHi)
		}
		if e, failed := r.InitErrors[s.Fn]; failed && s.Runs == 0 {
			row[3] = "failed: " + firstLine(e)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// A Unit is one step of a round: a function and its floor, or a reference.
type Unit []string

// PlanRound orders one round: each of fns with a run of its own floor
// (coin true: the floor first), each of refs alone, the units in perm's
// order (rand.Perm or a stand-in).
func PlanRound(fns, refs []string, perm func(int) []int, coin func() bool) []Unit {
	var units []Unit
	for _, fn := range fns {
		u := Unit{fn, FunctionFloor(fn)}
		if coin() {
			u[0], u[1] = u[1], u[0]
		}
		units = append(units, u)
	}
	for _, r := range refs {
		units = append(units, Unit{r})
	}
	out := make([]Unit, len(units))
	for i, j := range perm(len(units)) {
		out[i] = units[j]
	}
	return out
}
