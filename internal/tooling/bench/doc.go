package bench

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// InitBudget is the cold-init budget: every function at most this many
// times its floor (the SDK set up with the same clients, loaded with the
// standard configuration; bare for a function that calls no AWS API).
const InitBudget = 1.1

// OneVCPUMiB is the memory size at which Lambda gives a function one vCPU
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
const OneVCPUMiB = 1769

// MemorySizes are the sizes the memory table shows.
var MemorySizes = []int{128, 256, 512, 1024, 1769}

// UserFacing are the functions a person waits for: the API and the
// Cognito triggers on the sign-up, confirmation and sign-in path.
var UserFacing = map[string]bool{"api": true, "presignup": true, "postauth": true, "postconfirmation": true}

// ColdInitTargetMs is the cold init a user-facing function should stay
// under in AWS, estimated at its CPU share.
const ColdInitTargetMs = 50

// IdleBareMs is the bare function's median init on this machine's idle
// core: the memory table divides by LoadFactor so its estimates do not
// depend on how busy the machine was.
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

// AssumedDurationMs are the billed warm durations per invocation (not
// measured: no AWS account here), about 10 ms per DynamoDB or SQS call and
// 20 ms per Scheduler or SNS call.
var AssumedDurationMs = map[string]float64{
	"api": 35, "streamprocessor": 15, "cancelworker": 25,
	// todofire runs its target inside: claim, read, publish, record.
	"todofire": 50,
	"postauth": 30, "presignup": 2, "postconfirmation": 20, "reconciler": 1000,
	// campaignsend: two reads, claim, idempotency record, SES, receipt,
	// result; the provisioner is paced at 50 CreateSchedule calls a second.
	"campaignsend": 80, "campaignprovision": 20, "campaignprogress": 30, "campaignapi": 100,
}

// SeedOverheadMs is the extra time per invocation assumed for the seed's
// Python functions (boto3 builds and signs each request in Python).
const SeedOverheadMs = 15

// SeedInitMs is the assumed cold init of a Python function with boto3
// and its clients, when there is no python3 with boto3 to measure.
const SeedInitMs = 400

