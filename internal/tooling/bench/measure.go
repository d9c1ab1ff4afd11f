package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/unschedule/unschedule/constructs/gofn"
)

// pythonCode is what each python reference runs: the interpreter alone,
// and boto3 with the to-do app's four clients.
var pythonCode = map[string]string{
	RefPythonBare:  "pass",
	RefPythonBoto3: "import boto3\nc=[boto3.client(s, region_name='us-east-1') for s in ('dynamodb','scheduler','sns','sqs')]",
}

// coldInit builds every function and the references for this machine's
// architecture and measures their init (RunToFirstNext) in rounds
// (PlanRound): each function next to its own floor and, with all, each
// reference alone. Nothing pins the CPU or sets GOMAXPROCS: why is in
// docs/PERFORMANCE.md ("Each function against its floor").
func (x runner) coldInit(r *Report, fns []string, all bool) error {
	targets, refs, err := x.buildInitTargets(fns, all)
	if err != nil {
		return err
	}
	// Python with boto3, the seed design's runtime, when the machine has it.
	python := ""
	if all {
		if b, err := exec.Command("python3", "-c", "import boto3, sys; print(sys.executable)").Output(); err == nil {
			// The interpreter itself, not a version manager's shim.
			python = strings.TrimSpace(string(b))
			r.PythonMeasured = true
			refs = append(refs, RefPythonBare, RefPythonBoto3)
		}
		if err := initTrace(r, targets); err != nil {
			return err
		}
	}
	// once runs one target up to its first request for an event, python
	// to its exit (wall time only).
	once := func(name string) (InitRun, error) {
		if code, isPy := pythonCode[name]; isPy {
			start := time.Now()
			cmd := exec.Command(python, "-c", code)
			cmd.Env = append(LambdaEnv(name, 128), "PATH="+os.Getenv("PATH"), "HOME="+x.tmp)
			if b, err := cmd.CombinedOutput(); err != nil {
				return InitRun{}, fmt.Errorf("python %s: %w\n%s", name, err, b)
			}
			return InitRun{WallMs: ms64(time.Since(start))}, nil
		}
		t := targets[name]
		mem := cmp.Or(r.Memory[t.Name], 128)
		run, err := RunToFirstNext(t.Bin, append(LambdaEnv(t.Name, mem), t.Env...), 30*time.Second)
		if err != nil {
			return run, fmt.Errorf("%s: %w", name, err)
		}
		return run, nil
	}

	logf("cold init: %d functions each next to its floor, %d references alone, %d rounds (plus a warm-up round)",
		len(fns), len(refs), r.Options.InitRuns)
	r.Init, r.InitCPU, r.InitErrors = map[string][]float64{}, map[string][]float64{}, map[string]string{}
	paired := &ColdInit{Pairs: map[string]PairedInit{}, Rounds: r.Options.InitRuns}
	for round := 0; round <= r.Options.InitRuns; round++ { // round 0 warms the page cache and is dropped
		for _, u := range PlanRound(fns, refs, rand.Perm, func() bool { return rand.IntN(2) == 0 }) {
			got := map[string]InitRun{}
			for _, name := range u {
				v, err := once(name)
				if err != nil {
					r.InitErrors[name] = err.Error()
					continue
				}
				got[name] = v
				if round > 0 {
					r.Init[name] = append(r.Init[name], v.WallMs)
					if v.CPUMs > 0 {
						r.InitCPU[name] = append(r.InitCPU[name], v.CPUMs)
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
	r.ColdInit = paired
	return nil
}

// buildInitTargets builds bare, the functions and their floors (with all,
// the floor's stages too) for this machine, and returns them by name with
// the references that run alone.
func (x runner) buildInitTargets(fns []string, all bool) (map[string]InitTarget, []string, error) {
	// gofn.Build sets GOARCH=arm64 in the go command's environment; this
	// wrapper sets it to the host's before running the real go command.
	wrapper := filepath.Join(x.tmp, "go-host")
	script := fmt.Sprintf("#!/bin/sh\nGOARCH=%s exec %q \"$@\"\n", runtime.GOARCH, x.goBin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return nil, nil, err
	}
	targets := map[string]InitTarget{}
	var refs []string
	// build builds entry once as name, with gofn's flags plus tags (a
	// floor's clients) when there are any.
	build := func(name, entry, tags string, env ...string) error {
		out := filepath.Join(x.tmp, runtime.GOARCH, name, "bootstrap")
		if tags != "" {
			// One floor binary per client set; the stages share one.
			out = filepath.Join(x.tmp, runtime.GOARCH, "floor-"+strings.ReplaceAll(tags, ",", "-"), "bootstrap")
		}
		targets[name] = InitTarget{Name: name, Bin: out, Env: env}
		if _, err := os.Stat(out); err == nil {
			return nil
		}
		if tags == "" {
			return gofn.Build(wrapper, x.root, entry, out)
		}
		return x.goBuild(tags, out, []string{"./" + entry}, "GOARCH="+runtime.GOARCH)
	}
	const floorEntry = "internal/tooling/bench/refs/floor"
	logf("building %d functions and their floors for linux/%s", len(fns), runtime.GOARCH)
	if err := build(RefBare, "internal/tooling/bench/refs/bare", ""); err != nil {
		return nil, nil, err
	}
	if all {
		refs = append(refs, RefBare)
		for _, st := range FloorStages {
			if err := build(st.Name, floorEntry, FloorTags(StageFloorClients), "BENCH_FLOOR_STAGE="+st.Stage); err != nil {
				return nil, nil, err
			}
			refs = append(refs, st.Name)
		}
	}
	sets := FloorSets(fns)
	for _, name := range Keys(sets) {
		if _, done := targets[name]; !done { // the clients stage is
			if err := build(name, floorEntry, FloorTags(sets[name])); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, fn := range fns {
		if err := build(fn, "lambdas/"+fn, ""); err != nil {
			return nil, nil, err
		}
	}
	return targets, refs, nil
}

// initTraceRuns is how many GODEBUG=inittrace=1 runs each binary gets.
const initTraceRuns = 5

// initTrace runs each bootstrap with GODEBUG=inittrace=1 and records its
// package inits; lambda.Start then exits, as the runtime API address
// given refuses connections.
func initTrace(r *Report, targets map[string]InitTarget) error {
	names := Keys(targets)
	logf("package init trace: %d targets x %d runs (GODEBUG=inittrace=1)", len(names), initTraceRuns)
	runs := map[string][][]PkgInit{}
	for range initTraceRuns {
		for _, i := range rand.Perm(len(names)) {
			t := targets[names[i]]
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			cmd := exec.CommandContext(ctx, t.Bin)
			cmd.Env = append(append(LambdaEnv(t.Name, 128), "GODEBUG=inittrace=1", "AWS_LAMBDA_RUNTIME_API=127.0.0.1:1"), t.Env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			_ = cmd.Run() // exits non-zero: no runtime API
			cancel()
			tr := ParseInitTrace(stderr.Bytes())
			if len(tr) == 0 {
				lines := strings.SplitN(stderr.String(), "\n", 6)
				return fmt.Errorf("%s: no inittrace lines: %s", t.Name, strings.Join(lines[:min(5, len(lines))], "\n"))
			}
			runs[t.Name] = append(runs[t.Name], tr)
		}
	}
	r.InitTrace = map[string][]PkgInit{}
	for n, rs := range runs {
		r.InitTrace[n] = MedianInitTrace(rs)
	}
	r.InitTraceRuns = initTraceRuns
	return nil
}

// synth times the Synth* variants interleaved, then the Build* variants.
func (x runner) synth(r *Report, fns []string) error {
	cdk, err := exec.LookPath("cdk")
	if err != nil {
		return errors.New("no cdk on PATH: run through `make bench` (node_modules/.bin) after `npm ci`")
	}
	empty := filepath.Join(x.tmp, "emptyapp")
	if err := WriteEmptyApp(empty, x.root); err != nil {
		return err
	}
	tidy := exec.Command(x.goBin, "mod", "tidy")
	tidy.Dir = empty
	if b, err := tidy.CombinedOutput(); err != nil {
		return fmt.Errorf("empty app: go mod tidy: %w\n%s", err, b)
	}
	ctx := []string{"-c", "env=dev"}
	if _, err := os.Stat(filepath.Join(x.root, "web", "dist", "index.html")); err != nil {
		ctx = append(ctx, "-c", "webPlaceholder=true")
		r.WebPlaceholder = true
	}
	out := func(name string) string { return filepath.Join(x.tmp, name) }
	// The warm variant's bundle cache is a folder of this run.
	variants := []struct {
		name, dir string
		args      []string
		env       string
	}{
		{SynthEmpty, empty, []string{"synth", "--quiet", "-o", out("empty.out")}, ""},
		{SynthApp, x.root, append([]string{"synth", "--quiet", "-o", out("app.out")}, ctx...), "GOFN_CACHE=" + out("gofn-cache")},
		{SynthAppNoCache, x.root, append([]string{"synth", "--quiet", "-o", out("nocache.out")}, ctx...), "GOFN_CACHE=off"},
		{SynthAppNoBundling, x.root, append([]string{"list", "-o", out("list.out")}, ctx...), ""},
	}
	r.SynthCommands = nil
	for _, v := range variants {
		where := "a scratch module written by internal/tooling/bench.WriteEmptyApp, after `go mod tidy`"
		if v.dir == x.root {
			where = "the module root"
		}
		c := strings.TrimSpace(v.env+" cdk "+strings.Join(v.args, " ")) + "  (in " + where + ")"
		r.SynthCommands = append(r.SynthCommands, strings.ReplaceAll(c, x.tmp, "$TMP"))
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
	for range r.Options.BuildRuns {
		start := time.Now()
		for _, fn := range fns {
			if err := gofn.Build(x.goBin, x.root, "lambdas/"+fn, filepath.Join(x.tmp, "seq", fn, "bootstrap")); err != nil {
				return err
			}
		}
		r.Builds[BuildSequential] = append(r.Builds[BuildSequential], time.Since(start).Seconds())
		start = time.Now()
		if err := x.buildAll(fns); err != nil {
			return err
		}
		r.Builds[BuildOne] = append(r.Builds[BuildOne], time.Since(start).Seconds())
	}
	return nil
}

// recordBuild runs gofn.Build with a recording wrapper in place of the go
// command, and returns the arguments and the build environment gofn
// passes, so the other builds and the doc use gofn's own flags.
func (x runner) recordBuild(entry string) (args, env []string, err error) {
	rec, argsFile := filepath.Join(x.tmp, "go-record"), filepath.Join(x.tmp, "go-args")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$@\" > %q\nenv | grep -E '^(GOOS|GOARCH|CGO_ENABLED|GOFLAGS)=' | sort > %q.env\n", argsFile, argsFile)
	if err := os.WriteFile(rec, []byte(script), 0o755); err != nil {
		return nil, nil, err
	}
	if err := gofn.Build(rec, x.root, entry, filepath.Join(x.tmp, "ignored")); err != nil {
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

// goBuild runs `go build <gofn's flags> -o out pkgs...` in the module
// root with gofn's environment plus env; tags extends gofn's -tags.
func (x runner) goBuild(tags, out string, pkgs []string, env ...string) error {
	recorded, genv, err := x.recordBuild(strings.TrimPrefix(pkgs[0], "./"))
	if err != nil {
		return err
	}
	// recorded: build <flags...> -o <out> ./<entry>
	args := []string{"build"}
	for i := 1; i < len(recorded) && recorded[i] != "-o"; i++ {
		a := recorded[i]
		if recorded[i-1] == "-tags" && tags != "" {
			a += "," + tags
		}
		args = append(args, a)
	}
	args = append(append(args, "-o", out), pkgs...)
	cmd := exec.Command(x.goBin, args...)
	cmd.Dir = x.root
	cmd.Env = append(append(os.Environ(), genv...), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// buildAll is gofn's batch build: every function package in one go build.
func (x runner) buildAll(fns []string) error {
	outDir := filepath.Join(x.tmp, "all")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	var pkgs []string
	for _, fn := range fns {
		pkgs = append(pkgs, "./lambdas/"+fn)
	}
	return x.goBuild("", outDir+string(filepath.Separator), pkgs)
}

// goBenchmarks runs the *_bench_test.go benchmarks for r.Options.BenchTime.
func (x runner) goBenchmarks(r *Report) error {
	root := x.root
	files, _ := filepath.Glob(filepath.Join(root, "*", "*", "*_bench_test.go"))
	more, _ := filepath.Glob(filepath.Join(root, "*", "*", "*", "*_bench_test.go"))
	var pkgs []string
	for _, f := range append(files, more...) {
		pkgs = append(pkgs, "./"+filepath.ToSlash(strings.TrimPrefix(filepath.Dir(f), root+string(filepath.Separator))))
	}
	slices.Sort(pkgs)
	args := append([]string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", r.Options.BenchTime, "-count", "1"}, slices.Compact(pkgs)...)
	r.GoBenchCommand = "go " + strings.Join(args, " ")
	cmd := exec.Command(x.goBin, args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", r.GoBenchCommand, err, out)
	}
	r.GoBench, err = ParseGoBench(out)
	return err
}
