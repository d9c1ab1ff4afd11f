// Command renewalreminder synthesizes the renewal-reminder example app
// (package stack).
package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/examples/renewalreminder/renewalstack"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	renewalstack.NewStack(app, "RenewalReminder")
	app.Synth(nil)
}
