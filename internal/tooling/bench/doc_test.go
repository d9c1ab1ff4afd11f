package bench

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRecommendMemory(t *testing.T) {
	for _, tc := range []struct {
		fn     string
		hostMs float64
		want   int
	}{
		{"fire", 20, 128},     // background: smallest size whatever its init
		{"presignup", 3, 128}, // 3 ms × 1769/128 = 41 ms
		{"api", 5, 256},       // 69 ms at 128, 35 ms at 256
		{"postauth", 12, 512}, // 83 ms at 256, 41 ms at 512
		{"api", 100, 1769},    // never under the target: the largest size shown
	} {
		if got := RecommendMemory(tc.fn, tc.hostMs); got != tc.want {
			t.Errorf("RecommendMemory(%s, %v) = %d, want %d", tc.fn, tc.hostMs, got, tc.want)
		}
	}
}

func TestEstimatedInitMs(t *testing.T) {
	for _, tc := range []struct {
		host float64
		mem  int
		want float64
	}{
		{1, 1769, 1},
		{1, 3538, 1}, // more than one vCPU does not speed up one thread
		{2, 128, 2 * 1769 / 128.0},
	} {
		if got := EstimatedInitMs(tc.host, tc.mem); got != tc.want {
			t.Errorf("EstimatedInitMs(%v, %d) = %v, want %v", tc.host, tc.mem, got, tc.want)
		}
	}
}

func TestInitVerdict(t *testing.T) {
	fns := []FunctionResult{{Name: "presignup"}, {Name: "api"}, {Name: "fire"}}
	apiFloor, expiryFloor := FunctionFloor("api"), FunctionFloor("fire")
	for _, tc := range []struct {
		name              string
		init              map[string][]float64
		paired            *ColdInit
		worst             string
		met, resolved, ok bool
	}{
		{"met: each against its own floor; presignup against bare",
			map[string][]float64{RefBare: {2}, apiFloor: {5}, expiryFloor: {4}, "presignup": {2.1}, "api": {5.4}, "fire": {4.1}}, nil, "api", true, true, true},
		{"not met", map[string][]float64{RefBare: {2}, apiFloor: {5}, expiryFloor: {4}, "presignup": {2}, "api": {5}, "fire": {4.8}},
			nil, "fire", false, false, true},
		{"presignup counts against bare", map[string][]float64{RefBare: {2}, apiFloor: {5}, expiryFloor: {4}, "presignup": {3}, "api": {5}, "fire": {4}},
			nil, "presignup", false, false, true},
		{"a floor not measured", map[string][]float64{RefBare: {2}, apiFloor: {5}, "presignup": {2}, "api": {5}, "fire": {4}}, nil, "", false, false, false},
		{"a function not measured", map[string][]float64{RefBare: {2}, apiFloor: {5}, expiryFloor: {4}, "api": {2}}, nil, "", false, false, false},
		// The paired runs decide, not the pooled medians of Init (which
		// would say expiry is at 2×).
		{"paired: met, but an interval reaches above the budget", map[string][]float64{expiryFloor: {4}, "fire": {8}},
			&ColdInit{Pairs: map[string]PairedInit{
				"presignup": {Floor: RefBare, Fn: []float64{2, 2, 2}, FloorMs: []float64{2, 2, 2}},
				"api":       {Floor: apiFloor, Fn: []float64{5, 5, 5}, FloorMs: []float64{5, 5, 5}},
				"fire":      {Floor: expiryFloor, Fn: []float64{4, 4.2, 6}, FloorMs: []float64{4, 4, 4}},
			}}, "fire", true, false, true},
		{"paired: a function without a pair", nil,
			&ColdInit{Pairs: map[string]PairedInit{"api": {Floor: apiFloor, Fn: []float64{5}, FloorMs: []float64{5}}}}, "", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Report{Functions: fns, Init: tc.init, ColdInit: tc.paired}
			v := r.InitVerdict()
			if v.Worst != tc.worst || v.Met != tc.met || v.Resolved != tc.resolved || v.OK != tc.ok {
				t.Fatalf("got %+v, want %q met=%v resolved=%v ok=%v", v, tc.worst, tc.met, tc.resolved, tc.ok)
			}
		})
	}
}

