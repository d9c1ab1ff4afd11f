package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/identity"
)

// FromAPIGateway turns a REST API proxy event into a Request. The
// caller's identity is the sub claim that the Cognito authorizer verified
// (and its email claim; email_verified; custom:email_proof, the address
// last proved by a code; and the cognito:groups claim, the groups the
// caller belongs to). It fails only on a body flagged base64 that is not.
func FromAPIGateway(e events.APIGatewayProxyRequest) (Request, error) {
	body := []byte(e.Body)
	if e.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(e.Body)
		if err != nil {
			return Request{}, err
		}
		body = b
	}
	return Request{Method: e.HTTPMethod, Route: e.Resource, ID: e.PathParameters["id"],
		UserID: claim(e.RequestContext.Authorizer, "sub"), Email: claim(e.RequestContext.Authorizer, "email"),
		EmailVerified: claim(e.RequestContext.Authorizer, "email_verified") == "true",
		EmailProof:    claim(e.RequestContext.Authorizer, identity.EmailProofAttribute),
		Groups:        ParseGroups(claimValue(e.RequestContext.Authorizer, "cognito:groups")),
		Query:         e.QueryStringParameters, Body: body,
		Origin: Header(e.Headers, "Origin")}, nil
}

// ServeAPIGateway is a Lambda handler's body: the proxy event decoded
// (FromAPIGateway) and answered by serve, or a JSON 400 (with the CORS
// headers of allowed) when its body is not valid base64.
func ServeAPIGateway(ctx context.Context, e events.APIGatewayProxyRequest, allowed []string,
	serve func(context.Context, Request) Response) events.APIGatewayProxyResponse {
	r, err := FromAPIGateway(e)
	var resp Response
	if err != nil {
		resp = CORS(Error(http.StatusBadRequest, "validation_error", "request body is not valid base64"), allowed, Header(e.Headers, "Origin"))
	} else {
		resp = serve(ctx, r)
	}
	return events.APIGatewayProxyResponse{StatusCode: resp.Status, Headers: resp.Headers, Body: string(resp.Body)}
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

// Header reads a header case-insensitively.
func Header(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
