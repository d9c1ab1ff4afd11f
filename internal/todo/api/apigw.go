package api

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/httpapi"
)

// ServeAPIGateway is the Lambda handler body: event in, proxy response out.
func (h *Handler) ServeAPIGateway(ctx context.Context, e events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	return httpapi.ServeAPIGateway(ctx, e, h.origins, h.Serve)
}
