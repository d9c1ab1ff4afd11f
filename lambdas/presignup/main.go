// Command presignup is the Cognito PreSignUp trigger: when
// ALLOWED_EMAIL_DOMAINS is set, it refuses sign-ups from other email
// domains. It confirms new users at once, unless addresses must be
// verified by code (VERIFY_EMAIL_BY_CODE=true, or any allow-list): then
// Cognito emails a code and the user confirms with it. It never marks an
// email verified: only a code sent to the address does. It makes no AWS call, so it builds no SDK client: the cold start
// stays minimal.
//
// Environment: ALLOWED_EMAIL_DOMAINS (optional) comma-separated domains
// such as "example.com,example.org"; unset or empty lets everyone sign up.
// VERIFY_EMAIL_BY_CODE (optional) true or false (default).
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
