//go:build floor_secretsmanager

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

func init() {
	services["secretsmanager"] = func(cfg aws.Config) any { return secretsmanager.NewFromConfig(cfg) }
}
