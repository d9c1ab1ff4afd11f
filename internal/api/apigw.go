package api

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// FromAPIGateway turns a REST API proxy event into a Request. The caller's
// identity is the sub claim that the Cognito authorizer verified (and its
// email claim, the address notifications go to).
func FromAPIGateway(e events.APIGatewayProxyRequest) (Request, error) {
	body := []byte(e.Body)
	if e.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(e.Body)
		if err != nil {
			return Request{}, err
		}
		body = b
	}
	return Request{Method: e.HTTPMethod, Route: e.Resource, TaskID: e.PathParameters["id"],
		UserID: claim(e.RequestContext.Authorizer, "sub"), Email: claim(e.RequestContext.Authorizer, "email"),
		Query: e.QueryStringParameters, Body: body,
		Origin: header(e.Headers, "Origin")}, nil
}

// claim reads one claim of the ID token the Cognito authorizer verified.
func claim(authorizer map[string]any, name string) string {
	claims, ok := authorizer["claims"].(map[string]any)
	if !ok {
		return ""
	}
	v, _ := claims[name].(string)
	return v
}

// ServeAPIGateway is the Lambda handler body: event in, proxy response out.
func (h *Handler) ServeAPIGateway(ctx context.Context, e events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	r, err := FromAPIGateway(e)
	var resp Response
	if err != nil {
		resp = h.cors(h.fail(400, "validation_error", "request body is not valid base64"), header(e.Headers, "Origin"))
	} else {
		resp = h.Serve(ctx, r)
	}
	return events.APIGatewayProxyResponse{StatusCode: resp.Status, Headers: resp.Headers, Body: string(resp.Body)}
}

// header reads a header case-insensitively.
func header(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
