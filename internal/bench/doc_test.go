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
		{"expiry", 20, 128},   // background: smallest size whatever its init
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
	fns := []FunctionResult{{Name: "presignup"}, {Name: "api"}, {Name: "expiry"}}
	for _, tc := range []struct {
		name    string
		init    map[string][]float64
		worst   string
		met, ok bool
	}{
		{"met", map[string][]float64{RefBare: {2}, "presignup": {9}, "api": {2.8}, "expiry": {2.5}}, "api", true, true},
		{"not met; presignup makes no AWS call and does not count",
			map[string][]float64{RefBare: {2}, "presignup": {1}, "api": {2.8}, "expiry": {4}}, "expiry", false, true},
		{"no bare", map[string][]float64{"api": {2}}, "", false, false},
		{"a function not measured", map[string][]float64{RefBare: {2}, "api": {2}}, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Report{Functions: fns, Init: tc.init}
			worst, _, met, ok := r.InitVerdict()
			if worst != tc.worst || met != tc.met || ok != tc.ok {
				t.Fatalf("got %q %v %v, want %q %v %v", worst, met, ok, tc.worst, tc.met, tc.ok)
			}
		})
	}
}

// RenderDoc of a complete report names the machine, the commands and
// every section, and states each budget's verdict from the numbers.
func TestRenderDoc(t *testing.T) {
	init := map[string][]float64{RefBare: {2, 3, 2}, "api": {6, 6, 7}, "expiry": {5, 5, 5}}
	for i, st := range FloorStages {
		init[st.Name] = []float64{float64(3 + i)}
	}
	var usage []PathUsage
	for _, p := range Paths {
		u, err := CountLifecycle(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		usage = append(usage, PathUsage{Path: p, Usage: u})
	}
	r := Report{
		Options:   Options{InitRuns: 3, SynthRuns: 1, BuildRuns: 1, BenchTime: "1s", Command: "make bench"},
		Machine:   Machine{NumCPU: 2, CPU: "Test CPU", Go: "go version go1.26.8 linux/amd64", OS: "linux/amd64", LoadAvg: "1 1 1"},
		Started:   time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC),
		Finished:  time.Date(2026, 11, 30, 16, 30, 0, 0, time.UTC),
		Functions: []FunctionResult{{Name: "api", BinaryBytes: 10 << 20, ZipBytes: 4 << 20}, {Name: "expiry", BinaryBytes: 9 << 20, ZipBytes: 3 << 20}},
		Memory:    map[string]int{"api": 256, "expiry": 128}, MemoryFrom: "the synthesized dev template",
		Init:           init,
		Synth:          map[string][]float64{SynthEmpty: {3}, SynthApp: {8}, SynthAppNoBundling: {5}},
		Builds:         map[string][]float64{BuildSequential: {4}, BuildOne: {2}},
		SynthCommands:  []string{"cdk synth --quiet"},
		GoBench:        []GoBench{{Package: "github.com/unschedule/unschedule/internal/domain/cancel", Name: "Process100", N: 10, NsPerOp: 2e5}},
		GoBenchCommand: "go test -bench . ./internal/cancel",
		Usage:          usage,
		InitTrace: map[string][]PkgInit{RefFloor: {
			{Pkg: "github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas", ClockMs: 5, Allocs: 3000},
			{Pkg: "github.com/aws/aws-sdk-go-v2/service/sts/internal/endpoints", ClockMs: 1, Allocs: 600},
		}},
		InitTraceRuns: 5,
	}
	doc, err := RenderDoc(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2 CPUs (`nproc`), Test CPU", "go1.26.8", "`make bench`", "2026-11-30 16:00",
		"**not met**: api is at 3.00× bare", // 6 / 2
		"Synth (≤ 1.5× the empty app):** **not met**: 8.00 s against 3.00 s, 2.67×",
		"## Functions: bundle size and cold init", "### Where the floor's time goes", "### Package init: what is left", "### Cold init: what was done",
		"| api | 256 | 10.00 | 4.00 | 6.00 |", "bundling (one `go build` of the 2 functions", "Here that is 2.00 s instead of 4.00 s",
		"what reads the SDK's documented variables", "600 of the 3600", "| `github.com/aws/aws-sdk-go-v2/service/sts/internal/endpoints` |",
		"## `go test -bench`", "| internal/domain/cancel | Process100 | 200.0 µs |", "campaign planner does not exist yet",
		"Only the EventBridge Scheduler execution layer exists today", "seed (Python, x86_64, 128 MB)", "**total**",
		"https://aws.amazon.com/lambda/pricing/", "checked 2026-11-30", "1,769 MB", "| api | 256 |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("doc lacks %q", want)
		}
	}
	if s := Summary(r); !strings.Contains(s, "ref: bare") || !strings.Contains(s, "Cost per 1M lifecycles") {
		t.Errorf("summary:\n%s", s)
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
