// Command jobs is an app that adopts the constructs for its own table
// and data model: jobs of tenants (keys tenantId/jobId) that run once at
// their runAt time unless they left the Queued state first. Its own code
// writes the items with plain DynamoDB calls (writer/), and its own
// function runs at the due time (target/). Run it with
//
//	cdk --app "go run ./examples/jobs" synth
//
// In your own module, `go get github.com/unschedule/unschedule` and copy
// this folder: the constructs build their Go functions from the
// library's lambdas/ folder wherever the module cache (or a replace)
// keeps it, and goCode builds yours. A test (test/consumer) does exactly
// that, in a separate module.
package main

import (
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3assets"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/cancellation"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/examples/jobs/jobschema"
)

// NewJobsStack composes the reusable constructs around the app's own
// table and target function.
func NewJobsStack(scope awscdk.App, id string) awscdk.Stack {
	stack := awscdk.NewStack(scope, jsii.String(id), nil)
	logs := gofn.LogOptions{Retention: awslogs.RetentionDays_TWO_WEEKS, RemovalPolicy: awscdk.RemovalPolicy_DESTROY}

	// The app's own table: its keys are the schema's, and its stream
	// carries both images (the pipeline compares them).
	table := awsdynamodb.NewTable(stack, jsii.String("Jobs"), &awsdynamodb.TableProps{
		PartitionKey:  &awsdynamodb.Attribute{Name: jsii.String(jobschema.Tenant), Type: awsdynamodb.AttributeType_STRING},
		SortKey:       &awsdynamodb.Attribute{Name: jsii.String(jobschema.Job), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:   awsdynamodb.BillingMode_PAY_PER_REQUEST,
		Stream:        awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	// What runs at the due time: the app's own function.
	target := awslambda.NewFunction(stack, jsii.String("RunJob"), &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         goCode("target"),
		Description:  jsii.String("Runs a job at its runAt time"),
	})

	jobs := scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Schedules"), &scheduleonwrite.ScheduleOnWriteProps{
		Schema:        jobschema.Schema,
		ExistingTable: table,
		Target:        target,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		Logs:          logs,
	})
	// Creates the schedule of every job the writer queues, moves it when
	// runAt changes, cancels it when the job is Done or deleted.
	cancellation.NewCancellation(stack, jsii.String("Pipeline"), &cancellation.CancellationProps{
		Table: table, Schedules: jobs, RemovalPolicy: awscdk.RemovalPolicy_DESTROY, Logs: logs,
	})
	awscdk.NewCfnOutput(stack, jsii.String("TableName"), &awscdk.CfnOutputProps{Value: table.TableName()})
	return stack
}

// goCode is the Go package dir (relative to this file's folder) built
// into a Lambda bootstrap at synth time, with the library's build flags
// (gofn.Build); Docker's Go image only when no go command is found.
func goCode(dir string) awslambda.AssetCode {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(file)
	return awslambda.Code_FromAsset(jsii.String(filepath.Join(root, dir)), &awss3assets.AssetOptions{
		AssetHashType: awscdk.AssetHashType_OUTPUT,
		Bundling: &awscdk.BundlingOptions{
			Local: &localGo{root: root, dir: dir},
			Image: awscdk.DockerImage_FromRegistry(jsii.String("golang:1.26")),
			Command: jsii.Strings("bash", "-c",
				"CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -tags lambda.norpc -o /asset-output/bootstrap ."),
		},
	})
}

// localGo builds with the go command on the PATH (a pointer to a struct:
// jsii cannot marshal a func).
type localGo struct{ root, dir string }

// TryBundle implements awscdk.ILocalBundling.
func (b *localGo) TryBundle(outputDir *string, _ *awscdk.BundlingOptions) *bool {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return jsii.Bool(false)
	}
	if err := gofn.Build(goBin, b.root, b.dir, filepath.Join(*outputDir, "bootstrap")); err != nil {
		panic(err.Error())
	}
	return jsii.Bool(true)
}

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	NewJobsStack(app, "Jobs")
	app.Synth(nil)
}
