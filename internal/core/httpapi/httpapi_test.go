package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The caller's identity comes from the verified claims, the route's {id}
// from the path, and the body is decoded when API Gateway sent it base64.
func TestFromAPIGateway(t *testing.T) {
	e := events.APIGatewayProxyRequest{HTTPMethod: "PATCH", Resource: "/things/{id}", PathParameters: map[string]string{"id": "t1"},
		Headers: map[string]string{"origin": "https://app.example.com"}, Body: base64.StdEncoding.EncodeToString([]byte(`{"a":1}`)),
		IsBase64Encoded: true, QueryStringParameters: map[string]string{"limit": "5"},
		RequestContext: events.APIGatewayProxyRequestContext{Authorizer: map[string]any{"claims": map[string]any{
			"sub": "u1", "email": "ada@example.com"}}}}
	r, err := FromAPIGateway(e)
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != "PATCH" || r.Route != "/things/{id}" || r.ID != "t1" || r.UserID != "u1" || r.Email != "ada@example.com" ||
		r.Origin != "https://app.example.com" || string(r.Body) != `{"a":1}` || r.Query["limit"] != "5" {
		t.Fatalf("request %+v", r)
	}
	e.Body = "%%%"
	if _, err := FromAPIGateway(e); err == nil {
		t.Fatal("a body flagged base64 that is not decoded without an error")
	}
	e.RequestContext.Authorizer = nil
	e.IsBase64Encoded = false
	if r, err := FromAPIGateway(e); err != nil || r.UserID != "" || r.Email != "" {
		t.Fatalf("no claims: %+v, %v; want no identity", r, err)
	}
}

// The campaign routes decide on these claims, so each form the
// authorizer hands over is read the same: a REST API's Cognito authorizer
// passes every claim as a string.
func TestFromAPIGatewayReadsGroupsAndEmailVerified(t *testing.T) {
	for _, tc := range []struct {
		name         string
		claims       map[string]any
		wantGroups   []string
		wantVerified bool
		wantProof    string
	}{
		{"no claims", map[string]any{"sub": "u1"}, nil, false, ""},
		{"string true", map[string]any{"sub": "u1", "email_verified": "true"}, nil, true, ""},
		{"string false", map[string]any{"sub": "u1", "email_verified": "false"}, nil, false, ""},
		{"boolean true", map[string]any{"sub": "u1", "email_verified": true}, nil, true, ""},
		{"other spelling refused", map[string]any{"sub": "u1", "email_verified": "True "}, nil, false, ""},
		{"one group", map[string]any{"sub": "u1", "cognito:groups": "campaign-senders"}, []string{"campaign-senders"}, false, ""},
		{"comma list", map[string]any{"sub": "u1", "cognito:groups": "a,campaign-senders"}, []string{"a", "campaign-senders"}, false, ""},
		{"bracketed list", map[string]any{"sub": "u1", "cognito:groups": "[a campaign-senders]"}, []string{"a", "campaign-senders"}, false, ""},
		{"JSON array", map[string]any{"sub": "u1", "cognito:groups": []any{"a", "campaign-senders"}}, []string{"a", "campaign-senders"}, false, ""},
		{"empty", map[string]any{"sub": "u1", "cognito:groups": ""}, nil, false, ""},
		{"proof", map[string]any{"sub": "u1", "email": "ada@example.com", "custom:email_proof": "ada@example.com"}, nil, false, "ada@example.com"},
		{"proof under another name ignored", map[string]any{"sub": "u1", "email_proof": "ada@example.com"}, nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := events.APIGatewayProxyRequest{HTTPMethod: "GET", Resource: "/campaigns",
				RequestContext: events.APIGatewayProxyRequestContext{Authorizer: map[string]any{"claims": tc.claims}}}
			r, err := FromAPIGateway(ev)
			if err != nil {
				t.Fatal(err)
			}
			if r.EmailProof != tc.wantProof {
				t.Fatalf("proof %q; want %q", r.EmailProof, tc.wantProof)
			}
			if r.EmailVerified != tc.wantVerified || !slices.Equal(r.Groups, tc.wantGroups) {
				t.Fatalf("verified %v groups %q; want %v %q", r.EmailVerified, r.Groups, tc.wantVerified, tc.wantGroups)
			}
			if want := slices.Contains(tc.wantGroups, "campaign-senders"); r.InGroup("campaign-senders") != want || r.InGroup("") {
				t.Fatalf("InGroup(campaign-senders) %v, want %v", !want, want)
			}
		})
	}
}

