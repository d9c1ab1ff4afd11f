package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

func TestHandle(t *testing.T) {
	s, _ := unsubscribe.NewSigner(bytes.Repeat([]byte{3}, 32))
	tok, _ := s.Token(unsubscribe.Claims{Sender: "news@x.io", Address: "bob@y.io", Campaign: "c1"})
	list := memory.NewSuppressions()
	h := &handler{page: &unsubscribe.Page{Keys: unsubscribe.StaticKeys(s), Store: list, Clock: clock.NewFake(time.Now()), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	for _, c := range []struct {
		name   string
		e      events.APIGatewayProxyRequest
		status int
		body   string
	}{
		{"GET: the page", events.APIGatewayProxyRequest{HTTPMethod: "GET", QueryStringParameters: map[string]string{"token": tok}}, 200, "<form"},
		{"a forged token as JSON: 400", events.APIGatewayProxyRequest{HTTPMethod: "POST", QueryStringParameters: map[string]string{"token": tok + "x"},
			Headers: map[string]string{"accept": "application/json"}}, 400, `"field":"token"`},
		{"one-click POST", events.APIGatewayProxyRequest{HTTPMethod: "POST", QueryStringParameters: map[string]string{"token": tok},
			Body: "List-Unsubscribe=One-Click"}, 200, "Unsubscribed"},
	} {
		res, err := h.Handle(context.Background(), c.e)
		if err != nil || res.StatusCode != c.status || !strings.Contains(res.Body, c.body) {
			t.Errorf("%s: %d %q, %v", c.name, res.StatusCode, res.Body, err)
		}
	}
	if _, ok, _ := list.Get(context.Background(), "bob@y.io"); !ok {
		t.Error("the POST did not suppress the address")
	}
}
