// Command streamprocessor reads the task table's stream and puts a
// cancellation or reschedule message on the FIFO queue for every
// transition that warrants one (see cancel.Decide). It decides and
// enqueues, nothing more.
//
// Environment: QUEUE_URL, the cancellation FIFO queue's URL.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/unschedule/unschedule/internal/adapters/awssqs"
	"github.com/unschedule/unschedule/internal/cancel"
	"github.com/unschedule/unschedule/internal/metrics"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	fail := func(msg string, err error) {
		log.Error("streamprocessor: "+msg, "error", err.Error())
		os.Exit(1)
	}
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		fail("bad configuration", err)
	}
	aws, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		fail("load AWS config", err)
	}
	queue, err := awssqs.New(sqs.NewFromConfig(aws), cfg.QueueURL)
	if err != nil {
		fail("SQS adapter", err)
	}
	rec := metrics.New(FunctionName, os.Stdout)
	proc, err := cancel.NewProcessor(queue, rec, log)
	if err != nil {
		fail("processor", err)
	}
	lambda.Start((&handler{proc: proc, metrics: rec, log: log}).handle)
}
