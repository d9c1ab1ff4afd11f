package main

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/adapters/awssfn"
	"github.com/unschedule/unschedule/internal/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/layers"
)

// layerConfig is the execution layer the worker drives
// (envvars.ExecutionLayer, unset: EventBridgeScheduler) and that layer's settings.
type layerConfig struct {
	Layer     layers.Name
	Schema    contract.Schema
	Scheduler awsscheduler.Config
	SFN       awssfn.Config
	TTL       ttlmarker.Config
}

// loadLayer reads the layer and only the variables that layer needs.
func loadLayer(getenv func(string) string) (layerConfig, error) {
	l, err := layers.Parse(getenv(envvars.ExecutionLayer))
	if err != nil {
		return layerConfig{}, fmt.Errorf("configuration: %s: %w", envvars.ExecutionLayer, err)
	}
	e := lambdaenv.New(getenv)
	c := layerConfig{Layer: l, Schema: e.Schema()}
	switch l {
	case layers.StepFunctions:
		c.SFN = awssfn.ConfigFromEnv(e)
	case layers.TTL:
		c.TTL = ttlmarker.ConfigFromEnv(e)
	default:
		c.Scheduler = awsscheduler.ConfigFromEnv(e)
	}
	return c, e.Err()
}

// newScheduler builds the layer's adapter of task.Scheduler: the worker's
// code is the same for every layer.
func newScheduler(aws aws.Config, c layerConfig) (task.Scheduler, error) {
	switch c.Layer {
	case layers.StepFunctions:
		return awssfn.New(sfn.NewFromConfig(aws), c.SFN)
	case layers.TTL:
		return ttlmarker.New(dynamodb.NewFromConfig(aws), c.TTL)
	default:
		return awsscheduler.New(scheduler.NewFromConfig(aws), c.Scheduler)
	}
}
