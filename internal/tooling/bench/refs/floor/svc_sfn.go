//go:build floor_sfn

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

func init() { services["sfn"] = func(cfg aws.Config) any { return sfn.NewFromConfig(cfg) } }
