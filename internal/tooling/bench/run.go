package bench

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/unschedule/unschedule/constructs/gofn"
)

// Config is cmd/bench's flags: the recorded Options and what to run.
type Config struct {
	Options
	// Out is the doc to write ("" to only print); From a saved report to
	// render again instead of measuring (GoBench: run the go benchmarks
	// again first); Only "coldinit" or "cost"; Functions the comma-separated
	// functions of -only coldinit; SkipList the comma-separated parts to skip.
	Out, From, Only, Functions, SkipList string
	GoBench                              bool
}

// ErrUsage: -only names a part that does not run alone.
var ErrUsage = errors.New("the parts that run alone are coldinit and cost")

// campaignRecipients is the size of the campaign whose sends are counted.
const campaignRecipients = 1000

// runner is one run's module root, go command and scratch folder.
type runner struct {
	root, goBin, tmp string
}

func logf(format string, a ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...) }

// Run runs cmd/bench as c says, from the module root.
func Run(c Config) error {
	if c.Quick {
		c.InitRuns, c.SynthRuns, c.BuildRuns, c.BenchTime = 2, 1, 1, "100ms"
	}
	c.Skip = append(c.Skip, strings.FieldsFunc(c.SkipList, func(r rune) bool { return r == ',' })...)
	if c.Only != "" && c.Only != "coldinit" && c.Only != "cost" && c.From == "" {
		return fmt.Errorf("-only %q: %w", c.Only, ErrUsage)
	}
	x := runner{}
	var err error
	if x.root, err = os.Getwd(); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(x.root, "go.mod")); err != nil {
		return errors.New("run from the module root (where go.mod is)")
	}
	if x.goBin, err = exec.LookPath("go"); err != nil {
		return err
	}
	if x.tmp, err = os.MkdirTemp("", "unschedule-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(x.tmp)
	fns, err := functions(x.root)
	if err != nil {
		return err
	}
	switch {
	case c.From != "":
		return x.rerender(c)
	case c.Only == "cost":
		return runCostOnly(x.root, fns)
	}
	r := Report{Options: c.Options, Started: time.Now().UTC(), Machine: machine(x.goBin)}
	r.Machine.LoadStart = loadAvg()
	if c.Only == "coldinit" {
		return x.coldInitOnly(r, fns, c.Functions)
	}
	for _, w := range r.Machine.LoadWarnings() {
		logf("WARNING: %s", w)
	}
	if err := x.measure(&r, fns); err != nil {
		return err
	}
	r.Machine.LoadEnd = loadAvg()
	if err := countUsage(&r); err != nil {
		return err
	}
	r.Finished = time.Now().UTC()
	// Kept, so -from can render the doc again without measuring.
	x.save("bench-report.json", r)
	return write(r, c.Out)
}

// measure builds each function for linux/arm64 and takes its sizes,
// then runs the parts not skipped.
func (x runner) measure(r *Report, fns []string) error {
	r.Memory, r.MemoryFrom = memorySizes(filepath.Join(x.root, "cdk.out"), fns)
	args, env, err := x.recordBuild("lambdas/" + fns[0])
	if err != nil {
		return err
	}
	for i, a := range args { // quoted when it holds a space
		if strings.ContainsAny(a, " \t") {
			args[i] = "'" + a + "'"
		}
	}
	r.BuildCommand = strings.Join(env, " ") + " go " + strings.ReplaceAll(strings.Join(args, " "), x.tmp, "$TMP")
	logf("building %d functions for linux/arm64 with gofn.Build", len(fns))
	for _, fn := range fns {
		out := filepath.Join(x.tmp, "arm64", fn, "bootstrap")
		if err := gofn.Build(x.goBin, x.root, "lambdas/"+fn, out); err != nil {
			return err
		}
		raw, zipped, err := sizes(out)
		if err != nil {
			return err
		}
		r.Functions = append(r.Functions, FunctionResult{Name: fn, BinaryBytes: raw, ZipBytes: zipped})
	}
	if !r.Options.Skipped("synth") {
		if err := x.synth(r, fns); err != nil {
			return err
		}
		// The memory sizes as synthesized just now.
		r.Memory, r.MemoryFrom = memorySizes(filepath.Join(x.tmp, "app.out"), fns)
	}
	if !r.Options.Skipped("init") {
		if err := x.coldInit(r, fns, true); err != nil {
			return err
		}
	}
	if !r.Options.Skipped("gobench") {
		logf("go test -bench")
		return x.goBenchmarks(r)
	}
	return nil
}

// save writes r as bin/<name> (best effort).
func (x runner) save(name string, r Report) {
	if b, err := json.MarshalIndent(r, "", " "); err == nil {
		_ = os.MkdirAll(filepath.Join(x.root, "bin"), 0o755)
		_ = os.WriteFile(filepath.Join(x.root, "bin", name), b, 0o644)
	}
}