func TestCORS(t *testing.T) {
	allowed := []string{"https://app.example.com", "http://localhost:5173"}
	for _, tc := range []struct {
		name    string
		allowed []string
		origin  string
		want    map[string]string
	}{
		{"an allowed origin gets itself", allowed, "http://localhost:5173",
			map[string]string{"Content-Type": "application/json", "Access-Control-Allow-Origin": "http://localhost:5173", "Vary": "Origin"}},
		{"another origin gets the first", allowed, "https://evil.example",
			map[string]string{"Content-Type": "application/json", "Access-Control-Allow-Origin": "https://app.example.com", "Vary": "Origin"}},
		{"none allowed: no headers", nil, "https://app.example.com", map[string]string{"Content-Type": "application/json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CORS(Error(http.StatusNotFound, "not_found", "x"), tc.allowed, tc.origin)
			if !maps.Equal(got.Headers, tc.want) {
				t.Fatalf("headers %v, want %v", got.Headers, tc.want)
			}
		})
	}
}

func TestBodies(t *testing.T) {
	if r := Error(http.StatusBadRequest, "validation_error", `title is "required"`); r.Status != 400 ||
		string(r.Body) != `{"error":"validation_error","message":"title is \"required\""}` || r.Headers["Content-Type"] != "application/json" {
		t.Fatalf("Error = %d %s %v", r.Status, r.Body, r.Headers)
	}
	if r := JSON(http.StatusCreated, map[string]int{"n": 1}); r.Status != 201 || string(r.Body) != `{"n":1}` {
		t.Fatalf("JSON = %d %s", r.Status, r.Body)
	}
	if r := JSON(http.StatusOK, func() {}); r.Status != 500 || !strings.Contains(string(r.Body), "internal_error") {
		t.Fatalf("JSON of what does not marshal = %d %s, want a 500", r.Status, r.Body)
	}
}

// An internal error is logged, never echoed; a timeout is a 503 "try again".
func TestInternal(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{errors.New("dynamodb: secret table arn:aws:dynamodb:…"), 500, "internal_error"},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), 503, "unavailable"},
		{context.Canceled, 503, "unavailable"},
	} {
		var logs bytes.Buffer
		r := Internal(context.Background(), slog.New(slog.NewJSONHandler(&logs, nil)), tc.err)
		if r.Status != tc.status || !strings.Contains(string(r.Body), `"error":"`+tc.code+`"`) {
			t.Errorf("Internal(%v) = %d %s, want %d %s", tc.err, r.Status, r.Body, tc.status, tc.code)
		}
		if strings.Contains(string(r.Body), tc.err.Error()) || !strings.Contains(logs.String(), tc.err.Error()) {
			t.Errorf("Internal(%v): body %s, log %s; want the error logged, not answered", tc.err, r.Body, logs.String())
		}
	}
}

// A body that is not valid base64 is the caller's mistake: a JSON 400
// that a browser of an allowed origin can read; the rest reaches serve.
func TestServeAPIGateway(t *testing.T) {
	serve := func(_ context.Context, r Request) Response { return JSON(http.StatusOK, map[string]string{"id": r.ID}) }
	allowed := []string{"https://app.example.com"}
	e := events.APIGatewayProxyRequest{Body: "%%%", IsBase64Encoded: true, PathParameters: map[string]string{"id": "x"},
		Headers: map[string]string{"Origin": "https://app.example.com"}}
	resp := ServeAPIGateway(context.Background(), e, allowed, serve)
	if resp.StatusCode != 400 || !strings.Contains(resp.Body, "validation_error") || resp.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" {
		t.Fatalf("bad base64: %+v", resp)
	}
	e.Body, e.IsBase64Encoded = "", false
	if resp := ServeAPIGateway(context.Background(), e, allowed, serve); resp.StatusCode != 200 || resp.Body != `{"id":"x"}` {
		t.Fatalf("served: %+v", resp)
	}
}
