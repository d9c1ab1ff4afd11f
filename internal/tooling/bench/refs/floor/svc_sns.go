//go:build floor_sns

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
)

func init() { services["sns"] = func(cfg aws.Config) any { return sns.NewFromConfig(cfg) } }
