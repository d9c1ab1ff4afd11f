//go:build floor_scheduler

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
)

func init() { services["scheduler"] = func(cfg aws.Config) any { return scheduler.NewFromConfig(cfg) } }
