// Command bare is the lower reference of the cold-init benchmark (`make
// bench`): an aws-lambda-go function that does nothing at init.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context) error { return nil })
}
