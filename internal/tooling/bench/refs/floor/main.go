// Command floor is the SDK reference of the cold-init benchmark: it sets
// up the AWS SDK as the mains do (internal/core/lambdaenv/awsenv) and
// creates one client of each service linked in, chosen by build tags (one
// floor_<service> per svc_*.go file) to match a main's clients
// (internal/tooling/bench.FunctionClients). BENCH_FLOOR_STAGE stops the
// set-up early, to show where the time goes:
//
//	imports         nothing: the SDK packages' init only
//	loadconfig      config.LoadDefaultConfig (shared config files, the credential chain)
//	clients         LoadDefaultConfig and the clients (the default: the floor)
//	envconfig       an aws.Config built from the variables Lambda sets, and the clients
//	envconfig-lazy  that aws.Config, no client (clients made on first use)
package main

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// services are the clients linked in, by service package name.
var services = map[string]func(aws.Config) any{}

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

// envConfig is the region and the credentials from the environment alone.
func envConfig() aws.Config {
	return aws.Config{
		Region: os.Getenv("AWS_REGION"),
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(
			os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))),
	}
}

// newClients creates one client of each linked service, in name order.
func newClients(cfg aws.Config) {
	names := make([]string, 0, len(services))
	for n := range services {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		clients = append(clients, services[n](cfg))
	}
}
