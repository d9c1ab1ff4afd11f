// Command jobs is an app that adopts the constructs for its own table
// and data model: jobs of tenants (keys tenantId/jobId) that run once at
// their runAt time unless they left the Queued state first. Its own code
// writes the items with plain DynamoDB calls (writer/), and its own
// function runs at the due time (target/). Run it with
//
//	cdk --app "go run ./examples/jobs" synth
//
// In your own module, `go get github.com/unschedule/unschedule`, copy
// this folder and change its import paths (targetPackage with them): the
// constructs build their Go functions from the library's lambdas/ folder
// wherever the module cache (or a replace) keeps it, and gofn builds
// yours from your module. A test (test/consumer) does exactly that, in a
// separate module.
package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/cancellation"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/examples/jobs/jobschema"
)

// targetPackage is the import path of the target function's package;
// gofn finds it in the module being synthesized.
const targetPackage = "github.com/unschedule/unschedule/examples/jobs/target"

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
	// Its armed index: the reconciler Queries the Queued jobs instead of
	// scanning the table (DynamoDB keeps it from the writer's own puts).
	armed := scheduleonwrite.AddArmedIndex(table, jobschema.Schema)
	// What runs at the due time: the app's own function, a package of
	// this module, built at synth into a linux/arm64 bootstrap.
	target := gofn.NewFunction(stack, jsii.String("RunJob"), &gofn.FunctionProps{
		Entry:       targetPackage,
		Description: "Runs a job at its runAt time",
		Logs:        logs,
	})

	jobs := scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Schedules"), &scheduleonwrite.ScheduleOnWriteProps{
		Schema:        jobschema.Schema,
		ExistingTable: table,
		Target:        target.Function,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		Logs:          logs,
		Reconciler:    &reconciler.ReconcilerProps{ArmedIndex: armed},
	})
	// Creates the schedule of every job the writer queues, moves it when
	// runAt changes, cancels it when the job is Done or deleted.
	cancellation.NewCancellation(stack, jsii.String("Pipeline"), &cancellation.CancellationProps{
		Table: table, Timer: jobs.Timer, RemovalPolicy: awscdk.RemovalPolicy_DESTROY, Logs: logs,
	})
	awscdk.NewCfnOutput(stack, jsii.String("TableName"), &awscdk.CfnOutputProps{Value: table.TableName()})
	return stack
}

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	NewJobsStack(app, "Jobs")
	app.Synth(nil)
}
