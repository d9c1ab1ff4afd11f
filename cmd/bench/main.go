// Command bench measures the app and writes docs/PERFORMANCE.md (`make
// bench`; what it measures is listed there). Run it from the module root.
// It parses its flags; internal/tooling/bench does the rest (bench.Run).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/unschedule/unschedule/internal/tooling/bench"
)

func main() {
	var c bench.Config
	flag.IntVar(&c.InitRuns, "runs", 30, "cold-init rounds: each function once next to its floor, each reference once, in a random order")
	flag.IntVar(&c.SynthRuns, "synth-runs", 5, "synth runs per app (interleaved)")
	flag.IntVar(&c.BuildRuns, "build-runs", 3, "runs of the 7-builds vs one-build comparison")
	flag.StringVar(&c.BenchTime, "benchtime", "1s", "go test -benchtime")
	flag.StringVar(&c.Out, "out", "docs/PERFORMANCE.md", "the report to write (\"\" to only print)")
	flag.StringVar(&c.SkipList, "skip", "", "comma-separated parts to skip: init,synth,gobench (the doc then says so)")
	flag.StringVar(&c.From, "from", "", "render the doc from a saved run (bin/bench-report.json) instead of measuring; with -gobench, run the go benchmarks again")
	flag.BoolVar(&c.GoBench, "gobench", false, "with -from: run the go test benchmarks again")
	flag.StringVar(&c.Only, "only", "", "coldinit: only each function against its floor (paired rounds), printed with the load average; the doc is not written (the report goes to bin/bench-init.json); "+
		"cost: only the task lifecycles' cost section, counted and printed (memory from cdk.out, no init measured), the doc is not written")
	flag.StringVar(&c.Functions, "functions", "", "with -only coldinit: comma-separated functions to measure (default: every lambdas/*)")
	flag.BoolVar(&c.Quick, "quick", false, "the smallest settings (runs=2, synth-runs=1, build-runs=1, benchtime=100ms): checks the tooling, not for conclusions")
	flag.Parse()
	c.Command = "make bench"
	if args := os.Args[1:]; len(args) > 0 {
		c.Command = "go run ./cmd/bench " + strings.Join(args, " ")
	}
	if err := bench.Run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		if errors.Is(err, bench.ErrUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
