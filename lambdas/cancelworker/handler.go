package main

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

// FunctionName is the Function dimension of this function's metrics.
const FunctionName = metrics.FunctionCancelWorker

// loadConfig reads the schedule group and the target of its schedules
// (needed to recreate a schedule that already fired) through getenv.
func loadConfig(getenv func(string) string) (awsscheduler.Config, error) {
	e := lambdaenv.New(getenv)
	c := awsscheduler.ConfigFromEnv(e)
	return c, e.Err()
}

type batchHandler interface {
	HandleBatch(ctx context.Context, batch []cancel.Delivery) []string
}

type counter interface {
	Flush() error
}

type handler struct {
	worker  batchHandler
	metrics counter
	log     *slog.Logger
}

// handle applies a batch from the FIFO queue and reports the failed
// messages (and the later messages of their groups, so order holds) by
// MessageId. They are delivered again; a message that can never succeed
// reaches the queue's DLQ after maxReceiveCount deliveries.
func (h *handler) handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	defer func() {
		if err := h.metrics.Flush(); err != nil {
			h.log.WarnContext(ctx, "writing metrics failed", "error", err)
		}
	}()
	batch := make([]cancel.Delivery, len(ev.Records))
	for i, r := range ev.Records {
		batch[i] = cancel.Delivery{ID: r.MessageId, GroupID: r.Attributes["MessageGroupId"], Body: []byte(r.Body)}
	}
	var resp events.SQSEventResponse
	for _, id := range h.worker.HandleBatch(ctx, batch) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
	}
	return resp, nil
}
