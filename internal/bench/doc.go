package bench

import (
	"fmt"
	"math"
	"strings"
)

// The performance budgets.
const (
	InitBudget  = 1.5 // × the bare function, for every function that calls AWS
	SynthBudget = 1.5 // × the empty app
)

// OneVCPUMiB is the memory size at which Lambda gives a function one vCPU
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
const OneVCPUMiB = 1769

// MemorySizes are the sizes the memory table shows.
var MemorySizes = []int{128, 256, 512, 1024, 1769}

// UserFacing are the functions a person waits for: the API and the two
// Cognito triggers on the sign-up and sign-in path.
var UserFacing = map[string]bool{"api": true, "presignup": true, "postauth": true}

// ColdInitTargetMs is the cold init a user-facing function should stay
// under in AWS, estimated at its CPU share.
const ColdInitTargetMs = 50

// NoAWS are the functions that make no AWS call (the init budget does not
// apply to them).
var NoAWS = map[string]bool{"presignup": true}

// IdleBareMs is the bare function's init on this machine's idle core (the
// median the performance page reports for it). Under load every timing here is
// inflated; the memory table divides the medians by LoadFactor so its
// absolute estimates do not depend on how busy the machine was.
const IdleBareMs = 2.9

// LoadFactor is how much slower the bare reference was in this run than
// on an idle core (at least 1).
func (r Report) LoadFactor() float64 {
	bare, ok := r.InitMedian(RefBare)
	if !ok || bare <= IdleBareMs {
		return 1
	}
	return bare / IdleBareMs
}

// EstimatedInitMs scales an init measured on one host core to a function
// of memMiB, which gets memMiB/1769 of a vCPU. It is an upper bound:
// Lambda does not document the CPU share during init.
func EstimatedInitMs(hostMs float64, memMiB int) float64 {
	return hostMs * math.Max(1, float64(OneVCPUMiB)/float64(memMiB))
}

// RecommendMemory picks a memory size from measurement: a background
// function (I/O bound, nobody waits for it) stays at the smallest size; a
// user-facing one gets the smallest size at which its estimated cold init
// is under ColdInitTargetMs.
func RecommendMemory(fn string, hostInitMs float64) int {
	if !UserFacing[fn] {
		return MemorySizes[0]
	}
	for _, m := range MemorySizes {
		if EstimatedInitMs(hostInitMs, m) <= ColdInitTargetMs {
			return m
		}
	}
	return MemorySizes[len(MemorySizes)-1]
}

// AssumedDurationMs are the billed warm durations the cost model assumes
// per invocation (not measured: there is no AWS account here). They are
// dominated by AWS call latency: about 10 ms per DynamoDB or SQS call and
// 20 ms per Scheduler or SNS call from inside the region.
var AssumedDurationMs = map[string]float64{
	"api": 35, "streamprocessor": 15, "cancelworker": 25, "expiry": 45,
	"postauth": 30, "presignup": 2, "reconciler": 1000,
}

// SeedOverheadMs is the extra time per invocation assumed for the seed's
// Python functions (boto3 builds and signs each request in Python, at the
// same CPU share).
const SeedOverheadMs = 15

// SeedInitMs is the assumed cold init of a Python function that imports
// boto3 and creates its clients, used when the machine has no python3
// with boto3 to measure.
const SeedInitMs = 400

// Designs returns the two priced designs: this app (Go, arm64, memory as
// deployed, init as measured) and the seed's (Python on x86_64 at 128 MB,
// the same AWS calls).
func Designs(r Report) []Design {
	ours := Design{Name: "this app (Go, arm64)", Functions: map[string]Function{}, ColdFraction: 0.01,
		PlatformLogBytes: 600, AccessLogBytes: 500}
	seed := Design{Name: "seed (Python, x86_64, 128 MB)", Functions: map[string]Function{}, ColdFraction: 0.01,
		PlatformLogBytes: 600, AccessLogBytes: 500}
	floor, ok := r.InitMedian(RefFloor)
	if !ok {
		floor = 6
	}
	seedInit := SeedInitMs * 1.0
	if py, ok := r.InitMedian(RefPythonBoto3); ok {
		seedInit = EstimatedInitMs(py, 128)
	}
	for fn, d := range AssumedDurationMs {
		mem := r.Memory[fn]
		if mem == 0 {
			mem = 128
		}
		host, ok := r.InitMedian(fn)
		if !ok {
			host = floor
		}
		ours.Functions[fn] = Function{MemoryMiB: float64(mem), Arm: true, DurationMs: d, InitMs: EstimatedInitMs(host, mem)}
		seed.Functions[fn] = Function{MemoryMiB: 128, DurationMs: d + SeedOverheadMs, InitMs: seedInit}
	}
	return []Design{ours, seed}
}

