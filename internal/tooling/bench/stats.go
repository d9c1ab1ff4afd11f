// Package bench is `make bench` (cmd/bench only parses its flags): Run
// builds the functions and their references, times their cold init,
// synth and the go benchmarks (measure.go); the rest, tested, parses what
// the processes print, takes medians, counts the AWS calls of a task
// lifecycle on the in-process pipeline, prices them, and renders
// docs/PERFORMANCE.md. No test asserts a timing.
package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Median returns the median of xs (the mean of the two middle values for
// an even count), or 0 for none. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ErrNoInitReport: the emulator's output holds no init duration (the
// function failed before it asked for its first event, or the emulator
// changed its log format).
var ErrNoInitReport = errors.New("no init duration in the emulator output")

var (
	// "INIT REPORT(durationMs: 5.806000)", logged by the emulator when the
	// runtime asks for its first event.
	initReportRe = regexp.MustCompile(`INIT REPORT\(durationMs:\s*([0-9.]+)\)`)
	// "Init Duration: 5.81 ms" in the REPORT line, older emulators.
	initDurationRe = regexp.MustCompile(`Init Duration:\s*([0-9.]+)\s*ms`)
)

// ParseInitDuration returns the init duration in milliseconds that the
// Runtime Interface Emulator logged: the `INIT REPORT(durationMs: …)`
// line (from starting the bootstrap process to its first call to the
// runtime API's /next), else the REPORT line's `Init Duration`. Recent
// emulators print an `Init Duration` of a fraction of a millisecond in the
// REPORT line whatever the function did, so INIT REPORT wins when both are
// there.
func ParseInitDuration(out []byte) (float64, error) {
	for _, re := range []*regexp.Regexp{initReportRe, initDurationRe} {
		if m := re.FindSubmatch(out); m != nil {
			v, err := strconv.ParseFloat(string(m[1]), 64)
			if err != nil {
				return 0, fmt.Errorf("init duration %q: %w", m[1], err)
			}
			return v, nil
		}
	}
	return 0, ErrNoInitReport
}

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
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
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
	return res, sc.Err()
}
