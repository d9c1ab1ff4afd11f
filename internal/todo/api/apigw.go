package api

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/unschedule/unschedule/internal/core/identity"
)

// FromAPIGateway turns a REST API proxy event into a Request. The caller's
// identity is the sub claim that the Cognito authorizer verified (and its
// email claim, the address notifications go to; email_verified;
// custom:email_proof, the address last proved by a code; and the
// cognito:groups claim, the groups the caller belongs to).
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
		EmailVerified: claim(e.RequestContext.Authorizer, "email_verified") == "true",
		EmailProof:    claim(e.RequestContext.Authorizer, identity.EmailProofAttribute),
		Groups:        ParseGroups(claimValue(e.RequestContext.Authorizer, "cognito:groups")),
		Query:         e.QueryStringParameters, Body: body,
		Origin: header(e.Headers, "Origin")}, nil
}

// claim reads one claim of the ID token the Cognito authorizer verified.
// A REST API's Cognito authorizer hands every claim over as a string
// ("true" for a true email_verified); a JSON boolean is read the same.
func claim(authorizer map[string]any, name string) string {
	switch v := claimValue(authorizer, name).(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

func claimValue(authorizer map[string]any, name string) any {
	claims, ok := authorizer["claims"].(map[string]any)
	if !ok {
		return nil
	}
	return claims[name]
}

// ParseGroups reads a cognito:groups claim. In the token it is a JSON
// array (https://docs.aws.amazon.com/cognito/latest/developerguide/amazon-cognito-user-pools-using-the-id-token.html);
// a REST API's Cognito authorizer flattens it to one string, seen as
// "a,b" and as "[a b]". Group names hold no spaces, commas or brackets
// where this app names them (constructs/campaigns checks its group).
func ParseGroups(v any) []string {
	var out []string
	switch v := v.(type) {
	case []any:
		for _, g := range v {
			if s, ok := g.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, v...)
	case string:
		out = strings.FieldsFunc(strings.Trim(v, "[]"), func(r rune) bool { return r == ',' || r == ' ' })
	}
	return out
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
