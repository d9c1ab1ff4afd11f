package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/todo/api"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// BenchmarkCreate is the API's create path (POST /tasks: parse,
// validate, check the user's pending count, write the task, create its
// schedule, render the reply) on the memory store and scheduler. The
// store is replaced, off the clock, every 500 creates: one user may hold
// only so many pending tasks, and the memory store's count grows with it.
// `make bench` runs it.
func BenchmarkCreate(b *testing.B) {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	newHandler := func() *api.Handler {
		svc, err := task.NewService(task.Deps{Store: memory.NewStore(), Timer: inmem.NewScheduler(),
			Log: log})
		if err != nil {
			b.Fatal(err)
		}
		return api.New(svc, pagecursor.NewRandom(), []string{"https://app.example.com"}, log)
	}
	body := []byte(`{"title":"water the plants","description":"the ones on the balcony","dueAt":"` +
		time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339) + `"}`)
	ctx := context.Background()
	var h *api.Handler
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%500 == 0 {
			b.StopTimer()
			h = newHandler()
			b.StartTimer()
		}
		resp := h.Serve(ctx, api.Request{Method: http.MethodPost, Route: api.RouteTasks, UserID: "user-1",
			Body: body, Origin: "https://app.example.com"})
		if resp.Status != http.StatusCreated {
			b.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
	}
}
