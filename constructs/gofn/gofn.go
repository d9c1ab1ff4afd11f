// Package gofn builds Go Lambda functions: provided.al2023 on arm64 with a
// `bootstrap` binary compiled at synth time by a local `go build` (CDK
// local bundling), falling back to Docker bundling when no Go toolchain is
// on the PATH. A function's package is one of the caller's own module
// (the module of the working directory, or FunctionProps.ModuleRoot); the
// library's constructs build theirs from the library's module. The first
// bundling of a synth builds every package under a module's lambdas/ in
// one `go build`; each function's bundling then takes its binary
// (byte-identical to building it alone).
package gofn

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3assets"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// FunctionProps configures a Go function.
type FunctionProps struct {
	// Entry is the main package to build: its folder relative to the
	// module root ("lambdas/fire", "target"), or its import path in that
	// module ("example.com/jobs/target"). Required.
	Entry string
	// ModuleRoot is the folder of the go.mod of the module that holds
	// Entry; the build runs there, with that module's go.mod and go.sum.
	// Default: for the library's own constructs, the library's root
	// (ModuleRoot()); for any other caller, the module that contains the
	// working directory of `cdk synth`: the nearest go.mod at or above it,
	// the rule the go command uses.
	ModuleRoot string
	// Description of the function.
	// Default: none.
	Description string
	// MemoryMiB is the memory size (128..10240).
	// Default: 128.
	MemoryMiB float64
	// Timeout of one invocation: whole seconds, 1 s to 15 minutes.
	// Default: 10 seconds.
	Timeout awscdk.Duration
	// Environment variables for the function.
	// Default: none.
	Environment map[string]string
	// Logs is how the function's log group keeps its events.
	// Default: one month, retained when the stack is deleted.
	Logs LogOptions
	// ReservedConcurrentExecutions reserves and caps concurrent
	// executions. Zero is allowed: it stops every invocation (Lambda's way
	// to switch a function off).
	// Default: no reservation (the account's unreserved pool).
	ReservedConcurrentExecutions *float64
}

// DefaultTimeoutSec and DefaultMemoryMiB are what a function gets when
// its props leave them unset.
const (
	DefaultTimeoutSec = 10
	DefaultMemoryMiB  = 128
)

// LogOptions is how a log group keeps its events. Every construct of this
// library takes one as its Logs prop and applies it to every log group it
// creates (function logs, access logs), so a stack sets it once.
type LogOptions struct {
	// Retention is how long events are kept.
	// Default: one month.
	Retention awslogs.RetentionDays
	// RemovalPolicy applies to the log groups when they leave the stack:
	// DESTROY deletes them with a dev stack, RETAIN keeps them.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
}

// WithDefaults fills what o leaves unset.
func (o LogOptions) WithDefaults() LogOptions {
	if o.Retention == "" {
		o.Retention = awslogs.RetentionDays_ONE_MONTH
	}
	if o.RemovalPolicy == "" {
		o.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	return o
}

// NewLogGroup is a log group kept as o says.
func (o LogOptions) NewLogGroup(scope constructs.Construct, id string) awslogs.LogGroup {
	o = o.WithDefaults()
	return awslogs.NewLogGroup(scope, jsii.String(id), &awslogs.LogGroupProps{
		Retention: o.Retention, RemovalPolicy: o.RemovalPolicy,
	})
}

// Function is a Go Lambda function with its own log group.
type Function struct {
	constructs.Construct
	// Function is the Lambda function ("Resource").
	Function awslambda.Function
	// LogGroup receives the function's JSON logs.
	LogGroup awslogs.LogGroup
	// Role is the function's execution role. It starts with nothing but
	// writing to LogGroup (no AWS managed policy); grants add the rest.
	Role awsiam.Role
}

// NewFunction builds entry and returns the function. It panics with a
// message saying how to fix a bad prop, as CDK constructs do.
func NewFunction(scope constructs.Construct, id *string, props *FunctionProps) *Function {
	if props == nil || props.Entry == "" {
		panic(fmt.Sprintf("gofn %s: Entry is required: set it to a package path such as \"lambdas/fire\"", *id))
	}
	wd, _ := os.Getwd()
	root, entry, err := resolveEntry(props.Entry, props.ModuleRoot, callerOutside(), wd)
	if err != nil {
		panic(fmt.Sprintf("gofn %s: %v", *id, err))
	}
	memory := props.MemoryMiB
	if memory == 0 {
		memory = DefaultMemoryMiB
	}
	if memory < 128 || memory > 10240 || memory != float64(int(memory)) {
		panic(fmt.Sprintf("gofn %s: MemoryMiB must be a whole number between 128 and 10240 inclusive (given %v): set it in range (Lambda's limits)", *id, memory))
	}
	timeout := props.Timeout
	if timeout == nil {
		timeout = awscdk.Duration_Seconds(jsii.Number(DefaultTimeoutSec))
	}
	propcheck.CheckSeconds("gofn "+*id, "Timeout", timeout, 1, 900, "Lambda's limits: 1 second to 15 minutes")
	reserved := props.ReservedConcurrentExecutions
	if reserved != nil {
		propcheck.CheckWhole("gofn "+*id, "ReservedConcurrentExecutions", *reserved, 0, 1000000, "0 stops the function; the account's concurrency bounds the rest")
	}

	c := constructs.NewConstruct(scope, id)
	logs := props.Logs.NewLogGroup(c, "Logs")
	role := awsiam.NewRole(c, jsii.String("Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Execution role of " + entry),
	})
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents"),
		Resources: jsii.Strings(*logs.LogGroupArn()),
	}))
	// Every function's metrics carry its stack's name as a dimension.
	env := map[string]*string{envvars.MetricsStack: awscdk.Stack_Of(c).StackName()}
	for k, v := range props.Environment {
		env[k] = jsii.String(v)
	}
	fnProps := &awslambda.FunctionProps{
		Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:  awslambda.Architecture_ARM_64(),
		Handler:       jsii.String("bootstrap"),
		Code:          code(root, entry),
		MemorySize:    jsii.Number(memory),
		Timeout:       timeout,
		Environment:   &env,
		LoggingFormat: awslambda.LoggingFormat_JSON,
		LogGroup:      logs,
		Role:          role,
	}
	if props.Description != "" {
		fnProps.Description = jsii.String(props.Description)
	}
	if reserved != nil {
		fnProps.ReservedConcurrentExecutions = reserved
	}
	fn := awslambda.NewFunction(c, jsii.String("Resource"), fnProps)
	return &Function{Construct: c, Function: fn, LogGroup: logs, Role: role}
}