// coldInitOnly measures each function (of list, or every one) against
// its floor and prints the table and the load averages; the doc is not
// written (its other sections would be lost).
func (x runner) coldInitOnly(r Report, fns []string, list string) error {
	logf("load average at the start: %s", r.Machine.LoadStart)
	if list != "" {
		all := fns
		fns = strings.Split(list, ",")
		for _, f := range fns {
			if !slices.Contains(all, f) {
				return fmt.Errorf("-functions: no lambdas/%s/main.go", f)
			}
		}
	}
	for _, fn := range fns {
		r.Functions = append(r.Functions, FunctionResult{Name: fn})
	}
	r.Memory, r.MemoryFrom = memorySizes(filepath.Join(x.root, "cdk.out"), fns)
	if err := x.coldInit(&r, fns, false); err != nil {
		return err
	}
	r.Machine.LoadEnd = loadAvg()
	r.Finished = time.Now().UTC()
	x.save("bench-init.json", r)
	v := r.InitVerdict()
	fmt.Printf("\nCold init against its floor: %d rounds (paired, random order), %s to %s UTC\n",
		r.ColdInit.Rounds, r.Started.Format("2006-01-02 15:04"), r.Finished.Format("15:04"))
	fmt.Print(r.ColdInitTable().Text())
	fmt.Printf("\nLoad average (1, 5, 15 min): %s at the start, %s at the end\n", r.Machine.LoadStart, r.Machine.LoadEnd)
	if v.OK {
		fmt.Printf("Budget (≤ %.1f× its floor): met=%v, highest %s at %.2f×, every interval within: %v\n", InitBudget, v.Met, v.Worst, v.Ratio, v.Resolved)
	}
	for _, w := range r.Machine.LoadWarnings() {
		fmt.Println("WARNING:", w)
	}
	return nil
}

// runCostOnly counts the task lifecycles and prints the doc's cost
// section, with memory sizes from cdk.out (or CDK_OUT) and no cold init
// measured.
func runCostOnly(root string, fns []string) error {
	dir := cmp.Or(os.Getenv("CDK_OUT"), filepath.Join(root, "cdk.out"))
	r := Report{}
	r.Memory, r.MemoryFrom = memorySizes(dir, fns)
	logf("memory sizes: %s", r.MemoryFrom)
	if err := countUsage(&r); err != nil {
		return err
	}
	s, err := TaskCostSection(r)
	if err != nil {
		return err
	}
	fmt.Print(s)
	return nil
}

// countUsage counts the AWS calls of each lifecycle on each timer, of a
// campaign's sends and of a reconciler pass (deterministic: -from counts
// them again).
func countUsage(r *Report) error {
	ctx := context.Background()
	r.Usage = nil
	for _, l := range Timers {
		for _, p := range Paths {
			u, err := CountLifecycle(ctx, p, l)
			if err != nil {
				return fmt.Errorf("count %s on %s: %w", p, l, err)
			}
			r.Usage = append(r.Usage, PathUsage{Timer: l, Path: p, Usage: u})
		}
	}
	cu, err := CountCampaignSends(ctx, campaignRecipients)
	if err != nil {
		return fmt.Errorf("count campaign sends: %w", err)
	}
	r.Campaign = &cu
	r.ReconcileReads = nil
	for _, n := range ReconcileReadSizes {
		rs, err := MeasureReconcileReads(ctx, n, ReconcileArmedEvery)
		if err != nil {
			return fmt.Errorf("count reconciler reads: %w", err)
		}
		r.ReconcileReads = append(r.ReconcileReads, rs...)
	}
	return nil
}

// write prints the summary and writes the doc to out ("" for none).
func write(r Report, out string) error {
	doc, err := RenderDoc(r)
	if err != nil {
		return err
	}
	fmt.Print(Summary(r))
	if out == "" {
		return nil
	}
	if err := os.WriteFile(out, []byte(doc), 0o644); err != nil {
		return err
	}
	logf("wrote %s", out)
	return nil
}

// rerender renders the doc from a saved report, with the go benchmarks
// run again when c.GoBench.
func (x runner) rerender(c Config) error {
	b, err := os.ReadFile(c.From)
	if err != nil {
		return err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", c.From, err)
	}
	if c.GoBench {
		r.Options.BenchTime = c.BenchTime
		r.GoBenchAt = time.Now().UTC()
		if err := x.goBenchmarks(&r); err != nil {
			return err
		}
	}
	if err := countUsage(&r); err != nil {
		return err
	}
	return write(r, c.Out)
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
	slices.Sort(fns)
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
	if err == nil {
		_, err = w.Write(b)
	}
	if err == nil {
		err = zw.Close()
	}
	return int64(len(b)), int64(buf.Len()), err
}

func machine(goBin string) Machine {
	m := Machine{NumCPU: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH}
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

// loadAvg reads the load average (not Read where there is no /proc/loadavg).
func loadAvg() LoadAverage {
	b, _ := os.ReadFile("/proc/loadavg")
	l, _ := ParseLoadAvg(b)
	return l
}

// memorySizes reads each function's memory from the dev template in the
// cloud assembly dir, matching a function to its folder by its role's
// description (set by gofn); without one, gofn's default, 128.
func memorySizes(dir string, fns []string) (sizes map[string]int, from string) {
	out := map[string]int{}
	for _, fn := range fns {
		out[fn] = 128
	}
	b, err := os.ReadFile(filepath.Join(dir, "Unschedule-dev.template.json"))
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
		role, _ := res.Properties["Role"].(map[string]any)
		ga, _ := role["Fn::GetAtt"].([]any)
		if res.Type != "AWS::Lambda::Function" || len(ga) == 0 {
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
