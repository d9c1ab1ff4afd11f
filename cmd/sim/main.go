// Command sim runs the deterministic fault-injection simulation of the
// unscheduling pipeline (internal/sim) over many seeds in parallel, or
// replays one seed with a trace.
//
//	go run ./cmd/sim -seeds 10000          # seeds 1..10000
//	go run ./cmd/sim -seed 12345           # replay one, with its trace
//	go run ./cmd/sim -layer all            # each execution layer in turn
//	go run ./cmd/sim -layer ttl -seed 7    # replay one on the TTL layer
//
// Concurrent duplicate invocations of a schedule are injected by default
// (-concurrent-fires=false leaves them out). Every invariant is strict:
// there is no list of known gaps that a history may show.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/unschedule/unschedule/internal/layers"
	"github.com/unschedule/unschedule/internal/sim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout))
}

func run(args []string, out io.Writer) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(out)
	seeds := fs.Int("seeds", 10000, "how many histories to run")
	first := fs.Int64("first", 1, "the first seed of a -seeds run")
	seed := fs.Int64("seed", 0, "replay this one seed and print its trace")
	workers := fs.Int("workers", 0, "parallel histories (default GOMAXPROCS)")
	_ = fs.Bool("strict", true, "no effect: every invariant is strict (kept so that older replay commands run)")
	concurrent := fs.Bool("concurrent-fires", true, "also inject concurrent duplicate invocations of a schedule")
	anyWriter := fs.Bool("any-writer", false, "write a fifth of the tasks straight into the table, not through the API")
	layer := fs.String("layer", "scheduler", "execution layer that fires the tasks: scheduler, stepfunctions, ttl, or all (each in turn)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *layer == "all" {
		rc := 0
		for _, l := range layers.All {
			fmt.Fprintf(out, "== layer %s\n", l)
			if r := run(append(args, "-layer", string(l)), out); r != 0 {
				rc = r
			}
		}
		return rc
	}
	l, err := layers.Parse(*layer)
	if err != nil {
		fmt.Fprintln(out, err)
		return 2
	}
	base := sim.Config{ConcurrentFires: *concurrent, AnyWriter: *anyWriter, Timer: l}
	flags := ""
	if l != layers.EventBridgeScheduler {
		flags += " -layer " + string(l)
	}
	if !*concurrent {
		flags += " -concurrent-fires=false"
	}
	if *anyWriter {
		flags += " -any-writer"
	}
	if *seed != 0 {
		base.Seed = *seed
		base.Trace = func(line string) { fmt.Fprintln(out, line) }
		r := sim.Run(base)
		fmt.Fprintf(out, "seed %d: %d tasks, %d requests, %d notifications, %d reminders\n", r.Seed, r.Tasks, r.Requests, r.Notifications, r.Reminders)
		printCounts(out, r.Faults)
		for _, v := range r.Violations {
			fmt.Fprintln(out, "VIOLATION", v)
		}
		if r.Failed() {
			return 1
		}
		fmt.Fprintln(out, "ok")
		return 0
	}
	s := sim.RunMany(base, *first, *seeds, *workers)
	rate := float64(s.Histories) / s.Elapsed.Seconds()
	fmt.Fprintf(out, "%d histories in %s: %.0f histories/s; %d tasks, %d API requests, %d notifications, %d reminders (%d owed by I6)\n",
		s.Histories, s.Elapsed.Round(1e6), rate, s.Tasks, s.Requests, s.Notifications, s.Reminders, s.RemindersOwed)
	fmt.Fprintf(out, "notification lag after the deadline: p50 %s, p99 %s, max %s\n", s.LagP50, s.LagP99, s.LagMax)
	printCounts(out, s.Faults)
	for i, r := range s.Failed {
		if i == 20 {
			fmt.Fprintf(out, "... and %d more failing seeds\n", len(s.Failed)-i)
			break
		}
		fmt.Fprintf(out, "FAIL seed %d: %s\n  replay: go run ./cmd/sim -seed %d%s\n", r.Seed, r.Violations[0], r.Seed, flags)
	}
	if len(s.Failed) > 0 {
		fmt.Fprintf(out, "%d of %d histories broke an invariant\n", len(s.Failed), s.Histories)
		return 1
	}
	fmt.Fprintln(out, "all invariants held (I1-I6)")
	return 0
}

func printCounts(out io.Writer, faults map[sim.Fault]int) {
	fmt.Fprintln(out, "faults injected:")
	for _, f := range sim.Faults() {
		if n := faults[f]; n > 0 {
			fmt.Fprintf(out, "  %-36s %d\n", f, n)
		}
	}
}