// RenderDoc of a complete report names the machine, its load, the
// commands and every section, states the budget's verdict from the
// numbers, and says nothing about code that no longer exists.
func TestRenderDoc(t *testing.T) {
	apiFloor := FunctionFloor("api")
	init := map[string][]float64{RefBare: {2, 3, 2}, "api": {6, 6, 7}, "fire": {5, 5, 5}, apiFloor: {5}, FunctionFloor("fire"): {4.9}}
	for i, st := range FloorStages {
		init[st.Name] = []float64{float64(3 + i)}
	}
	var usage []PathUsage
	for _, l := range Timers {
		for _, p := range Paths {
			u, err := CountLifecycle(context.Background(), p, l)
			if err != nil {
				t.Fatal(err)
			}
			usage = append(usage, PathUsage{Timer: l, Path: p, Usage: u})
		}
	}
	cu, err := CountCampaignSends(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	r := Report{
		Options: Options{InitRuns: 3, SynthRuns: 1, BuildRuns: 1, BenchTime: "1s", Command: "make bench"},
		Machine: Machine{NumCPU: 2, CPU: "Test CPU", Go: "go version go1.26.8 linux/amd64", OS: "linux/amd64",
			LoadStart: LoadAverage{One: 3.5, Five: 2, Fifteen: 1, Read: true}, LoadEnd: LoadAverage{One: 1.5, Five: 1, Fifteen: 1, Read: true}},
		Started:   time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC),
		Finished:  time.Date(2026, 11, 30, 16, 30, 0, 0, time.UTC),
		Functions: []FunctionResult{{Name: "api", BinaryBytes: 10 << 20, ZipBytes: 4 << 20}, {Name: "fire", BinaryBytes: 9 << 20, ZipBytes: 3 << 20}},
		Memory:    map[string]int{"api": 256, "fire": 128}, MemoryFrom: "the synthesized dev template",
		Init:           init,
		Synth:          map[string][]float64{SynthEmpty: {3}, SynthApp: {6}, SynthAppNoCache: {8}, SynthAppNoBundling: {5}},
		Builds:         map[string][]float64{BuildSequential: {4}, BuildOne: {2}},
		SynthCommands:  []string{"cdk synth --quiet"},
		GoBench:        []GoBench{{Package: "github.com/unschedule/unschedule/internal/core/cancel", Name: "Process100", N: 10, NsPerOp: 2e5}},
		GoBenchCommand: "go test -bench . ./internal/cancel",
		Usage:          usage,
		Campaign:       &cu,
		InitTrace: map[string][]PkgInit{RefFloor: {
			{Pkg: "github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas", ClockMs: 5, Allocs: 3000},
			{Pkg: "github.com/aws/aws-sdk-go-v2/service/sts/internal/endpoints", ClockMs: 1, Allocs: 600},
		}},
		InitTraceRuns: 5,
		ColdInit: &ColdInit{Rounds: 3, Pairs: map[string]PairedInit{
			"api":  {Floor: apiFloor, Fn: []float64{6, 6, 7}, FloorMs: []float64{5, 5, 5}},
			"fire": {Floor: FunctionFloor("fire"), Fn: []float64{5, 5, 5}, FloorMs: []float64{4.9, 4.9, 4.9}},
		}},
	}
	doc, err := RenderDoc(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2 CPUs (`nproc`), Test CPU", "go1.26.8", "`make bench`", "2026-11-30 16:00",
		"3.50 2.00 1.00 at the start, 1.50 1.00 1.00 at the end", "**Warning:** the machine was busy at the start",
		"**not met**: api is at 1.20× its floor (`floor: dynamodb+scheduler+secretsmanager+sns`)", // 6 / 5
		"| api | 256 | 10.00 | 4.00 | 6.00 |", "| floor: dynamodb+scheduler+secretsmanager+sns |",
		"6.00 s against 3.00 s for the empty app, 2.00×",
		"## Functions: bundle size and cold init", "### Where the floor's time goes", "### Package init",
		"### Each function against its floor", "Paired, 3 rounds after the warm-up round",
		"| function | its floor | runs | function median (ms) | IQR (ms) | floor median (ms) | IQR (ms) | × its floor | 95% interval | ≤ 1.1× |",
		"| api | floor: dynamodb+scheduler+secretsmanager+sns | 3 | 6.00 | 6.00–6.50 | 5.00 | 5.00–5.00 | 1.20× | 1.20–1.40× | **no** |",
		"| fire | floor: dynamodb+lambda | 3 | 5.00 | 5.00–5.00 | 4.90 | 4.90–4.90 | 1.02× | 1.02–1.02× | yes |",
		"Nothing pins the CPU or sets `GOMAXPROCS`", "make bench-init",
		"the cache\nsaves 2.00 s per synth of unchanged sources", "`TestBundleCache`",
		"## `go test -bench`", "| internal/core/cancel | Process100 | 200.0 µs |",
		"## Cost per 1M task lifecycles, per timer", "Scheduler: expire", "Step Functions: cancel", "TTL: reschedule",
		"| Step Functions |", "seed (Python, x86_64, 128 MB)", "**total**",
		"## Cost per 1M campaign sends", "One campaign of 10 recipients", "| SES |",
		"https://aws.amazon.com/lambda/pricing/", "https://aws.amazon.com/step-functions/pricing/", "https://aws.amazon.com/ses/pricing/",
		"us-east-1", "2026-12-02", "1,769 MB", "## Method: how to run it", "-quick",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("doc lacks %q", want)
		}
	}
	for _, stale := range []string{"does not exist", "do not exist", "not built", "Issue ", "issue ", "seed 0", "(seed "} {
		if strings.Contains(doc, stale) {
			t.Errorf("doc says %q: describe the current code", stale)
		}
	}
	if s := Summary(r); !strings.Contains(s, "ref: bare") || !strings.Contains(s, "Cost per 1M lifecycles") ||
		!strings.Contains(s, "Cost per 1M campaign sends") || !strings.Contains(s, "against its floor (paired") || !strings.Contains(s, "WARNING: the machine was busy at the start") {
		t.Errorf("summary:\n%s", s)
	}
}

