// Command noconfig is a cold-init reference of `make bench`: the floor's
// "env config + 4 clients" (internal/bench/refs/floor) without linking
// the SDK's config package, so without its fallback to the shared config
// files and the credential chain it imports (the SSO, SSO OIDC, STS and
// sign-in clients). It measures what dropping internal/lambdaenv/awsenv's
// fallback to config.LoadDefaultConfig would save.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// clients keeps the clients alive, as a function's handler would.
var clients []any

func main() {
	cfg := aws.Config{
		Region: os.Getenv("AWS_REGION"),
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(
			os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))),
	}
	clients = append(clients, cfg, dynamodb.NewFromConfig(cfg), scheduler.NewFromConfig(cfg),
		sns.NewFromConfig(cfg), sqs.NewFromConfig(cfg))
	lambda.Start(func(context.Context) error { return nil })
}
