package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/api"
	"github.com/unschedule/unschedule/internal/metrics"
)

// handler serves one API Gateway event and counts what the dashboard
// shows: tasks created, and server errors.
type handler struct {
	api     *api.Handler
	metrics *metrics.Recorder
}

// ServerErrors counts 5xx answers (client mistakes are never 5xx).
const ServerErrors = "ApiServerErrors"

func (h *handler) Handle(ctx context.Context, e events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	resp := h.api.ServeAPIGateway(ctx, e)
	switch {
	case e.HTTPMethod == "POST" && resp.StatusCode == 201:
		h.metrics.Add(metrics.TasksCreated, 1)
	case resp.StatusCode >= 500:
		h.metrics.Add(ServerErrors, 1)
	}
	_ = h.metrics.Flush()
	return resp, nil
}
