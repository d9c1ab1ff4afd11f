// Command bench measures the app and writes docs/PERFORMANCE.md (`make
// bench`): per function the zipped linux/arm64 bundle and the cold init
// up to its first event request (wall and CPU time), paired round by
// round with its SDK floor (the same clients, the standard
// configuration), and the bare function; `cdk
// synth` of the app with a warm bundle cache, without it, and against an
// empty CDK app; the `go test -bench` benchmarks; the cost per million
// task lifecycles on each timer and per million campaign sends; what a
// reconciler pass reads, scanning or through the armed index; and the
// load average at the start and at the end. Run it from the module root.
// The logic it relies on is in internal/tooling/bench (tested); this file runs
// processes and clocks.
package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/internal/tooling/bench"
)

func main() {
	var o bench.Options
	flag.IntVar(&o.InitRuns, "runs", 30, "cold-init rounds: each function once next to its floor, each reference once, in a random order")
	flag.IntVar(&o.SynthRuns, "synth-runs", 5, "synth runs per app (interleaved)")
	flag.IntVar(&o.BuildRuns, "build-runs", 3, "runs of the 7-builds vs one-build comparison")
	benchTime := flag.String("benchtime", "1s", "go test -benchtime")
	out := flag.String("out", "docs/PERFORMANCE.md", "the report to write (\"\" to only print)")
	skip := flag.String("skip", "", "comma-separated parts to skip: init,synth,gobench (the doc then says so)")
	from := flag.String("from", "", "render the doc from a saved run (bin/bench-report.json) instead of measuring; with -gobench, run the go benchmarks again")
	rerunGoBench := flag.Bool("gobench", false, "with -from: run the go test benchmarks again")
	only := flag.String("only", "", "coldinit: only each function against its floor (paired rounds), printed with the load average; the doc is not written (the report goes to bin/bench-init.json); "+
		"cost: only the task lifecycles' cost section, counted and printed (memory from cdk.out, no init measured), the doc is not written")
	fnList := flag.String("functions", "", "with -only coldinit: comma-separated functions to measure (default: every lambdas/*)")
	flag.BoolVar(&o.Quick, "quick", false, "the smallest settings (runs=2, synth-runs=1, build-runs=1, benchtime=100ms): checks the tooling, not for conclusions")
	flag.Parse()
	if o.Quick {
		o.InitRuns, o.SynthRuns, o.BuildRuns, *benchTime = 2, 1, 1, "100ms"
	}
	o.BenchTime = *benchTime
	if *from != "" {
		if err := rerender(*from, *out, *rerunGoBench, *benchTime); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	for _, s := range strings.Split(*skip, ",") {
		if s != "" {
			o.Skip = append(o.Skip, s)
		}
	}
	o.Command = "make bench"
	if args := os.Args[1:]; len(args) > 0 {
		o.Command = "go run ./cmd/bench " + strings.Join(args, " ")
	}
	switch *only {
	case "":
	case "coldinit":
		if err := runColdInitOnly(o, *fnList); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	case "cost":
		if err := runCostOnly(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	default:
		fmt.Fprintf(os.Stderr, "bench: -only %q: the parts that run alone are coldinit and cost\n", *only)
		os.Exit(2)
	}
	if err := run(o, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(o bench.Options, out string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return errors.New("run from the module root (where go.mod is)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "unschedule-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	r := bench.Report{Options: o, Started: time.Now().UTC(), Machine: machine(goBin)}
	r.Machine.LoadStart = loadAvg()
	for _, w := range r.Machine.LoadWarnings() {
		fmt.Fprintln(os.Stderr, "bench: WARNING:", w)
	}
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...) }

	fns, err := functions(root)
	if err != nil {
		return err
	}
	r.Memory, r.MemoryFrom = memorySizes(filepath.Join(root, "cdk.out"), fns)

	args, env, err := recordBuild(root, tmp, "lambdas/"+fns[0])
	if err != nil {
		return err
	}
	r.BuildCommand = strings.Join(env, " ") + " go " + strings.ReplaceAll(strings.Join(quote(args), " "), tmp, "$TMP")
	logf("building %d functions for linux/arm64 with gofn.Build", len(fns))
	for _, fn := range fns {
		out := filepath.Join(tmp, "arm64", fn, "bootstrap")
		if err := gofn.Build(goBin, root, "lambdas/"+fn, out); err != nil {
			return err
		}
		raw, zipped, err := sizes(out)
		if err != nil {
			return err
		}
		r.Functions = append(r.Functions, bench.FunctionResult{Name: fn, BinaryBytes: raw, ZipBytes: zipped})
	}

	if !o.Skipped("synth") {
		if err := synth(&r, root, goBin, tmp, fns, logf); err != nil {
			return err
		}
		// The memory sizes as synthesized just now.
		r.Memory, r.MemoryFrom = memorySizes(filepath.Join(tmp, "app.out"), fns)
	}
	if !o.Skipped("init") {
		if err := coldInit(&r, root, goBin, tmp, fns, true, logf); err != nil {
			return err
		}
	}
	if !o.Skipped("gobench") {
		logf("go test -bench")
		if err := goBenchmarks(&r, root, goBin, o.BenchTime); err != nil {
			return err
		}
	}
	r.Machine.LoadEnd = loadAvg()
	if err := countUsage(&r); err != nil {
		return err
	}
	r.Finished = time.Now().UTC()
	// Keep the measurements, so the doc can be rendered again (-from)
	// without measuring again.
	if b, err := json.MarshalIndent(r, "", " "); err == nil {
		_ = os.MkdirAll(filepath.Join(root, "bin"), 0o755)
		_ = os.WriteFile(filepath.Join(root, "bin", "bench-report.json"), b, 0o644)
	}
	return write(r, out)
}

// campaignRecipients is the size of the campaign whose sends are counted.
const campaignRecipients = 1000

// runColdInitOnly measures each function against its floor, paired round
// by round, and prints the table and the load average at the start and at
// the end; no bundle sizes, synth, trace or go benchmarks, and the doc is
// not written (its other sections would be lost).
func runColdInitOnly(o bench.Options, fnList string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return errors.New("run from the module root (where go.mod is)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "unschedule-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	r := bench.Report{Options: o, Started: time.Now().UTC(), Machine: machine(goBin)}
	r.Machine.LoadStart = loadAvg()
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...) }
	logf("load average at the start: %s", r.Machine.LoadStart)
	fns, err := functions(root)
	if err != nil {
		return err
	}
	if fnList != "" {
		var chosen []string
		for _, f := range strings.Split(fnList, ",") {
			if !slices.Contains(fns, f) {
				return fmt.Errorf("-functions: no lambdas/%s/main.go", f)
			}
			chosen = append(chosen, f)
		}
		fns = chosen
	}
	for _, fn := range fns {
		r.Functions = append(r.Functions, bench.FunctionResult{Name: fn})
	}
	r.Memory, r.MemoryFrom = memorySizes(filepath.Join(root, "cdk.out"), fns)
	if err := coldInit(&r, root, goBin, tmp, fns, false, logf); err != nil {
		return err
	}
	r.Machine.LoadEnd = loadAvg()
	r.Finished = time.Now().UTC()
	if b, err := json.MarshalIndent(r, "", " "); err == nil {
		_ = os.MkdirAll(filepath.Join(root, "bin"), 0o755)
		_ = os.WriteFile(filepath.Join(root, "bin", "bench-init.json"), b, 0o644)
	}
	worst, worstRatio, met, resolved, ok := r.InitVerdict()
	fmt.Printf("\nCold init against its floor: %d rounds (paired, random order), %s to %s UTC\n",
		r.ColdInit.Rounds, r.Started.Format("2006-01-02 15:04"), r.Finished.Format("15:04"))
	fmt.Print(r.ColdInitTable().Text())
	fmt.Printf("\nLoad average (1, 5, 15 min): %s at the start, %s at the end\n", r.Machine.LoadStart, r.Machine.LoadEnd)
	if ok {
		fmt.Printf("Budget (≤ %.1f× its floor): met=%v, highest %s at %.2f×, every interval within: %v\n", bench.InitBudget, met, worst, worstRatio, resolved)
	}
	for _, w := range r.Machine.LoadWarnings() {
		fmt.Println("WARNING:", w)
	}
	return nil
}

// runCostOnly counts the task lifecycles and prints the doc's cost
// section as the generator renders it: memory sizes from cdk.out (or
// CDK_OUT), no cold init measured (the floor's default; the seed's
// assumed init).
func runCostOnly() error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	fns, err := functions(root)
	if err != nil {
		return err
	}
	dir := os.Getenv("CDK_OUT")
	if dir == "" {
		dir = filepath.Join(root, "cdk.out")
	}
	r := bench.Report{}
	r.Memory, r.MemoryFrom = memorySizes(dir, fns)
	fmt.Fprintln(os.Stderr, "bench: memory sizes:", r.MemoryFrom)
	if err := countUsage(&r); err != nil {
		return err
	}
	s, err := bench.TaskCostSection(r)
	if err != nil {
		return err
	}
	fmt.Print(s)
	return nil
}

// countUsage counts the AWS calls of each lifecycle on each timer, and of
// a campaign's sends (deterministic, so -from counts them again for the
// code as it is now).
func countUsage(r *bench.Report) error {
	r.Usage = nil
	for _, l := range bench.Timers {
		for _, p := range bench.Paths {
			u, err := bench.CountLifecycle(context.Background(), p, l)
			if err != nil {
				return fmt.Errorf("count %s on %s: %w", p, l, err)
			}
			r.Usage = append(r.Usage, bench.PathUsage{Timer: l, Path: p, Usage: u})
		}
	}
	cu, err := bench.CountCampaignSends(context.Background(), campaignRecipients)
	if err != nil {
		return fmt.Errorf("count campaign sends: %w", err)
	}
	r.Campaign = &cu
	if r.ReconcileReads, err = bench.CountReconcileReads(context.Background()); err != nil {
		return fmt.Errorf("count reconciler reads: %w", err)
	}
	return nil
}

// write prints the summary and writes the doc to out ("" for none).
func write(r bench.Report, out string) error {
	doc, err := bench.RenderDoc(r)
	if err != nil {
		return err
	}
	fmt.Print(bench.Summary(r))
	if out == "" {
		return nil
	}
	if err := os.WriteFile(out, []byte(doc), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "bench: wrote", out)
	return nil
}

func rerender(from, out string, rerunGoBench bool, benchTime string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	var r bench.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	if rerunGoBench {
		root, err := os.Getwd()
		if err != nil {
			return err
		}
		goBin, err := exec.LookPath("go")
		if err != nil {
			return err
		}
		r.Options.BenchTime = benchTime
		r.GoBenchAt = time.Now().UTC()
		if err := goBenchmarks(&r, root, goBin, benchTime); err != nil {
			return err
		}
	}
	if err := countUsage(&r); err != nil {
		return err
	}
	return write(r, out)
}

// functions lists the packages under lambdas/ that hold a main.go.
func functions(root string) ([]string, error) {
	ms, err := filepath.Glob(filepath.Join(root, "lambdas", "*", "main.go"))
	if err != nil {
		return nil, err
	}
	var fns []string
	for _, m := range ms {
		fns = append(fns, filepath.Base(filepath.Dir(m)))
	}
	sort.Strings(fns)
	if len(fns) == 0 {
		return nil, errors.New("no lambdas/*/main.go")
	}
	return fns, nil
}

// sizes returns the binary's size and the size of a zip holding it as
// `bootstrap` (deflate, as the CDK asset zip).
func sizes(bin string) (raw, zipped int64, err error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return 0, 0, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return 0, 0, err
	}
	if _, err := w.Write(b); err != nil {
		return 0, 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, 0, err
	}
	return int64(len(b)), int64(buf.Len()), nil
}