// Designs returns the two priced designs: this app (Go, arm64, memory as
// deployed, init as measured) and the seed's (Python on x86_64 at 128 MB,
// the same AWS calls).
func Designs(r Report) []Design {
	design := func(name string) Design {
		return Design{Name: name, Functions: map[string]Function{}, ColdFraction: 0.01, PlatformLogBytes: 600, AccessLogBytes: 500}
	}
	ours, seed := design("this app (Go, arm64)"), design("seed (Python, x86_64, 128 MB)")
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
		// The seed had no campaigns.
		if !strings.HasPrefix(fn, "campaign") {
			seed.Functions[fn] = Function{MemoryMiB: 128, DurationMs: d + SeedOverheadMs, InitMs: seedInit}
		}
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

// initNames lists the measured names: references first, then functions.
func (r Report) initNames() []string {
	names := []string{RefBare}
	for _, st := range FloorStages {
		names = append(names, st.Name)
	}
	var fns []string
	for _, f := range r.Functions {
		fns = append(fns, f.Name)
	}
	for _, n := range Keys(FloorSets(fns)) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if r.PythonMeasured {
		names = append(names, RefPythonBare, RefPythonBoto3)
	}
	return append(names, fns...)
}

// InitTable is the cold-init table of every function and reference:
// sizes, medians and the ratio to bare (each function against its own
// floor is ColdInitTable).
func (r Report) InitTable() Table {
	bare, _ := r.InitMedian(RefBare)
	t := Table{Header: []string{"function or reference", "memory (MB)", "binary (MiB)", "zipped (MiB)", "init median (ms)", "min–max (ms)",
		"runs", "× bare"}}
	sizes := map[string]FunctionResult{}
	for _, f := range r.Functions {
		sizes[f.Name] = f
	}
	for _, n := range r.initNames() {
		med, ok := r.InitMedian(n)
		row := []string{n, "", "", "", "–", "", "0", ""}
		if f, isFn := sizes[n]; isFn {
			row[1] = fmt.Sprint(r.Memory[n])
			row[2], row[3] = mib(f.BinaryBytes), mib(f.ZipBytes)
		}
		if ok {
			lo, hi := Quantile(r.Init[n], 0), Quantile(r.Init[n], 1)
			row[4], row[5], row[6] = ms(med), ms(lo)+"–"+ms(hi), fmt.Sprint(len(r.Init[n]))
			row[7] = ratio(med, bare)
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
	t := Table{Header: []string{"stage (DynamoDB, Scheduler, SNS, SQS)", "what it does at init", "median (ms)", "above bare (ms)", "× bare"}}
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
	for _, n := range []string{SynthEmpty, SynthApp, SynthAppNoCache, SynthAppNoBundling} {
		xs := r.Synth[n]
		if len(xs) == 0 {
			t.Rows = append(t.Rows, []string{n, "–", "", "0", ""})
			continue
		}
		lo, hi := Quantile(xs, 0), Quantile(xs, 1)
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

// timerLabels name the timers in the tables (Scheduler for the others).
var timerLabels = map[timerspec.Name]string{timerspec.StepFunctions: "Step Functions", timerspec.TTL: "TTL"}

func timerLabel(l timerspec.Name) string {
	return cmp.Or(timerLabels[l], "Scheduler")
}

// UsageTable lists the counted calls per lifecycle and timer.
func (r Report) UsageTable() Table {
	t := Table{Header: []string{"timer", "per lifecycle", "API requests", "Lambda invocations", "DynamoDB writes", "DynamoDB reads",
		"Scheduler API calls (free; Arm is CreateSchedule, Move UpdateSchedule, Disarm DeleteSchedule)", "Scheduler invocations", "executions started", "state transitions", "TTL marker writes",
		"TTL stream records (free)", "SQS FIFO requests", "SNS publishes", "emails", "app log bytes"}}
	for _, pu := range r.Usage {
		u := pu.Usage
		t.Rows = append(t.Rows, []string{timerLabel(pu.Timer), string(pu.Path), fmt.Sprint(u.APIRequests), counts(u.Invocations, true),
			fmt.Sprint(Total(u.DynamoWrites)), fmt.Sprint(Total(u.DynamoReads)), counts(u.SchedulerCalls, false),
			fmt.Sprint(u.SchedulerInvocations), fmt.Sprint(u.Executions), fmt.Sprint(u.StateTransitions), fmt.Sprint(u.MarkerWrites),
			fmt.Sprint(u.StreamReads), fmt.Sprint(u.SQSRequests), fmt.Sprint(u.SNSPublishes),
			fmt.Sprint(u.EmailDeliveries), fmt.Sprint(u.AppLogBytes)})
	}
	return t
}

// counts lists m as "key n, …" in key order, without the zeros if nonzero.
func counts(m map[string]int, nonzero bool) string {
	var out []string
	for _, k := range Keys(m) {
		if m[k] > 0 || !nonzero {
			out = append(out, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(out, ", ")
}

// costTable is a column per cost, a row per line of lines and the total.
func costTable(corner string, lines, heads []string, costs []Cost) Table {
	t := Table{Header: append([]string{corner}, heads...)}
	for _, line := range append(append([]string(nil), lines...), "**total**") {
		row := []string{line}
		for _, c := range costs {
			if line == "**total**" {
				row = append(row, "**"+usd(c.Total()*1e6)+"**")
			} else {
				row = append(row, usd(c.Lines[line]*1e6))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// CostTable prices a million lifecycles of each path on each timer, in
// this app's design.
func (r Report) CostTable() (Table, error) {
	return r.lifecycleCosts("per 1M lifecycles", Designs(r)[:1], func(pu PathUsage, _ Design) string {
		return timerLabel(pu.Timer) + ": " + string(pu.Path)
	})
}

// SeedCostTable compares this app with the seed's design on the
// Scheduler timer (the seed's only one).
func (r Report) SeedCostTable() (Table, error) {
	return r.lifecycleCosts("per 1M lifecycles (Scheduler)", Designs(r), func(pu PathUsage, d Design) string {
		if pu.Timer != timerspec.EventBridgeScheduler && pu.Timer != "" {
			return ""
		}
		return fmt.Sprintf("%s: %s", pu.Path, d.Name)
	})
}

// lifecycleCosts prices each usage in each design as a column, headed by
// head ("" leaves the pair out).
func (r Report) lifecycleCosts(corner string, designs []Design, head func(PathUsage, Design) string) (Table, error) {
	var heads []string
	var costs []Cost
	for _, pu := range r.Usage {
		for _, d := range designs {
			h := head(pu, d)
			if h == "" {
				continue
			}
			c, err := ListPrices.Price(pu.Usage, d)
			if err != nil {
				return Table{}, err
			}
			heads, costs = append(heads, h), append(costs, c)
		}
	}
	return costTable(corner, CostLines, heads, costs), nil
}

// CampaignUsageTable lists a campaign send's counted calls.
func (r Report) CampaignUsageTable() Table {
	t := Table{Header: []string{"per send", "count", "billed"}}
	if r.Campaign == nil {
		return t
	}
	u := r.Campaign
	f := func(v float64) string { return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".") }
	for _, k := range Keys(u.Invocations) {
		t.Rows = append(t.Rows, []string{"Lambda invocation: " + k, f(u.Invocations[k]), "yes"})
	}
	for _, k := range Keys(u.DynamoWrites) {
		t.Rows = append(t.Rows, []string{"DynamoDB write: " + k, f(u.DynamoWrites[k]), "yes"})
	}
	for _, k := range Keys(u.DynamoReads) {
		t.Rows = append(t.Rows, []string{"DynamoDB read units: " + k, f(u.DynamoReads[k]), "yes"})
	}
	t.Rows = append(t.Rows,
		[]string{"CreateSchedule", f(u.ScheduleCreates), "no (API calls are free)"},
		[]string{"DeleteSchedule", "0", "no: the schedule deletes itself after it fires (ActionAfterCompletion DELETE)"},
		[]string{"Scheduler invocation", f(u.SchedulerInvocations), "yes"},
		[]string{"SES message", f(u.Emails), "yes"})
	return t
}

// CampaignCostTable prices a million campaign sends in this app's design.
func (r Report) CampaignCostTable() (Table, error) {
	if r.Campaign == nil {
		return Table{Header: []string{"per 1M campaign sends", "this app (Go, arm64)"}}, nil
	}
	c, err := ListPrices.PriceCampaign(*r.Campaign, Designs(r)[0])
	return costTable("per 1M campaign sends", CampaignCostLines, []string{"this app (Go, arm64)"}, []Cost{c}), err
}

// PriceTable lists the prices used.
func PriceTable(p Prices) Table {
	t := Table{Header: []string{"item", "USD", "per", "source", "checked", "confirmed"}}
	for _, x := range p.All() {
		confirmed := "yes (against a recent copy of the page)"
		if !x.Confirmed {
			confirmed = "no: could not be confirmed here; check the page"
		}
		t.Rows = append(t.Rows, []string{x.Unit, fmt.Sprintf("%g", x.USD), fmt.Sprintf("%g", x.Per), x.Source, x.Checked, confirmed})
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

// Verdict says whether every function Met the init budget against its
// own floor (the ratio of the medians of the paired runs), which is the
// Worst (its Floor and Ratio), and whether every interval is within the
// budget too (Resolved: it does not depend on this run's noise). OK is
// false when a function or its floor was not measured.
type Verdict struct {
	Worst, Floor      string
	Ratio             float64
	Met, Resolved, OK bool
}

// InitVerdict is the run's Verdict.
func (r Report) InitVerdict() Verdict {
	if len(r.Functions) == 0 {
		return Verdict{}
	}
	v := Verdict{Resolved: true, OK: true}
	pairs := r.Paired()
	for _, f := range r.Functions {
		s := pairs.Pairs[f.Name].Stats(f.Name)
		if s.Ratio == 0 { // not measured, or no pair
			return Verdict{}
		}
		if s.Ratio > v.Ratio {
			v.Worst, v.Ratio = f.Name, s.Ratio
		}
		v.Resolved = v.Resolved && s.RatioHi <= InitBudget
	}
	v.Floor, v.Met = FunctionFloor(v.Worst), v.Ratio <= InitBudget
	return v
}

// Summary is the table printed to the terminal.
func Summary(r Report) string {
	var b strings.Builder
	section := func(title string, t Table) { b.WriteString("\n" + title + "\n" + t.Text()) }
	section(fmt.Sprintf("Cold init (median ms, %d rounds)", r.Options.InitRuns), r.InitTable())
	section("Cold init against its floor (paired, same rounds)", r.ColdInitTable())
	if len(r.Synth) > 0 {
		section("Synth", r.SynthTable())
		section("Bundling builds", r.BuildTable())
	}
	if len(r.GoBench) > 0 {
		section("go test -bench", r.GoBenchTable())
	}
	if ct, err := r.CostTable(); err == nil {
		section("Cost per 1M lifecycles", ct)
	}
	if ct, err := r.CampaignCostTable(); err == nil && r.Campaign != nil {
		section("Cost per 1M campaign sends", ct)
	}
	for _, w := range r.Machine.LoadWarnings() {
		b.WriteString("\nWARNING: " + w + "\n")
	}
	return b.String()
}
