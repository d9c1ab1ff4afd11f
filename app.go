// Command app is the CDK app: it reads the environment to deploy
// (-c env=dev|prod, default dev) from cdk.json's context and synthesizes
// one stack for it.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/todoapp"
)

func main() {
	defer jsii.Close()
	// No stack traces in synth metadata: two synths of an unchanged tree
	// are byte-identical even when a construct warns.
	app := awscdk.NewApp(&awscdk.AppProps{StackTraces: jsii.Bool(false)})
	todoapp.AddChecks(app)
	if err := build(app); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	app.Synth(nil)
}

func build(app awscdk.App) error {
	name := "dev"
	if v, ok := app.Node().TryGetContext(jsii.String("env")).(string); ok && v != "" {
		name = v
	}
	cfg, err := todoapp.ConfigFromContext(app.Node().TryGetContext(jsii.String("environments")), name)
	if err != nil {
		return err
	}
	todoapp.NewTodoStack(app, "Unschedule-"+name, &todoapp.TodoStackProps{
		StackProps: awscdk.StackProps{
			Env:         env(),
			Description: jsii.String("Tasks that expire at their deadline: schedule on write, cancel on change (" + name + ")"),
		},
		Config: cfg,
		// -c webPlaceholder=true synthesizes without a web build.
		WebPlaceholderIfMissing: fmt.Sprint(app.Node().TryGetContext(jsii.String("webPlaceholder"))) == "true",
	})
	return nil
}

// env pins the stack to the CLI's account and region when it knows them
// (cdk deploy with credentials), and stays environment-agnostic otherwise
// (synth on a machine with no AWS account).
func env() *awscdk.Environment {
	account, region := os.Getenv("CDK_DEFAULT_ACCOUNT"), os.Getenv("CDK_DEFAULT_REGION")
	if account == "" || region == "" {
		return nil
	}
	return &awscdk.Environment{Account: jsii.String(account), Region: jsii.String(region)}
}