func ms(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func mib(b int64) string { return fmt.Sprintf("%.2f", float64(b)/(1<<20)) }

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func usd(v float64) string {
	if v < 0.01 && v > 0 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

func minMax(xs []float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// initNames lists the measured names: references first, then functions.
func (r Report) initNames() []string {
	var names []string
	names = append(names, RefBare)
	for _, st := range FloorStages {
		names = append(names, st.Name)
	}
	if r.PythonMeasured {
		names = append(names, RefPythonBare, RefPythonBoto3)
	}
	for _, f := range r.Functions {
		names = append(names, f.Name)
	}
	return names
}

// InitTable is the cold-init table.
func (r Report) InitTable() Table {
	bare, _ := r.InitMedian(RefBare)
	floor, _ := r.InitMedian(RefFloor)
	t := Table{Header: []string{"function", "memory (MB)", "binary (MiB)", "zipped (MiB)", "init median (ms)", "min–max (ms)", "runs", "× bare", "× floor"}}
	sizes := map[string]FunctionResult{}
	for _, f := range r.Functions {
		sizes[f.Name] = f
	}
	for _, n := range r.initNames() {
		med, ok := r.InitMedian(n)
		row := []string{n, "", "", "", "–", "", "0", "", ""}
		if f, isFn := sizes[n]; isFn {
			row[1] = fmt.Sprint(r.Memory[n])
			row[2], row[3] = mib(f.BinaryBytes), mib(f.ZipBytes)
		}
		if ok {
			lo, hi := minMax(r.Init[n])
			row[4], row[5], row[6] = ms(med), ms(lo)+"–"+ms(hi), fmt.Sprint(len(r.Init[n]))
			row[7], row[8] = ratio(med, bare), ratio(med, floor)
		}
		if e, failed := r.InitErrors[n]; failed && !ok {
			row[4] = "failed: " + firstLine(e)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// FloorBreakdown is the table of the floor's stages.
func (r Report) FloorBreakdown() Table {
	bare, _ := r.InitMedian(RefBare)
	t := Table{Header: []string{"stage", "what it does at init", "median (ms)", "above bare (ms)", "× bare"}}
	t.Rows = append(t.Rows, []string{RefBare, "lambda.Start only", ms(bare), "0", "1.00×"})
	for _, st := range FloorStages {
		med, ok := r.InitMedian(st.Name)
		if !ok {
			t.Rows = append(t.Rows, []string{st.Name, st.What, "–", "–", "–"})
			continue
		}
		t.Rows = append(t.Rows, []string{st.Name, st.What, ms(med), ms(med - bare), ratio(med, bare)})
	}
	return t
}

// SynthTable is the synth table.
func (r Report) SynthTable() Table {
	empty := Median(r.Synth[SynthEmpty])
	t := Table{Header: []string{"app", "median (s)", "min–max (s)", "runs", "× empty app"}}
	for _, n := range []string{SynthEmpty, SynthApp, SynthAppNoBundling} {
		xs := r.Synth[n]
		if len(xs) == 0 {
			t.Rows = append(t.Rows, []string{n, "–", "", "0", ""})
			continue
		}
		lo, hi := minMax(xs)
		t.Rows = append(t.Rows, []string{n, fmt.Sprintf("%.2f", Median(xs)), fmt.Sprintf("%.2f–%.2f", lo, hi), fmt.Sprint(len(xs)), ratio(Median(xs), empty)})
	}
	return t
}

// BuildTable compares the bundling builds.
func (r Report) BuildTable() Table {
	t := Table{Header: []string{"build (warm cache, linux/arm64, gofn's flags)", "median (s)", "runs"}}
	for _, n := range []string{BuildSequential, BuildOne} {
		xs := r.Builds[n]
		t.Rows = append(t.Rows, []string{n, fmt.Sprintf("%.2f", Median(xs)), fmt.Sprint(len(xs))})
	}
	return t
}

// GoBenchTable lists the go test benchmarks.
func (r Report) GoBenchTable() Table {
	t := Table{Header: []string{"package", "benchmark", "time/op", "B/op", "allocs/op", "other"}}
	for _, b := range r.GoBench {
		var extra []string
		for _, k := range Keys(b.Extra) {
			extra = append(extra, fmt.Sprintf("%.4g %s", b.Extra[k], k))
		}
		t.Rows = append(t.Rows, []string{strings.TrimPrefix(b.Package, "github.com/unschedule/unschedule/"), b.Name,
			dur(b.NsPerOp), fmt.Sprint(b.BytesPerOp), fmt.Sprint(b.AllocsPerOp), strings.Join(extra, ", ")})
	}
	return t
}

func dur(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// UsageTable lists the counted calls per lifecycle.
func (r Report) UsageTable() Table {
	t := Table{Header: []string{"per lifecycle", "API requests", "Lambda invocations", "DynamoDB writes", "DynamoDB reads",
		"Scheduler API calls (free)", "Scheduler invocations", "SQS FIFO requests", "SNS publishes", "emails", "app log bytes"}}
	for _, pu := range r.Usage {
		u := pu.Usage
		var inv []string
		for _, k := range Keys(u.Invocations) {
			if u.Invocations[k] > 0 {
				inv = append(inv, fmt.Sprintf("%s %d", k, u.Invocations[k]))
			}
		}
		var sc []string
		for _, k := range Keys(u.SchedulerCalls) {
			sc = append(sc, fmt.Sprintf("%s %d", k, u.SchedulerCalls[k]))
		}
		t.Rows = append(t.Rows, []string{string(pu.Path), fmt.Sprint(u.APIRequests), strings.Join(inv, ", "),
			fmt.Sprint(Total(u.DynamoWrites)), fmt.Sprint(Total(u.DynamoReads)), strings.Join(sc, ", "),
			fmt.Sprint(u.SchedulerInvocations), fmt.Sprint(u.SQSRequests), fmt.Sprint(u.SNSPublishes),
			fmt.Sprint(u.EmailDeliveries), fmt.Sprint(u.AppLogBytes)})
	}
	return t
}

// CostTable prices a million lifecycles of each path in each design.
func (r Report) CostTable() (Table, error) {
	designs := Designs(r)
	h := []string{"per 1M lifecycles"}
	for _, pu := range r.Usage {
		for _, d := range designs {
			h = append(h, fmt.Sprintf("%s: %s", pu.Path, d.Name))
		}
	}
	t := Table{Header: h}
	costs := make([]Cost, 0)
	for _, pu := range r.Usage {
		for _, d := range designs {
			c, err := ListPrices.Price(pu.Usage, d)
			if err != nil {
				return t, err
			}
			costs = append(costs, c)
		}
	}
	for _, line := range CostLines {
		row := []string{line}
		for _, c := range costs {
			row = append(row, usd(c.Lines[line]*1e6))
		}
		t.Rows = append(t.Rows, row)
	}
	row := []string{"**total**"}
	for _, c := range costs {
		row = append(row, "**"+usd(c.Total()*1e6)+"**")
	}
	t.Rows = append(t.Rows, row)
	return t, nil
}

// PriceTable lists the prices used.
func PriceTable(p Prices) Table {
	t := Table{Header: []string{"item", "USD", "per", "source", "checked"}}
	for _, x := range []Price{p.LambdaRequest, p.LambdaGBSecondArm, p.LambdaGBSecX86, p.APIGatewayREST, p.DynamoWrite,
		p.DynamoRead, p.SchedulerInvocation, p.SQSFIFORequest, p.SNSPublish, p.SNSEmail, p.LogsIngestGB} {
		checked := "yes (against a recent copy of the page)"
		if !x.Confirmed {
			checked = "no: could not be confirmed here; check the page"
		}
		t.Rows = append(t.Rows, []string{x.Unit, fmt.Sprintf("%g", x.USD), fmt.Sprintf("%g", x.Per), x.Source, checked})
	}
	return t
}

// MemoryTable shows the CPU share and estimated cold init per size, and
// the recommendation.
func (r Report) MemoryTable() Table {
	h := []string{"function", "now (MB)"}
	for _, m := range MemorySizes {
		h = append(h, fmt.Sprintf("%d MB (%.3f vCPU)", m, float64(m)/OneVCPUMiB))
	}
	h = append(h, "recommended (MB)")
	t := Table{Header: h}
	names := []string{RefBare, RefFloor}
	for _, f := range r.Functions {
		names = append(names, f.Name)
	}
	for _, n := range names {
		host, ok := r.InitMedian(n)
		host /= r.LoadFactor()
		row := []string{n, ""}
		if m, isFn := r.Memory[n]; isFn {
			row[1] = fmt.Sprint(m)
		}
		for _, m := range MemorySizes {
			if ok {
				row = append(row, ms(EstimatedInitMs(host, m)))
			} else {
				row = append(row, "–")
			}
		}
		rec := ""
		if _, isFn := r.Memory[n]; isFn && ok {
			rec = fmt.Sprint(RecommendMemory(n, host))
		}
		t.Rows = append(t.Rows, append(row, rec))
	}
	return t
}

// InitVerdict says, per function that calls AWS, whether it meets the
// init budget, and the largest ratio to bare.
func (r Report) InitVerdict() (worst string, worstRatio float64, met bool, ok bool) {
	bare, okBare := r.InitMedian(RefBare)
	if !okBare || bare == 0 {
		return "", 0, false, false
	}
	met = true
	for _, f := range r.Functions {
		if NoAWS[f.Name] {
			continue
		}
		med, measured := r.InitMedian(f.Name)
		if !measured {
			return "", 0, false, false
		}
		if q := med / bare; q > worstRatio {
			worst, worstRatio = f.Name, q
		}
	}
	return worst, worstRatio, worstRatio <= InitBudget, true
}

// Summary is the table printed to the terminal.
func Summary(r Report) string {
	var b strings.Builder
	b.WriteString("\nCold init (median ms, " + fmt.Sprint(r.Options.InitRuns) + " runs under the emulator)\n")
	b.WriteString(r.InitTable().Text())
	if len(r.Synth) > 0 {
		b.WriteString("\nSynth\n" + r.SynthTable().Text())
		b.WriteString("\nBundling builds\n" + r.BuildTable().Text())
	}
	if len(r.GoBench) > 0 {
		b.WriteString("\ngo test -bench\n" + r.GoBenchTable().Text())
	}
	if ct, err := r.CostTable(); err == nil {
		b.WriteString("\nCost per 1M lifecycles\n" + ct.Text())
	}
	return b.String()
}
