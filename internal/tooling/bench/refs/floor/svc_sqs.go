//go:build floor_sqs

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

func init() { services["sqs"] = func(cfg aws.Config) any { return sqs.NewFromConfig(cfg) } }
