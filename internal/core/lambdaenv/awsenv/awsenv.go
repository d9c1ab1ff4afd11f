// Package awsenv builds a Lambda function's aws.Config with the SDK's
// standard loading, config.LoadDefaultConfig, so every setting the SDKs
// document is honoured on a function as anywhere else: the region and the
// execution role's credentials Lambda sets
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime),
// AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>
// (https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html),
// AWS_USE_FIPS_ENDPOINT and AWS_USE_DUALSTACK_ENDPOINT
// (https://docs.aws.amazon.com/sdkref/latest/guide/feature-endpoints.html),
// AWS_MAX_ATTEMPTS and AWS_RETRY_MODE
// (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html).
// A function pointed at LocalStack, dynalite or a FIPS endpoint goes there,
// not to the default endpoint. The call costs about 0.16 ms of cold init
// (docs/PERFORMANCE.md, `stage: + LoadDefaultConfig`).
//
// It is a package of its own so that a function that calls no AWS API
// (presignup) does not link, or initialise, the SDK.
package awsenv

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

// Config is the function's aws.Config from the environment and the shared
// config files, as every AWS SDK reads them.
func Config(ctx context.Context) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load the AWS SDK configuration: %w", err)
	}
	return cfg, nil
}
