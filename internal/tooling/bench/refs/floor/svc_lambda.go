//go:build floor_lambda

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

func init() { services["lambda"] = func(cfg aws.Config) any { return lambda.NewFromConfig(cfg) } }
