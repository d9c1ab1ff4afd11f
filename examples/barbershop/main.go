// Command barbershop synthesizes the barbershop analytics example app
// (package stack).
package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/examples/barbershop/barbershopstack"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	barbershopstack.NewStack(app, "Barbershop")
	app.Synth(nil)
}
