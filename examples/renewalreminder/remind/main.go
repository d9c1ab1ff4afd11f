// Command remind is the renewal-reminder example's logic, run at the
// moment: an app sends reminder.Message(p) to p.Email; the example only
// logs that a reminder was due, without the recipient's address or name
// (reminder.LogFields).
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
		// An app sends reminder.Message(p) to p.Email here, with its mailer.
		log.Info("renewal reminder due", reminder.LogFields(p)...)
		return nil
	})
}
