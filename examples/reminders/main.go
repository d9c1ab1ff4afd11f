// Command reminders is an example of reusing this project's constructs in
// another CDK app: a table whose items expire at their deadline, with the
// cancellation pipeline and the reconciler, and your own code writing the
// items (no REST API). Run it with
//
//	cdk --app "go run ./examples/reminders" synth
//
// In your own module, `go get github.com/unschedule/unschedule` and import
// the same packages: each construct builds its Go functions from this
// module's lambdas/ folder, wherever the module cache keeps it.
package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/cancellation"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/notifications"
	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/constructs/userauth"
)

// NewRemindersStack composes the reusable constructs.
func NewRemindersStack(scope awscdk.App, id string) awscdk.Stack {
	stack := awscdk.NewStack(scope, jsii.String(id), nil)
	// One set of log options for every construct's log groups.
	logs := gofn.LogOptions{Retention: awslogs.RetentionDays_TWO_WEEKS}

	users := userauth.NewUserAuth(stack, jsii.String("Users"), &userauth.UserAuthProps{
		AllowedEmailDomains: []string{"example.com"},
		Logs:                logs,
	})
	notify := notifications.NewUserNotifications(stack, jsii.String("Notify"), &notifications.UserNotificationsProps{
		UserPool: users.UserPool, Shards: 2, Logs: logs,
	})
	reminders := scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Reminders"), &scheduleonwrite.ScheduleOnWriteProps{
		Notifications: notify,
		Logs:          logs,
	})
	notify.StoreSettingsIn(reminders.Table) // each user's notification setting
	cancellation.NewCancellation(stack, jsii.String("Unschedule"), &cancellation.CancellationProps{
		Table: reminders.Table, Schedules: reminders, Logs: logs,
	})
	reconciler.NewReconciler(stack, jsii.String("Repair"), &reconciler.ReconcilerProps{
		Table: reminders.Table, Schedules: reminders, Notifications: notify,
		EveryMinutes: 15, Logs: logs,
	})
	awscdk.NewCfnOutput(stack, jsii.String("TableName"), &awscdk.CfnOutputProps{Value: reminders.Table.TableName()})
	return stack
}

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	NewRemindersStack(app, "Reminders")
	app.Synth(nil)
}