// Code is the bundled asset of one Go package of this library (entry
// relative to ModuleRoot()). The asset hash is the hash of the built
// binary, so a change anywhere in the code it imports (not only under
// entry) makes a new asset, and an unchanged tree gives the same hash.
func Code(entry string) awslambda.AssetCode {
	return code(ModuleRoot(), entry)
}

// code is the bundled asset of the package entry (slash-separated,
// relative to root) of the module at root.
func code(root, entry string) awslambda.AssetCode {
	return awslambda.Code_FromAsset(jsii.String(root), &awss3assets.AssetOptions{
		AssetHashType: awscdk.AssetHashType_OUTPUT,
		Exclude:       jsii.Strings(sourceExcludes...),
		Bundling: &awscdk.BundlingOptions{
			Local: &localBundling{root: root, entry: entry},
			// Fallback when `go` is not on the PATH: the same build in the
			// official Go image.
			Image: awscdk.DockerImage_FromRegistry(jsii.String(dockerImage)),
			Command: jsii.Strings("bash", "-c",
				"go build "+strings.Join(buildFlags, " ")+" -o /asset-output/bootstrap ./"+entry),
			Environment: envMap(buildEnv),
			User:        jsii.String("root"),
		},
	})
}

// dockerImage is used only when no local Go toolchain exists.
const dockerImage = "golang:1.26"

// sourceExcludes keep the asset source small when bundling is skipped.
var sourceExcludes = []string{"node_modules", "cdk.out", "web", ".git", "*.test", "examples"}

// buildFlags make a small, reproducible binary: no paths, no VCS stamp,
// no build id, stripped, and the RPC shim left out (provided.al2023 does
// not need it).
var buildFlags = []string{"-trimpath", "-buildvcs=false", "-tags", "lambda.norpc", `-ldflags=-s -w -buildid=`}

var buildEnv = map[string]string{"CGO_ENABLED": "0", "GOOS": "linux", "GOARCH": "arm64", "GOFLAGS": "-mod=readonly"}

func envMap(m map[string]string) *map[string]*string {
	out := map[string]*string{}
	for k, v := range m {
		out[k] = jsii.String(v)
	}
	return &out
}

// localBundling builds with the go command on the PATH. It must be a
// pointer to a struct: jsii cannot marshal a func.
type localBundling struct {
	root, entry string
}

// TryBundle implements awscdk.ILocalBundling: it takes entry's binary from
// the synth's one build of BatchDir (entries elsewhere are built alone).
// It returns false, so CDK uses Docker, only when there is no go command.
func (b *localBundling) TryBundle(outputDir *string, _ *awscdk.BundlingOptions) *bool {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return jsii.Bool(false)
	}
	if err := bundle(goBin, b.root, b.entry, filepath.Join(*outputDir, "bootstrap")); err != nil {
		panic(err.Error())
	}
	return jsii.Bool(true)
}

// Build compiles entry (relative to root) to out as a Lambda bootstrap.
func Build(goBin, root, entry, out string) error {
	args := append([]string{"build"}, buildFlags...)
	args = append(args, "-o", out, "./"+entry)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	cmd.Env = buildEnviron()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gofn: go build ./%s failed: %w\n%s", entry, err, b)
	}
	return nil
}

func buildEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, override := buildEnv[k]; !override {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(buildEnv))
	for k := range buildEnv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+buildEnv[k])
	}
	return env
}

// ModulePath is this module's import path.
const ModulePath = "github.com/unschedule/unschedule"

// ModuleRoot is the folder holding this module's go.mod, whether the
// module is the app being synthesized or a dependency of another CDK app
// (then it is in the module cache).
func ModuleRoot() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if root, err := findModuleRoot(filepath.Dir(file)); err == nil {
			return root
		}
	}
	// Built with -trimpath: ask the go command.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", ModulePath).Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		panic("gofn: cannot find the source of " + ModulePath + ": build the CDK app without -trimpath, or run it where `go list -m " + ModulePath + "` works")
	}
	return strings.TrimSpace(string(out))
}
