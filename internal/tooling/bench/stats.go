// Package bench is `make bench` (cmd/bench only parses its flags): Run
// builds the functions and their references, times their cold init,
// synth and the go benchmarks (measure.go); the rest, tested, parses what
// the processes print, takes medians, counts the AWS calls of a task
// lifecycle on the in-process pipeline, prices them, and renders
// docs/PERFORMANCE.md. No test asserts a timing.
package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// Median returns the median of xs (the mean of the two middle values for
// an even count), or 0 for none. xs is not modified.
func Median(xs []float64) float64 { return Quantile(xs, 0.5) }

// GoBench is one result line of `go test -bench -benchmem`.
type GoBench struct {
	Package     string
	Name        string // without the "Benchmark" prefix and the -GOMAXPROCS suffix
	N           int64
	NsPerOp     float64
	BytesPerOp  int64
	AllocsPerOp int64
	// Extra holds custom metrics reported with b.ReportMetric, by unit.
	Extra map[string]float64
}

// ParseGoBench reads `go test -bench . -benchmem` output of one or more
// packages (the "pkg:" lines name the package of the results after them).
func ParseGoBench(out []byte) ([]GoBench, error) {
	var res []GoBench
	pkg := ""
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || len(f)%2 != 0 {
			continue // a benchmark's own log line, not a result
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndex(name, "-"); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		b := GoBench{Package: pkg, Name: name, N: n}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark line %q: value %q: %w", line, f[i], err)
			}
			switch f[i+1] {
			case "ns/op":
				b.NsPerOp = v
			case "B/op":
				b.BytesPerOp = int64(v)
			case "allocs/op":
				b.AllocsPerOp = int64(v)
			default:
				if b.Extra == nil {
					b.Extra = map[string]float64{}
				}
				b.Extra[f[i+1]] = v
			}
		}
		res = append(res, b)
	}
	return res, nil
}
