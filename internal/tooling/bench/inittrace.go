package bench

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// PkgInit is one package's init as GODEBUG=inittrace=1 reports it.
type PkgInit struct {
	Pkg           string
	ClockMs       float64
	Bytes, Allocs float64
}

// inittraceLine matches "init net/http @2.1 ms, 0.12 ms clock, 12 bytes, 1 allocs".
var inittraceLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, ([0-9.]+) ms clock, ([0-9]+) bytes, ([0-9]+) allocs$`)

// ParseInitTrace reads the inittrace lines of one process's stderr.
func ParseInitTrace(stderr []byte) []PkgInit {
	var out []PkgInit
	for line := range strings.Lines(string(stderr)) {
		m := inittraceLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		clock, _ := strconv.ParseFloat(m[2], 64)
		b, _ := strconv.ParseFloat(m[3], 64)
		a, _ := strconv.ParseFloat(m[4], 64)
		out = append(out, PkgInit{Pkg: m[1], ClockMs: clock, Bytes: b, Allocs: a})
	}
	return out
}

// MedianInitTrace merges runs of one binary: per package, the median of
// each figure (a package missing from a run counts as zero there), sorted
// by clock time, largest first.
func MedianInitTrace(runs [][]PkgInit) []PkgInit {
	by := map[string][]PkgInit{}
	for _, run := range runs {
		for _, p := range run {
			by[p.Pkg] = append(by[p.Pkg], p)
		}
	}
	var out []PkgInit
	for pkg, ps := range by {
		median := func(field func(PkgInit) float64) float64 {
			xs := make([]float64, len(runs)) // zero for the runs without pkg
			for i, p := range ps {
				xs[i] = field(p)
			}
			return Median(xs)
		}
		out = append(out, PkgInit{Pkg: pkg, ClockMs: median(func(p PkgInit) float64 { return p.ClockMs }),
			Bytes: median(func(p PkgInit) float64 { return p.Bytes }), Allocs: median(func(p PkgInit) float64 { return p.Allocs })})
	}
	slices.SortFunc(out, func(a, b PkgInit) int {
		return cmp.Or(cmp.Compare(b.ClockMs, a.ClockMs), strings.Compare(a.Pkg, b.Pkg))
	})
	return out
}

// IsSDK reports whether pkg belongs to the AWS SDK (or smithy, its runtime).
func IsSDK(pkg string) bool {
	return strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2") || strings.HasPrefix(pkg, "github.com/aws/smithy-go")
}

// WhyLinked says why a function links pkg.
func WhyLinked(pkg string) string {
	const svc = "github.com/aws/aws-sdk-go-v2/service/"
	if rest, ok := strings.CutPrefix(pkg, svc); ok {
		name, _, _ := strings.Cut(rest, "/")
		if ConfigServices[name] { // no function calls them
			return "config's credential chain (`LoadDefaultConfig`)"
		}
		if name == "internal" {
			return "shared by the service clients"
		}
		return "the " + name + " client"
	}
	switch {
	case strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2/config"),
		strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2/credentials/"),
		strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"),
		strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2/internal/ini"):
		return "config (`LoadDefaultConfig`)"
	case IsSDK(pkg):
		return "SDK core"
	case !strings.Contains(pkg, "."):
		return "Go standard library / runtime"
	}
	return "other"
}

// InitTraceTotals sums a merged trace: all packages, and the SDK's.
func InitTraceTotals(t []PkgInit) (all, sdk PkgInit) {
	for _, p := range t {
		all.add(p)
		if IsSDK(p.Pkg) {
			sdk.add(p)
		}
	}
	return all, sdk
}

func (p *PkgInit) add(q PkgInit) {
	p.ClockMs += q.ClockMs
	p.Bytes += q.Bytes
	p.Allocs += q.Allocs
}

// InitTraceTable lists, per traced binary, the package init totals.
func (r Report) InitTraceTable() Table {
	t := Table{Header: []string{"binary", "package init (ms)", "of which SDK (ms)", "SDK share", "allocs", "of which SDK", "KiB allocated", "of which SDK"}}
	for _, n := range r.initNames() {
		tr, ok := r.InitTrace[n]
		if !ok {
			continue
		}
		all, sdk := InitTraceTotals(tr)
		share := "–"
		if all.ClockMs > 0 {
			share = fmt.Sprintf("%.0f%%", 100*sdk.ClockMs/all.ClockMs)
		}
		t.Rows = append(t.Rows, []string{n, ms(all.ClockMs), ms(sdk.ClockMs), share,
			fmt.Sprintf("%.0f", all.Allocs), fmt.Sprintf("%.0f", sdk.Allocs),
			fmt.Sprintf("%.0f", all.Bytes/1024), fmt.Sprintf("%.0f", sdk.Bytes/1024)})
	}
	return t
}

// TopInitTable lists the n packages of name's trace with the longest init.
func (r Report) TopInitTable(name string, n int) Table {
	t := Table{Header: []string{"package", "init (ms)", "allocs", "KiB allocated", "linked for"}}
	for i, p := range r.InitTrace[name] {
		if i == n {
			break
		}
		t.Rows = append(t.Rows, []string{"`" + p.Pkg + "`", ms(p.ClockMs), fmt.Sprintf("%.0f", p.Allocs), fmt.Sprintf("%.0f", p.Bytes/1024), WhyLinked(p.Pkg)})
	}
	return t
}

// ConfigOnlyInit sums name's package inits that only the config package
// (LoadDefaultConfig) links.
func (r Report) ConfigOnlyInit(name string) (ms float64, allocs float64) {
	for _, p := range r.InitTrace[name] {
		if strings.Contains(WhyLinked(p.Pkg), "LoadDefaultConfig") {
			ms += p.ClockMs
			allocs += p.Allocs
		}
	}
	return ms, allocs
}
