package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/api"
	"github.com/unschedule/unschedule/internal/todo/todometrics"
)

// handler serves one API Gateway event and counts what the dashboard
// shows: tasks created, and server errors.
type handler struct {
	api     *api.Handler
	metrics *metrics.Recorder
}

func (h *handler) Handle(ctx context.Context, e events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	resp := h.api.ServeAPIGateway(ctx, e)
	switch {
	case e.HTTPMethod == "POST" && resp.StatusCode == 201:
		h.metrics.Add(todometrics.TasksCreated, 1)
	case resp.StatusCode >= 500:
		h.metrics.Add(todometrics.ApiServerErrors, 1)
	}
	_ = h.metrics.Flush()
	return resp, nil
}
