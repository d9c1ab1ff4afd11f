// Command postconfirmation is the Cognito PostConfirmation trigger: after
// a sign-up confirmed with its code (or the hosted UI's link), or a
// password reset confirmed with its code, it records the address the code
// reached as proven (custom:email_proof, identity.EmailProofAttribute), the
// proof the campaign sender check asks for. Cognito invokes it on
// ConfirmSignUp, AdminConfirmSignUp and ConfirmForgotPassword only, never
// for a sign-up the PreSignUp trigger confirmed; an event whose address
// is not verified proves nothing and writes nothing.
// https://docs.aws.amazon.com/cognito/latest/developerguide/user-pool-lambda-post-confirmation.html
//
// Environment: none (the event names the pool and the user).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"

	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
)

func main() {
	cfg := lambdaenv.Must(awsenv.Config(context.Background()))
	h := &handler{pool: cognitoidentityprovider.NewFromConfig(cfg), log: lambdaenv.Logger()}
	lambda.Start(h.handle)
}