func machine(goBin string) bench.Machine {
	m := bench.Machine{NumCPU: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := exec.Command(goBin, "version").Output(); err == nil {
		m.Go = strings.TrimSpace(string(b))
	}
	return m
}

// loadAvg reads the load average (zero, not Read, where there is no
// /proc/loadavg).
func loadAvg() bench.LoadAverage {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return bench.LoadAverage{}
	}
	l, err := bench.ParseLoadAvg(b)
	if err != nil {
		return bench.LoadAverage{}
	}
	return l
}

// memorySizes reads each function's memory from the dev template in the
// cloud assembly dir, matching a function to its folder by its role's
// description ("Execution role of lambdas/<name>", set by gofn). Without
// a template every function gets gofn's default, 128, and from says so.
func memorySizes(dir string, fns []string) (sizes map[string]int, from string) {
	out := map[string]int{}
	for _, fn := range fns {
		out[fn] = 128
	}
	file := filepath.Join(dir, "Unschedule-dev.template.json")
	b, err := os.ReadFile(file)
	if err != nil {
		return out, "gofn's default (128 MB): no synthesized dev template was found"
	}
	var t struct {
		Resources map[string]struct {
			Type       string
			Properties map[string]any
		}
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return out, "gofn's default (128 MB): " + err.Error()
	}
	for _, res := range t.Resources {
		if res.Type != "AWS::Lambda::Function" {
			continue
		}
		role, _ := res.Properties["Role"].(map[string]any)
		ga, _ := role["Fn::GetAtt"].([]any)
		if len(ga) == 0 {
			continue
		}
		id, _ := ga[0].(string)
		desc, _ := t.Resources[id].Properties["Description"].(string)
		fn, ok := strings.CutPrefix(desc, "Execution role of lambdas/")
		if mem, isNum := res.Properties["MemorySize"].(float64); ok && isNum {
			out[fn] = int(mem)
		}
	}
	return out, "the synthesized dev template"
}

