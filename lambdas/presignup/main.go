// Command presignup is the Cognito PreSignUp trigger: it confirms new users
// and marks their email verified at once, and, when ALLOWED_EMAIL_DOMAINS
// is set, refuses sign-ups from other email domains. It makes no AWS call,
// so it builds no SDK client: the cold start stays minimal.
//
// Environment: ALLOWED_EMAIL_DOMAINS (optional) comma-separated domains
// such as "example.com,example.org"; unset or empty lets everyone sign up.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	h, err := configure(os.Getenv, log)
	if err != nil {
		log.Error("presignup: bad configuration", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(h.handle)
}
