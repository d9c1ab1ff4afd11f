package api

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

type fuzzClock struct{}

func (fuzzClock) Now() time.Time { return time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC) }

const (
	fuzzUserA   = "aaaaaaaa-0000-4000-8000-00000000000a"
	fuzzUserB   = "bbbbbbbb-0000-4000-8000-00000000000b"
	fuzzSecretT = "SECRET-TITLE-OF-A"
	fuzzSecretD = "SECRET-DESCRIPTION-OF-A"
)

// FuzzServe sends arbitrary requests as user B to a memory-backed API in
// which user A owns a task: never a panic, never a 5xx, never a trace of
// A's task in a response, and A's task is never changed.
func FuzzServe(f *testing.F) {
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodPut, "OPTIONS", ""}
	routes := []string{RouteTasks, RouteTask, "/", "/tasks/{id}/x"}
	for _, s := range []struct {
		m, r   uint8
		id     string
		cursor string
		limit  string
		body   string
	}{
		{1, 0, "", "", "", `{"title":"mine","dueAt":"2030-01-02T00:00:00Z"}`},
		{0, 0, "", "", "10", ``},
		{0, 0, "", "AAAA", "", ``},
		{0, 1, "A", "", "", ``},
		{2, 1, "A", "", "", `{"status":"done"}`},
		{3, 1, "A", "", "", ``},
		{2, 1, "01JD00000000000000000000AA", "", "", `{"dueAt":"2030-01-01T12:00:05Z"}`},
		{0, 0, "", "", "-1", `{}`},
	} {
		f.Add(s.m, s.r, s.id, s.cursor, s.limit, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, m, r uint8, id, cursor, limit string, body []byte) {
		ctx := context.Background()
		store := memory.NewStore()
		svc, err := task.NewService(task.Deps{Store: store, Timer: inmem.NewScheduler(), Clock: fuzzClock{},
			Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		a, err := svc.Create(ctx, fuzzUserA, task.NewTask{Title: fuzzSecretT, Description: fuzzSecretD,
			DueAt: fuzzClock{}.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if id == "A" {
			id = a.TaskID // aim at A's task
		}
		q := map[string]string{}
		if cursor != "" {
			q["cursor"] = cursor
		}
		if limit != "" {
			q["limit"] = limit
		}
		h := New(svc, pagecursor.NewRandom(), []string{"http://localhost:5173"}, slog.New(slog.DiscardHandler))
		resp := h.Serve(ctx, Request{Method: methods[int(m)%len(methods)], Route: routes[int(r)%len(routes)],
			ID: id, UserID: fuzzUserB, Query: q, Body: body})
		if resp.Status >= 500 || resp.Status < 200 {
			t.Fatalf("status %d for client input: %s", resp.Status, resp.Body)
		}
		input := append([]byte(id+cursor+limit), body...)
		for _, secret := range []string{fuzzSecretT, fuzzSecretD, a.TaskID} {
			if bytes.Contains(resp.Body, []byte(secret)) && !bytes.Contains(input, []byte(secret)) {
				t.Fatalf("user B's response holds %q of user A's task: %s", secret, resp.Body)
			}
		}
		got, err := store.Get(ctx, fuzzUserA, a.TaskID)
		if err != nil || got != a {
			t.Fatalf("user B changed user A's task: %+v, %v", got, err)
		}
	})
}
