// Command sim runs the deterministic fault-injection simulation
// (internal/tooling/sim, docs/simulation.md) over many seeds in parallel,
// or replays one seed with its trace: to-do tasks with their reminders,
// campaign sends, future events and deferred jobs, on every timer.
//
//	go run ./cmd/sim -seeds 10000                      # tasks, seeds 1..10000
//	go run ./cmd/sim -seed 12345                       # replay one, with its trace
//	go run ./cmd/sim -timer all -workload all          # every workload on every timer
//	go run ./cmd/sim -workload futureevents -timer ttl # future events on the TTL timer
//
// -layer is the old name of -timer. Concurrent duplicate invocations of a
// schedule are injected by default (-concurrent-fires=false leaves them
// out).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/tooling/sim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout))
}

// options are the flags beside the runs' configuration.
type options struct {
	seeds, workers int
	first, seed    int64
}

func run(args []string, out io.Writer) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(out)
	var o options
	var base sim.Config
	fs.IntVar(&o.seeds, "seeds", 10000, "how many histories to run")
	fs.Int64Var(&o.first, "first", 1, "the first seed of a -seeds run")
	fs.Int64Var(&o.seed, "seed", 0, "replay this one seed and print its trace")
	fs.IntVar(&o.workers, "workers", 0, "parallel histories (default GOMAXPROCS)")
	fs.BoolVar(&base.ConcurrentFires, "concurrent-fires", true, "tasks: also inject concurrent duplicate invocations of a schedule")
	fs.BoolVar(&base.AnyWriter, "any-writer", false, "tasks: write a fifth of them straight into the table, not through the API")
	timer := fs.String("timer", "scheduler", "the timer that fires: scheduler, stepfunctions, ttl, or all (each in turn)")
	layer := fs.String("layer", "", "deprecated: the old name of -timer")
	workload := fs.String("workload", "tasks", "what the histories run: tasks (with their reminders), campaigns (campaign sends), futureevents, deferredjobs, or all (each in turn)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *layer != "" {
		fmt.Fprintln(out, "note: -layer is deprecated: use -timer")
		timerSet := false
		fs.Visit(func(f *flag.Flag) { timerSet = timerSet || f.Name == "timer" })
		if !timerSet {
			*timer = *layer
		}
	}
	timers := timerkind.Names()
	if *timer != "all" {
		t, err := timerkind.Parse(*timer)
		if err != nil {
			fmt.Fprintf(out, "-timer: %v\n", err)
			return 2
		}
		timers = []timerspec.Name{t}
	}
	workloads := sim.Workloads
	if *workload != "all" {
		w, err := sim.ParseWorkload(*workload)
		if err != nil {
			fmt.Fprintf(out, "-workload: %v\n", err)
			return 2
		}
		workloads = []sim.Workload{w}
	}
	rc := 0
	for _, w := range workloads {
		for _, t := range timers {
			base.Workload, base.Timer = w, t
			if len(workloads)*len(timers) > 1 {
				fmt.Fprintf(out, "== timer %s, workload %s\n", base.Timer, base.Workload)
			}
			rc = max(rc, runOne(base, o, out))
		}
	}
	return rc
}

// replayFlags are the flags that replay a history of cfg.
func replayFlags(cfg sim.Config) string {
	flags := ""
	if def, _ := timerkind.Lookup(""); cfg.Timer != "" && cfg.Timer != def.Name {
		flags += " -timer " + string(cfg.Timer)
	}
	if cfg.Workload != "" && cfg.Workload != sim.WorkloadTasks {
		return flags + " -workload " + string(cfg.Workload)
	}
	if !cfg.ConcurrentFires {
		flags += " -concurrent-fires=false"
	}
	if cfg.AnyWriter {
		flags += " -any-writer"
	}
	return flags
}

// invariants names what each workload's histories check.
var invariants = map[sim.Workload]string{sim.WorkloadTasks: "I1-I6", sim.WorkloadCampaigns: "C1-C5",
	sim.WorkloadFutureEvents: "F1-F6", sim.WorkloadDeferredJobs: "J1-J5"}

// runOne runs cfg's histories, or replays the one seed o.seed with its
// trace, and prints what they did.
func runOne(cfg sim.Config, o options, out io.Writer) int {
	replay := o.seed != 0
	if replay {
		cfg.Trace = func(line string) { fmt.Fprintln(out, line) }
		o.first, o.seeds, o.workers = o.seed, 1, 1
	}
	s := sim.RunMany(cfg, o.first, o.seeds, o.workers)
	if replay {
		fmt.Fprintf(out, "seed %d: ", o.seed)
	} else {
		fmt.Fprintf(out, "%d histories in %s: %.0f histories/s; ", s.Histories, s.Elapsed.Round(1e6), float64(s.Histories)/s.Elapsed.Seconds())
	}
	switch cfg.Workload {
	case sim.WorkloadCampaigns:
		fmt.Fprintf(out, "%d sends: %d sent, %d failed, %d cancelled\n", s.Sends, s.Sent, s.SendsFailed, s.SendsCancelled)
	case sim.WorkloadFutureEvents:
		fmt.Fprintf(out, "%d events scheduled, %d deliveries\n", s.Items, s.Deliveries)
	case sim.WorkloadDeferredJobs:
		fmt.Fprintf(out, "%d tenant windows with activity, %d jobs queued\n", s.Items, s.Deliveries)
	default:
		fmt.Fprintf(out, "%d tasks, %d API requests, %d notifications, %d reminders (%d owed by I6)\n",
			s.Tasks, s.Requests, s.Notifications, s.Reminders, s.RemindersOwed)
		fmt.Fprintf(out, "notification lag after the deadline: p50 %s, p99 %s, max %s\n", s.LagP50, s.LagP99, s.LagMax)
	}
	fmt.Fprintln(out, "faults injected:")
	for _, f := range sim.Faults() {
		if n := s.Faults[f]; n > 0 {
			fmt.Fprintf(out, "  %-36s %d\n", f, n)
		}
	}
	for i, r := range s.Failed {
		switch {
		case replay:
			for _, v := range r.Violations {
				fmt.Fprintln(out, "VIOLATION", v)
			}
		case i == 20:
			fmt.Fprintf(out, "... and %d more failing seeds\n", len(s.Failed)-i)
		case i < 20:
			fmt.Fprintf(out, "FAIL seed %d: %s\n  replay: go run ./cmd/sim -seed %d%s\n", r.Seed, r.Violations[0], r.Seed, replayFlags(cfg))
		}
	}
	switch {
	case len(s.Failed) > 0:
		fmt.Fprintf(out, "%d of %d histories broke an invariant\n", len(s.Failed), s.Histories)
		return 1
	case replay:
		fmt.Fprintln(out, "ok")
	default:
		fmt.Fprintf(out, "all invariants held (%s)\n", invariants[cfg.Workload])
	}
	return 0
}
