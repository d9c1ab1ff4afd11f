//go:build floor_sesv2

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

func init() { services["sesv2"] = func(cfg aws.Config) any { return sesv2.NewFromConfig(cfg) } }
