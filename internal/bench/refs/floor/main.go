// Command floor is the SDK reference of the cold-init benchmark (`make
// bench`): a function that only sets up the AWS SDK the way our functions
// do, with the clients they create (DynamoDB, Scheduler, SNS, SQS: the
// union; each function creates at most three). BENCH_FLOOR_STAGE stops
// the set-up early, to show where the time goes:
//
//	imports         nothing: the SDK packages' init only
//	loadconfig      config.LoadDefaultConfig (shared config files, the credential chain)
//	clients         LoadDefaultConfig and the four clients (the default: the floor)
//	envconfig       an aws.Config built from the variables Lambda sets, and the four clients
//	envconfig-lazy  that aws.Config, no client (clients made on first use)
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// clients keeps the clients alive, as a function's handler would.
var clients []any

func main() {
	var cfg aws.Config
	var err error
	switch stage := os.Getenv("BENCH_FLOOR_STAGE"); stage {
	case "imports":
	case "loadconfig":
		cfg, err = config.LoadDefaultConfig(context.Background())
	case "", "clients":
		if cfg, err = config.LoadDefaultConfig(context.Background()); err == nil {
			newClients(cfg)
		}
	case "envconfig":
		cfg = envConfig()
		newClients(cfg)
	case "envconfig-lazy":
		cfg = envConfig()
	default:
		err = fmt.Errorf("unknown BENCH_FLOOR_STAGE %q", stage)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	clients = append(clients, cfg)
	lambda.Start(func(context.Context) error { return nil })
}

// envConfig is the configuration a Lambda function can take from its
// environment alone: the region and the execution role's credentials.
func envConfig() aws.Config {
	return aws.Config{
		Region: os.Getenv("AWS_REGION"),
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(
			os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))),
	}
}

func newClients(cfg aws.Config) {
	clients = append(clients, dynamodb.NewFromConfig(cfg), scheduler.NewFromConfig(cfg),
		sns.NewFromConfig(cfg), sqs.NewFromConfig(cfg))
}
