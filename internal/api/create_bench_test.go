package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/api"
	"github.com/unschedule/unschedule/internal/memory"
	"github.com/unschedule/unschedule/internal/task"
)

// BenchmarkCreate is the API's create path (POST /tasks: parse,
// validate, write the task, create its schedule, render the reply) on the
// memory store and scheduler. `make bench` runs it.
func BenchmarkCreate(b *testing.B) {
	svc, err := task.NewService(task.Deps{Store: memory.NewStore(), Scheduler: memory.NewScheduler(),
		Notifier: &memory.Outbox{}, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	h := api.New(svc, []string{"https://app.example.com"}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	body := []byte(`{"title":"water the plants","description":"the ones on the balcony","dueAt":"` +
		time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339) + `"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp := h.Serve(ctx, api.Request{Method: http.MethodPost, Route: api.RouteTasks, UserID: "user-1",
			Body: body, Origin: "https://app.example.com"})
		if resp.Status != http.StatusCreated {
			b.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
	}
}
