package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/tooling/testfixture"
)

func loadEvent(t *testing.T, name string) events.APIGatewayProxyRequest {
	return testfixture.Load[events.APIGatewayProxyRequest](t, name)
}

func TestServeAPIGateway(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(e *events.APIGatewayProxyRequest)
		status  int
		wantErr string
	}{
		{"create", nil, 201, ""},
		{"base64 body", func(e *events.APIGatewayProxyRequest) {
			e.Body, e.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte(e.Body)), true
		}, 201, ""},
		{"bad base64", func(e *events.APIGatewayProxyRequest) { e.Body, e.IsBase64Encoded = "%%%", true }, 400, "validation_error"},
		{"no claims", func(e *events.APIGatewayProxyRequest) { e.RequestContext.Authorizer = nil }, 401, "unauthorized"},
		{"body owner ignored", func(e *events.APIGatewayProxyRequest) {
			e.Body = `{"title":"x","dueAt":"2026-12-01T00:00:00Z","userId":"mallory"}`
		}, 400, "validation_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			ev := loadEvent(t, "create.json")
			if tc.mutate != nil {
				tc.mutate(&ev)
			}
			resp := env.h.ServeAPIGateway(context.Background(), ev)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, resp.Body)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(resp.Body), &m); err != nil {
				t.Fatalf("body not JSON: %q", resp.Body)
			}
			if tc.wantErr != "" && m["error"] != tc.wantErr {
				t.Fatalf("error %v, want %s", m["error"], tc.wantErr)
			}
			if resp.Headers["Access-Control-Allow-Origin"] != "http://localhost:5173" {
				t.Fatalf("ACAO %q", resp.Headers["Access-Control-Allow-Origin"])
			}
			if tc.status == 201 {
				all := env.store.All()
				if len(all) != 1 || all[0].UserID != "8f2c1a7e-0000-4000-8000-000000000001" {
					t.Fatalf("owner must be the token sub: %+v", all)
				}
				if !all[0].DueAt.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
					t.Fatalf("dueAt %v", all[0].DueAt)
				}
			}
		})
	}
}

// The caller's identity comes from the verified claims: the sub, and the
// email address that notifications go to.
func TestFromAPIGatewayReadsClaims(t *testing.T) {
	e := loadEvent(t, "create.json")
	claims := e.RequestContext.Authorizer["claims"].(map[string]any)
	r, err := FromAPIGateway(e)
	if err != nil {
		t.Fatal(err)
	}
	if r.UserID != claims["sub"] || r.Email != "alice@example.com" {
		t.Fatalf("request user %q email %q", r.UserID, r.Email)
	}
	delete(claims, "email")
	if r, _ := FromAPIGateway(e); r.Email != "" {
		t.Fatalf("email %q without an email claim", r.Email)
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