// coldInit builds every function and the references for this machine's
// architecture (gofn.Build with GOARCH overridden: the same flags as the
// deployed build) and measures their init under the emulator. Each round
// runs every function right next to a run of its own floor (the two in a
// random order) and, with all, each reference alone (the floor's stages,
// bare, python), the units in a random order: a function and its floor
// see the same load, and the budget is judged on those pairs.
//
// Nothing pins the CPU or sets GOMAXPROCS: at the memory sizes used here
// Lambda shows a function two vCPUs limited by a CPU share, so the Go
// runtime there starts with GOMAXPROCS=2 (its default never goes below 2
// for a CPU limit), as on this 2-CPU machine; taskset to one CPU would
// make it 1 and measure a scheduler Lambda does not run.
func coldInit(r *bench.Report, root, goBin, tmp string, fns []string, all bool, logf func(string, ...any)) error {
	// gofn.Build sets GOARCH=arm64 in the go command's environment; this
	// wrapper sets it to the host's before running the real go command.
	wrapper := filepath.Join(tmp, "go-host")
	script := fmt.Sprintf("#!/bin/sh\nGOARCH=%s exec %q \"$@\"\n", runtime.GOARCH, goBin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return err
	}
	targets := map[string]bench.InitTarget{}
	var refs []string // run alone each round
	build := func(name, entry string, env []string) error {
		out := filepath.Join(tmp, runtime.GOARCH, name, "bootstrap")
		if _, err := os.Stat(out); err != nil {
			if err := gofn.Build(wrapper, root, entry, out); err != nil {
				return err
			}
		}
		targets[name] = bench.InitTarget{Name: name, Bin: out, Env: env}
		return nil
	}
	// A floor is refs/floor built with gofn's flags plus the tags of its
	// clients (one binary per client set; the stages share the four-client
	// binary and differ by BENCH_FLOOR_STAGE).
	floorBin := func(clients []string) (string, error) {
		out := filepath.Join(tmp, runtime.GOARCH, "floor-"+strings.Join(clients, "-"), "bootstrap")
		if _, err := os.Stat(out); err == nil {
			return out, nil
		}
		return out, buildTagged(root, tmp, goBin, "internal/tooling/bench/refs/floor", bench.FloorTags(clients), out)
	}
	logf("building %d functions and their floors for linux/%s", len(fns), runtime.GOARCH)
	if err := build(bench.RefBare, "internal/tooling/bench/refs/bare", nil); err != nil {
		return err
	}
	if all {
		refs = append(refs, bench.RefBare)
		stageBin, err := floorBin(bench.StageFloorClients)
		if err != nil {
			return err
		}
		for _, st := range bench.FloorStages {
			targets[st.Name] = bench.InitTarget{Name: st.Name, Bin: stageBin, Env: []string{"BENCH_FLOOR_STAGE=" + st.Stage}}
			refs = append(refs, st.Name)
		}
	}
	sets := bench.FloorSets(fns)
	for _, name := range bench.Keys(sets) {
		if _, done := targets[name]; done {
			continue // the clients stage
		}
		bin, err := floorBin(sets[name])
		if err != nil {
			return err
		}
		targets[name] = bench.InitTarget{Name: name, Bin: bin}
	}
	for _, fn := range fns {
		if err := build(fn, "lambdas/"+fn, nil); err != nil {
			return err
		}
	}
	// Python with boto3, the seed design's runtime, when the machine has
	// it: interpreter start plus boto3 and the four clients (no emulator:
	// compare it with python-bare, the interpreter alone).
	python := ""
	if all {
		if b, err := exec.Command("python3", "-c", "import boto3, sys; print(sys.executable)").Output(); err == nil {
			// The interpreter itself, not a version manager's shim.
			python = strings.TrimSpace(string(b))
			r.PythonMeasured = true
			refs = append(refs, bench.RefPythonBare, bench.RefPythonBoto3)
		}
		var list []bench.InitTarget
		for _, n := range bench.Keys(targets) {
			list = append(list, targets[n])
		}
		if err := initTrace(r, list, logf); err != nil {
			return err
		}
	}
	pythonCode := map[string]string{
		bench.RefPythonBare:  "pass",
		bench.RefPythonBoto3: "import boto3\nc=[boto3.client(s, region_name='us-east-1') for s in ('dynamodb','scheduler','sns','sqs')]",
	}
	// once runs one target and returns its init: a bootstrap up to its
	// first request for an event (bench.RunToFirstNext), python to its exit
	// (wall time only).
	once := func(name string) (bench.InitRun, error) {
		if code, isPy := pythonCode[name]; isPy {
			start := time.Now()
			cmd := exec.Command(python, "-c", code)
			cmd.Env = bench.LambdaEnv(name, 128)
			cmd.Env = append(cmd.Env, "PATH="+os.Getenv("PATH"), "HOME="+tmp)
			if b, err := cmd.CombinedOutput(); err != nil {
				return bench.InitRun{}, fmt.Errorf("python %s: %w\n%s", name, err, b)
			}
			return bench.InitRun{WallMs: float64(time.Since(start).Microseconds()) / 1000}, nil
		}
		t := targets[name]
		mem := r.Memory[t.Name]
		if mem == 0 {
			mem = 128
		}
		run, err := bench.RunToFirstNext(t.Bin, append(bench.LambdaEnv(t.Name, mem), t.Env...), 30*time.Second)
		if err != nil {
			return run, fmt.Errorf("%s: %w", name, err)
		}
		return run, nil
	}

	logf("cold init: %d functions each next to its floor, %d references alone, %d rounds (plus a warm-up round)",
		len(fns), len(refs), r.Options.InitRuns)
	results, cpu := map[string][]float64{}, map[string][]float64{}
	errs := map[string]string{}
	paired := &bench.ColdInit{Pairs: map[string]bench.PairedInit{}}
	rounds := r.Options.InitRuns + 1 // the first round warms the page cache and is dropped
	for round := 0; round < rounds; round++ {
		for _, u := range bench.PlanRound(fns, refs, rand.Perm, func() bool { return rand.IntN(2) == 0 }) {
			got := map[string]bench.InitRun{}
			for _, name := range u {
				v, err := once(name)
				if err != nil {
					errs[name] = err.Error()
					continue
				}
				got[name] = v
				if round > 0 {
					results[name] = append(results[name], v.WallMs)
					if v.CPUMs > 0 {
						cpu[name] = append(cpu[name], v.CPUMs)
					}
				}
			}
			if len(u) != 2 || round == 0 {
				continue
			}
			fn, floor := u[0], u[1]
			if slices.Contains(fns, floor) && !slices.Contains(fns, fn) {
				fn, floor = floor, fn
			}
			a, okA := got[fn]
			b, okB := got[floor]
			if okA && okB { // a round where either failed counts for neither
				p := paired.Pairs[fn]
				p.Floor = floor
				p.Fn, p.FloorMs = append(p.Fn, a.WallMs), append(p.FloorMs, b.WallMs)
				p.FnCPU, p.FloorCPU = append(p.FnCPU, a.CPUMs), append(p.FloorCPU, b.CPUMs)
				paired.Pairs[fn] = p
			}
		}
		fmt.Fprintf(os.Stderr, ".")
	}
	fmt.Fprintln(os.Stderr)
	paired.Rounds = r.Options.InitRuns
	r.Init, r.InitCPU = results, cpu
	r.InitErrors = errs
	r.ColdInit = paired
	return nil
}

