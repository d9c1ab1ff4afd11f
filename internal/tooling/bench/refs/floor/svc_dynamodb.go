//go:build floor_dynamodb

package main

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func init() { services["dynamodb"] = func(cfg aws.Config) any { return dynamodb.NewFromConfig(cfg) } }