// The campaign send counts are the basis of its cost: pin them.
func TestCountCampaignSends(t *testing.T) {
	u, err := CountCampaignSends(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(m map[string]float64) float64 {
		s := 0.0
		for _, v := range m {
			s += v
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"schedule creates", u.ScheduleCreates, 1},
		{"scheduler invocations", u.SchedulerInvocations, 1},
		{"emails", u.Emails, 1},
		{"send invocations", u.Invocations["campaignsend"], 1},
		// claim and result
		{"task writes by the send function", u.DynamoWrites["task Claim"] + u.DynamoWrites["task Replace"], 2},
		{"idempotency record writes", u.DynamoWrites["idempotency record"], 2},
		{"API writes (the campaign and 100 tasks)", u.DynamoWrites["API: campaign and tasks"], 1.01},
		// The provisioner reads the campaign three times per run.
		{"task and campaign reads", u.DynamoReads["task Get"] + u.DynamoReads["campaign Get"], 2.03},
		{"provisioner runs", u.Invocations["campaignprovision"], 0.01},
		{"progress invocations (one per task write)", u.Invocations["campaignprogress"], 2},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s: got %g per send, want %g (usage %+v)", tc.name, tc.got, tc.want, u)
		}
	}
	if w := sum(u.DynamoWrites); w < 5 || w > 5.1 {
		t.Errorf("writes per send %g, want about 5", w)
	}
	c, err := ListPrices.PriceCampaign(u, Designs(Report{})[0])
	if err != nil {
		t.Fatal(err)
	}
	if ses := c.Lines["SES"] * 1e6; math.Abs(ses-100) > 1e-6 {
		t.Errorf("SES per 1M sends: $%g, want $100", ses)
	}
}

func TestWriteEmptyApp(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	mod := "module x\n\nrequire (\n\tgithub.com/aws/aws-cdk-go/awscdk/v2 v2.1.0\n\tgithub.com/aws/constructs-go/constructs/v10 v10.2.0\n\tgithub.com/aws/jsii-runtime-go v1.3.0\n\tgithub.com/other/mod v1.0.0\n)\n"
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.sum"), []byte("sums\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteEmptyApp(dir, root); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"awscdk/v2 v2.1.0", "constructs/v10 v10.2.0", "jsii-runtime-go v1.3.0"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "other/mod") {
		t.Errorf("go.mod requires more than the CDK modules:\n%s", got)
	}
	for _, f := range []string{"go.sum", "main.go", "cdk.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteEmptyApp(t.TempDir(), root); err == nil || !strings.Contains(err.Error(), "should require") {
		t.Errorf("go.mod without the CDK: got %v", err)
	}
}

func TestLoadFactor(t *testing.T) {
	for _, tc := range []struct {
		bare []float64
		want float64
	}{
		{nil, 1},
		{[]float64{2}, 1}, // faster than the idle figure: no correction
		{[]float64{29, 29, 29}, 10},
	} {
		r := Report{Init: map[string][]float64{RefBare: tc.bare}}
		if got := r.LoadFactor(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("LoadFactor(bare %v) = %v, want %v", tc.bare, got, tc.want)
		}
	}
}