// initTraceRuns is how many GODEBUG=inittrace=1 runs each binary gets.
const initTraceRuns = 5

// initTrace runs each bootstrap directly (no emulator) with
// GODEBUG=inittrace=1 and records its package inits: the runtime prints
// them before main, and lambda.Start then exits, as the runtime API
// address given refuses connections.
func initTrace(r *bench.Report, targets []bench.InitTarget, logf func(string, ...any)) error {
	logf("package init trace: %d targets x %d runs (GODEBUG=inittrace=1)", len(targets), initTraceRuns)
	runs := map[string][][]bench.PkgInit{}
	for round := 0; round < initTraceRuns; round++ {
		for _, i := range rand.Perm(len(targets)) {
			t := targets[i]
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			cmd := exec.CommandContext(ctx, t.Bin)
			cmd.Env = append(append(bench.LambdaEnv(t.Name, 128), "GODEBUG=inittrace=1", "AWS_LAMBDA_RUNTIME_API=127.0.0.1:1"), t.Env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			_ = cmd.Run() // exits non-zero: no runtime API
			cancel()
			tr := bench.ParseInitTrace(stderr.Bytes())
			if len(tr) == 0 {
				return fmt.Errorf("%s: no inittrace lines: %s", t.Name, firstLines(stderr.String(), 5))
			}
			runs[t.Name] = append(runs[t.Name], tr)
		}
	}
	r.InitTrace = map[string][]bench.PkgInit{}
	for n, rs := range runs {
		r.InitTrace[n] = bench.MedianInitTrace(rs)
	}
	r.InitTraceRuns = initTraceRuns
	return nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// synth times `cdk synth` of this app (dev), `cdk list` of it (the same
// app with bundling skipped), and `cdk synth` of an empty Go CDK app with
// one queue in a scratch module, interleaved; then the seven `go build`s
// of bundling against one `go build` of all function packages.
func synth(r *bench.Report, root, goBin, tmp string, fns []string, logf func(string, ...any)) error {
	cdk, err := exec.LookPath("cdk")
	if err != nil {
		return errors.New("no cdk on PATH: run through `make bench` (node_modules/.bin) after `npm ci`")
	}
	empty := filepath.Join(tmp, "emptyapp")
	if err := bench.WriteEmptyApp(empty, root); err != nil {
		return err
	}
	tidy := exec.Command(goBin, "mod", "tidy")
	tidy.Dir = empty
	if b, err := tidy.CombinedOutput(); err != nil {
		return fmt.Errorf("empty app: go mod tidy: %w\n%s", err, b)
	}
	ctx := []string{"-c", "env=dev"}
	if _, err := os.Stat(filepath.Join(root, "web", "dist", "index.html")); err != nil {
		ctx = append(ctx, "-c", "webPlaceholder=true")
		r.WebPlaceholder = true
	}
	// The bundle cache of the warm variant is a folder of this run (filled
	// by the warm-up round); the other variant turns it off.
	cache := "GOFN_CACHE=" + filepath.Join(tmp, "gofn-cache")
	variants := []struct {
		name, dir string
		args      []string
		env       string
	}{
		{bench.SynthEmpty, empty, []string{"synth", "--quiet", "-o", filepath.Join(tmp, "empty.out")}, ""},
		{bench.SynthApp, root, append([]string{"synth", "--quiet", "-o", filepath.Join(tmp, "app.out")}, ctx...), cache},
		{bench.SynthAppNoCache, root, append([]string{"synth", "--quiet", "-o", filepath.Join(tmp, "nocache.out")}, ctx...), "GOFN_CACHE=off"},
		{bench.SynthAppNoBundling, root, append([]string{"list", "-o", filepath.Join(tmp, "list.out")}, ctx...), ""},
	}
	r.SynthCommands = nil
	for _, v := range variants {
		c := strings.TrimSpace(v.env+" cdk "+strings.Join(v.args, " ")) + "  (in " + rel(root, tmp, v.dir) + ")"
		r.SynthCommands = append(r.SynthCommands, strings.ReplaceAll(c, tmp, "$TMP"))
	}
	logf("synth: %d variants x %d runs (plus one warm-up round)", len(variants), r.Options.SynthRuns)
	r.Synth = map[string][]float64{}
	for round := 0; round <= r.Options.SynthRuns; round++ {
		for _, i := range rand.Perm(len(variants)) {
			v := variants[i]
			cmd := exec.Command(cdk, v.args...)
			cmd.Dir = v.dir
			cmd.Env = append(os.Environ(), "CDK_DISABLE_VERSION_CHECK=1")
			if v.env != "" {
				cmd.Env = append(cmd.Env, v.env)
			}
			start := time.Now()
			if b, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: cdk %s: %w\n%s", v.name, strings.Join(v.args, " "), err, b)
			}
			if round > 0 {
				r.Synth[v.name] = append(r.Synth[v.name], time.Since(start).Seconds())
			}
		}
		fmt.Fprintf(os.Stderr, ".")
	}
	fmt.Fprintln(os.Stderr)

	logf("bundling: %d sequential gofn.Build vs one go build of all, %d runs", len(fns), r.Options.BuildRuns)
	r.Builds = map[string][]float64{}
	for round := 0; round < r.Options.BuildRuns; round++ {
		start := time.Now()
		for _, fn := range fns {
			if err := gofn.Build(goBin, root, "lambdas/"+fn, filepath.Join(tmp, "seq", fn, "bootstrap")); err != nil {
				return err
			}
		}
		r.Builds[bench.BuildSequential] = append(r.Builds[bench.BuildSequential], time.Since(start).Seconds())
		start = time.Now()
		if err := buildAll(root, goBin, tmp, fns); err != nil {
			return err
		}
		r.Builds[bench.BuildOne] = append(r.Builds[bench.BuildOne], time.Since(start).Seconds())
	}
	return nil
}

// buildTagged builds entry for this machine's architecture with gofn's
// flags and environment (as recorded), its -tags extended by tags.
func buildTagged(root, tmp, goBin, entry, tags, out string) error {
	recorded, env, err := recordBuild(root, tmp, entry)
	if err != nil {
		return err
	}
	// recorded: build <flags...> -o <out> ./<entry>
	args := []string{"build"}
	for i := 1; i < len(recorded) && recorded[i] != "-o"; i++ {
		a := recorded[i]
		if recorded[i-1] == "-tags" {
			a += "," + tags
		}
		args = append(args, a)
	}
	args = append(args, "-o", out, "./"+entry)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// recordBuild runs gofn.Build with a recording wrapper in place of the go
// command, and returns the arguments and the build environment (GOOS,
// GOARCH, CGO_ENABLED, GOFLAGS) gofn passes: the one-build comparison and
// the doc use gofn's own flags instead of a copy of them.
func recordBuild(root, tmp, entry string) (args, env []string, err error) {
	rec := filepath.Join(tmp, "go-record")
	argsFile := filepath.Join(tmp, "go-args")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$@\" > %q\nenv | grep -E '^(GOOS|GOARCH|CGO_ENABLED|GOFLAGS)=' | sort > %q.env\n", argsFile, argsFile)
	if err := os.WriteFile(rec, []byte(script), 0o755); err != nil {
		return nil, nil, err
	}
	if err := gofn.Build(rec, root, entry, filepath.Join(tmp, "ignored")); err != nil {
		return nil, nil, err
	}
	a, err := os.ReadFile(argsFile)
	if err != nil {
		return nil, nil, err
	}
	e, err := os.ReadFile(argsFile + ".env")
	if err != nil {
		return nil, nil, err
	}
	return strings.Split(strings.TrimSpace(string(a)), "\n"), strings.Split(strings.TrimSpace(string(e)), "\n"), nil
}

// buildAll is the build gofn's bundling now runs once per synth (its
// batch): gofn's flags and environment, every function package in one
// invocation with -o a folder.
func buildAll(root, goBin, tmp string, fns []string) error {
	recorded, env, err := recordBuild(root, tmp, "lambdas/"+fns[0])
	if err != nil {
		return err
	}
	// recorded: build <flags...> -o <out> ./<entry>
	var flags []string
	for i := 1; i < len(recorded) && recorded[i] != "-o"; i++ {
		flags = append(flags, recorded[i])
	}
	outDir := filepath.Join(tmp, "all")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	cmdArgs := append(append([]string{"build"}, flags...), "-o", outDir+string(filepath.Separator))
	for _, fn := range fns {
		cmdArgs = append(cmdArgs, "./lambdas/"+fn)
	}
	cmd := exec.Command(goBin, cmdArgs...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(cmdArgs, " "), err, b)
	}
	return nil
}

