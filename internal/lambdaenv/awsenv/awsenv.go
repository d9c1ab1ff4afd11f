// Package awsenv builds a Lambda function's aws.Config. In Lambda the
// region and the execution role's credentials are environment variables
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime),
// so Config reads them directly instead of running config.LoadDefaultConfig,
// which looks for shared config files and walks the credential chain. Where
// they are not set (a local run, a smoke test from a laptop), it falls back
// to LoadDefaultConfig.
//
// It is a package of its own so that a function that calls no AWS API
// (presignup) does not link, or initialise, the SDK.
package awsenv

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// The variables Lambda sets for every function (see the package doc).
const (
	EnvRegion       = "AWS_REGION"
	EnvAccessKeyID  = "AWS_ACCESS_KEY_ID"
	EnvSecretKey    = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken = "AWS_SESSION_TOKEN"
)

// Config is the function's aws.Config: from the Lambda environment when
// get (os.Getenv in a main) has the region and both keys, otherwise
// config.LoadDefaultConfig.
func Config(ctx context.Context, get func(string) string) (aws.Config, error) {
	if cfg, ok := FromEnv(get); ok {
		return cfg, nil
	}
	return config.LoadDefaultConfig(ctx)
}

// FromEnv is the configuration the Lambda environment gives, and whether
// it gives one (region, access key id and secret key all set).
func FromEnv(get func(string) string) (aws.Config, bool) {
	region, id, secret := get(EnvRegion), get(EnvAccessKeyID), get(EnvSecretKey)
	if region == "" || id == "" || secret == "" {
		return aws.Config{}, false
	}
	return aws.Config{
		Region: region,
		Credentials: aws.NewCredentialsCache(
			credentials.NewStaticCredentialsProvider(id, secret, get(EnvSessionToken))),
	}, true
}
