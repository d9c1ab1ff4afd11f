// Package barbershopstack is the barbershop example app: weekly
// analytics per barbershop over 7, 30, 60 and 90 days, computed only for
// shops that had activity. Run it with
//
//	cdk --app "go run ./examples/barbershop" synth
package barbershopstack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/deferredjobs"
	"github.com/unschedule/unschedule/constructs/gofn"
)

// App is what NewStack built.
type App struct {
	Stack        awscdk.Stack
	Appointments awsdynamodb.Table
	Jobs         *deferredjobs.DeferredJobs
	Book, Worker *gofn.Function
}

// NewStack composes the deferred-jobs construct with the example's
// appointments table, its booking function (the activity) and its
// analytics worker.
func NewStack(scope awscdk.App, id string) *App {
	stack := awscdk.NewStack(scope, jsii.String(id), nil)
	logs := gofn.LogOptions{Retention: awslogs.RetentionDays_TWO_WEEKS, RemovalPolicy: awscdk.RemovalPolicy_DESTROY}
	appts := awsdynamodb.NewTable(stack, jsii.String("Appointments"), &awsdynamodb.TableProps{
		PartitionKey:  &awsdynamodb.Attribute{Name: jsii.String("shopId"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:       &awsdynamodb.Attribute{Name: jsii.String("at"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:   awsdynamodb.BillingMode_PAY_PER_REQUEST,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	env := map[string]string{"APPOINTMENTS_TABLE": *appts.TableName()}
	worker := gofn.NewFunction(stack, jsii.String("Analytics"), &gofn.FunctionProps{
		Entry: "github.com/unschedule/unschedule/examples/barbershop/worker", Description: "Weekly 7/30/60/90-day analytics of one barbershop",
		Timeout: awscdk.Duration_Seconds(jsii.Number(30)), Logs: logs, Environment: env,
	})
	appts.Grant(worker.Function, jsii.String("dynamodb:Query"))
	jobs := deferredjobs.NewDeferredJobs(stack, jsii.String("WeeklyAnalytics"), &deferredjobs.DeferredJobsProps{
		Worker: worker.Function, WorkerMaxConcurrency: 5, Logs: logs,
		// An example: its markers go with the stack.
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	book := gofn.NewFunction(stack, jsii.String("Book"), &gofn.FunctionProps{
		Entry: "github.com/unschedule/unschedule/examples/barbershop/book", Description: "Books an appointment and marks the shop active", Logs: logs, Environment: env,
	})
	appts.Grant(book.Function, jsii.String("dynamodb:PutItem"))
	jobs.ConfigureWriter(book.Function)
	return &App{Stack: stack, Appointments: appts, Jobs: jobs, Book: book, Worker: worker}
}
