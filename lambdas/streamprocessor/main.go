// Command streamprocessor reads the item table's stream and puts a
// schedule, cancellation or reschedule message on the FIFO queue for
// every transition that warrants one (see cancel.Decide). It decides and
// enqueues, nothing more.
//
// Environment: QUEUE_URL, the cancellation FIFO queue's URL;
// UNSCHEDULE_ITEM_SCHEMA (contract.EnvVar), the table's item schema
// (the to-do app's when unset).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"

	"github.com/unschedule/unschedule/internal/core/adapters/awssqs"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

func main() {
	log := lambdaenv.Logger()
	cfg := lambdaenv.Must(loadConfig(os.Getenv))
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	queue := lambdaenv.Must(awssqs.New(sqs.NewFromConfig(aws), cfg.QueueURL))
	rec := metrics.New(FunctionName, os.Stdout)
	proc := lambdaenv.Must(cancel.NewProcessor(cfg.Schema, queue, rec, log))
	lambda.Start((&handler{schema: cfg.Schema, proc: proc, metrics: rec, log: log}).handle)
}
