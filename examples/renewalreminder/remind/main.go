// Command remind is the renewal-reminder example's logic, run at the
// moment: it writes the reminder to its log (an app would send it by
// email).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/unschedule/unschedule/examples/renewalreminder/reminder"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
)

func main() {
	log := lambdaenv.Logger()
	lambda.Start(func(_ context.Context, p reminder.Payload) error {
		log.Info("renewal reminder", "to", p.Email, "message", reminder.Message(p))
		return nil
	})
}
