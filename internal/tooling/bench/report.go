package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// Options are cmd/bench's settings, recorded in the doc: Quick is
// -quick, Command how the run was started.
type Options struct {
	InitRuns, SynthRuns, BuildRuns int
	BenchTime                      string
	Skip                           []string
	Quick                          bool
	Command                        string
}

// Skipped reports whether part (init, synth, gobench) was skipped.
func (o Options) Skipped(part string) bool { return slices.Contains(o.Skip, part) }

// Machine describes where the numbers were taken, and how busy it was
// at the start and at the end of the run (/proc/loadavg).
type Machine struct {
	NumCPU             int
	CPU, Go            string
	OS                 string
	LoadStart, LoadEnd LoadAverage
}

// FunctionResult is one function's bundle.
type FunctionResult struct {
	Name                  string
	BinaryBytes, ZipBytes int64
}

// InitTarget is a bootstrap whose init is measured, with Env added to LambdaEnv.
type InitTarget struct {
	Name, Bin string
	Env       []string
}

// PathUsage is the counted usage of one lifecycle on one timer.
type PathUsage struct {
	Timer timerspec.Name
	Path  Path
	Usage Usage
}

// Names of the references and measurements.
const (
	RefBare        = "ref: bare"
	RefPythonBare  = "ref: python3 (interpreter only)"
	RefPythonBoto3 = "ref: python3 + boto3 + 4 clients"

	SynthEmpty         = "empty Go CDK app, one queue (cdk synth)"
	SynthApp           = "this app, dev (cdk synth, warm bundle cache)"
	SynthAppNoCache    = "this app, dev, bundle cache off (cdk synth)"
	SynthAppNoBundling = "this app, dev, no bundling (cdk list)"

	BuildSequential = "gofn.Build of each function, one after the other (what bundling did)"
	BuildOne        = "one go build of every lambdas/* package (what bundling does: constructs/gofn)"
)

// FloorStage is a variant of the floor reference (internal/tooling/bench/refs/floor).
type FloorStage struct {
	Name, Stage, What string
}

// RefFloor is the floor whose set-up is broken down by stage:
// LoadDefaultConfig and the to-do app's four clients, which is how the
// mains set up the SDK (internal/core/lambdaenv/awsenv).
const RefFloor = "floor: dynamodb+scheduler+sns+sqs"

// FloorStages are the floor's variants, in set-up order.
var FloorStages = []FloorStage{
	{Name: "stage: SDK package init only", Stage: "imports", What: "imports config + 4 service packages, calls nothing"},
	{Name: "stage: + LoadDefaultConfig", Stage: "loadconfig", What: "config.LoadDefaultConfig, no client"},
	{Name: RefFloor, Stage: "clients", What: "LoadDefaultConfig + DynamoDB, Scheduler, SNS, SQS clients (what the mains do: `internal/core/lambdaenv/awsenv`)"},
	{Name: "stage: env config + 4 clients", Stage: "envconfig", What: "aws.Config from AWS_REGION and the credential variables alone, 4 clients (ignores the SDK's other variables)"},
	{Name: "stage: env config, lazy clients", Stage: "envconfig-lazy", What: "aws.Config from those variables alone, clients on first use"},
}

// Report is everything one `make bench` run measured (saved as JSON, so
// keep the field names): Memory each function's size in the dev stack,
// read from MemoryFrom; Init the init durations (ms) and InitCPU their CPU
// time, by name; Synth and Builds wall seconds by variant; BuildCommand
// the go command gofn.Build runs; GoBenchAt set when -from -gobench ran
// them again; InitTrace each binary's median package inits, longest
// first; ColdInit nil in a run made before it (Paired then pairs Init).
type Report struct {
	Options           Options
	Machine           Machine
	Started, Finished time.Time
	Functions         []FunctionResult
	Memory            map[string]int
	MemoryFrom        string
	Init              map[string][]float64
	InitErrors        map[string]string
	InitCPU           map[string][]float64
	PythonMeasured    bool
	Synth, Builds     map[string][]float64
	SynthCommands     []string
	BuildCommand      string
	WebPlaceholder    bool
	GoBench           []GoBench
	GoBenchCommand    string
	GoBenchAt         time.Time
	Usage             []PathUsage
	InitTrace         map[string][]PkgInit
	InitTraceRuns     int
	Campaign          *CampaignUsage
	ReconcileReads    []ReconcileReads
	ColdInit          *ColdInit
}

// Paired is ColdInit, or for an older run the i-th run of each function
// with the i-th of its floor (those were interleaved by round too).
func (r Report) Paired() ColdInit {
	if r.ColdInit != nil {
		return *r.ColdInit
	}
	c := ColdInit{Pairs: map[string]PairedInit{}}
	for _, f := range r.Functions {
		floor := FunctionFloor(f.Name)
		a, b := r.Init[f.Name], r.Init[floor]
		n := min(len(a), len(b))
		c.Pairs[f.Name] = PairedInit{Floor: floor, Fn: a[:n], FloorMs: b[:n]}
		c.Rounds = max(c.Rounds, n)
	}
	return c
}

// InitMedian returns the median init (ms) of name, if measured.
func (r Report) InitMedian(name string) (float64, bool) {
	xs := r.Init[name]
	return Median(xs), len(xs) > 0
}

var modRequire = regexp.MustCompile(`(?m)^\s*(github\.com/aws/(?:aws-cdk-go/awscdk/v2|constructs-go/constructs/v10|jsii-runtime-go))\s+(v\S+)`)

// WriteEmptyApp writes the synth reference into dir: a Go CDK app with one
// SQS queue, on the CDK modules root's go.mod requires (run `go mod tidy`
// in dir before use).
func WriteEmptyApp(dir, root string) error {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	ms := modRequire.FindAllSubmatch(mod, -1)
	if len(ms) != 3 {
		return fmt.Errorf("empty app: %s/go.mod should require awscdk/v2, constructs/v10 and jsii-runtime-go (found %d)", root, len(ms))
	}
	gomod := "module benchemptyapp\n\ngo 1.26\n\nrequire (\n"
	for _, m := range ms {
		gomod += fmt.Sprintf("\t%s %s\n", m[1], m[2])
	}
	gomod += ")\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	files := map[string]string{
		"go.mod":   gomod,
		"go.sum":   string(sum),
		"cdk.json": `{"app": "go run ."}` + "\n",
		"main.go": `package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Empty"), nil)
	awssqs.NewQueue(stack, jsii.String("Queue"), nil)
	app.Synth(nil)
}
`,
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}
