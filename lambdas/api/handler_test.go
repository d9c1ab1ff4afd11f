package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/todo/api"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/todo/todometrics"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

func TestHandleCountsCreatesAndServerErrors(t *testing.T) {
	claims := events.APIGatewayProxyRequestContext{Authorizer: map[string]any{"claims": map[string]any{"sub": "u1"}}}
	due := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name      string
		ev        events.APIGatewayProxyRequest
		storeDown bool
		status    int
		metric    string
	}{
		{"create", events.APIGatewayProxyRequest{HTTPMethod: "POST", Resource: api.RouteTasks, RequestContext: claims,
			Body: `{"title":"a","dueAt":"` + due + `"}`}, false, 201, todometrics.TasksCreated},
		{"bad input is no metric", events.APIGatewayProxyRequest{HTTPMethod: "POST", Resource: api.RouteTasks, RequestContext: claims,
			Body: `{`}, false, 400, ""},
		{"store down", events.APIGatewayProxyRequest{HTTPMethod: "GET", Resource: api.RouteTasks, RequestContext: claims}, true, 500, todometrics.ApiServerErrors},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.NewStore()
			if tc.storeDown {
				store.Fail = func(string) error { return errors.New("down") }
			}
			svc, err := task.NewService(task.Deps{Store: store, Timer: inmem.NewScheduler()})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			h := &handler{api: api.New(svc, pagecursor.NewRandom(), []string{"http://localhost:5173"}, nil), metrics: metrics.New(todometrics.FunctionAPI, &out)}
			resp, err := h.Handle(context.Background(), tc.ev)
			if err != nil || resp.StatusCode != tc.status {
				t.Fatalf("status %d err %v: %s", resp.StatusCode, err, resp.Body)
			}
			if tc.metric == "" {
				if out.Len() != 0 {
					t.Fatalf("metrics written: %s", out.String())
				}
				return
			}
			if !strings.Contains(out.String(), `"`+tc.metric+`":1`) {
				t.Fatalf("metric %s not written: %s", tc.metric, out.String())
			}
		})
	}
}
