// Package renewalstack is the renewal-reminder example app: when a
// customer subscribes, remind them one week before they are charged.
// Run it with
//
//	cdk --app "go run ./examples/renewalreminder" synth
package renewalstack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/futureevents"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/examples/renewalreminder/reminder"
)

// App is what NewStack built.
type App struct {
	Stack     awscdk.Stack
	Events    *futureevents.FutureEvents
	Subscribe *gofn.Function
	Remind    *gofn.Function
}

// NewStack composes the future-events construct with the example's two
// functions: subscribe schedules, remind runs at the moment.
func NewStack(scope awscdk.App, id string) *App {
	stack := awscdk.NewStack(scope, jsii.String(id), nil)
	logs := gofn.LogOptions{Retention: awslogs.RetentionDays_TWO_WEEKS, RemovalPolicy: awscdk.RemovalPolicy_DESTROY}
	remind := gofn.NewFunction(stack, jsii.String("Remind"), &gofn.FunctionProps{
		Entry: "github.com/unschedule/unschedule/examples/renewalreminder/remind", Description: "Sends a renewal reminder", Logs: logs,
	})
	events := futureevents.NewFutureEvents(stack, jsii.String("FutureEvents"), &futureevents.FutureEventsProps{
		Targets: []awslambda.IFunction{remind.Function}, Logs: logs, RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	subscribe := gofn.NewFunction(stack, jsii.String("Subscribe"), &gofn.FunctionProps{
		Entry: "github.com/unschedule/unschedule/examples/renewalreminder/subscribe", Description: "Schedules a renewal reminder one week before the charge", Logs: logs,
		Environment: map[string]string{reminder.EnvRemindFunction: *remind.Function.FunctionArn()},
	})
	events.ConfigureClient(subscribe.Function)
	awscdk.NewCfnOutput(stack, jsii.String("EventsTableName"), &awscdk.CfnOutputProps{Value: events.Table.TableName()})
	return &App{Stack: stack, Events: events, Subscribe: subscribe, Remind: remind}
}
