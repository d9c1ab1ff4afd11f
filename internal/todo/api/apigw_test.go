package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
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
