package main

import (
	"context"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
)

// handler turns API Gateway's proxy event into an unsubscribe.Request.
// The POST body (List-Unsubscribe=One-Click, RFC 8058) is not read: the
// token in the query is what it acts on.
type handler struct{ page *unsubscribe.Page }

func (h *handler) Handle(ctx context.Context, e events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	accept := ""
	for k, v := range e.Headers {
		if strings.EqualFold(k, "Accept") {
			accept = v
		}
	}
	res := h.page.Serve(ctx, unsubscribe.Request{Method: e.HTTPMethod, Token: e.QueryStringParameters["token"], Accept: accept})
	return events.APIGatewayProxyResponse{StatusCode: res.Status, Headers: res.Headers, Body: res.Body}, nil
}