// quote single-quotes the arguments that hold a space.
func quote(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if strings.ContainsAny(a, " \t") {
			out[i] = "'" + a + "'"
		}
	}
	return out
}

func rel(root, tmp, dir string) string {
	if dir == root {
		return "the module root"
	}
	return "a scratch module written by internal/tooling/bench.WriteEmptyApp, after `go mod tidy`"
}

// goBenchmarks runs the *_bench_test.go benchmarks.
func goBenchmarks(r *bench.Report, root, goBin, benchtime string) error {
	files, err := filepath.Glob(filepath.Join(root, "*", "*", "*_bench_test.go"))
	if err != nil {
		return err
	}
	more, _ := filepath.Glob(filepath.Join(root, "*", "*", "*", "*_bench_test.go"))
	files = append(files, more...)
	seen := map[string]bool{}
	var pkgs []string
	for _, f := range files {
		d := "./" + filepath.ToSlash(strings.TrimPrefix(filepath.Dir(f), root+string(filepath.Separator)))
		if !seen[d] {
			seen[d] = true
			pkgs = append(pkgs, d)
		}
	}
	sort.Strings(pkgs)
	args := append([]string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", benchtime, "-count", "1"}, pkgs...)
	r.GoBenchCommand = "go " + strings.Join(args, " ")
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", r.GoBenchCommand, err, out)
	}
	r.GoBench, err = bench.ParseGoBench(out)
	return err
}
