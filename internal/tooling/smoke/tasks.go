package smoke

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/unschedule/unschedule/internal/todo/task"
)

// Task is a task as the API returns it.
type Task struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
	DueAt  string `json:"dueAt"`
}

// Due is the task's deadline.
func (t Task) Due() (time.Time, error) { return task.ParseTime(t.DueAt) }

// HTTPTasks calls the deployed task API with a Cognito ID token, as the web
// app does.
type HTTPTasks struct {
	// BaseURL is the ApiUrl output (ending in "/").
	BaseURL string
	// Token is the user's ID token.
	Token  string
	Client *http.Client
}

func (h *HTTPTasks) do(ctx context.Context, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.BaseURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", h.Token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cmp.Or(h.Client, &http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("%s /%s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != want {
		return fmt.Errorf("%s /%s: HTTP %d, want %d: %s", method, path, resp.StatusCode, want, bytes.TrimSpace(raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s /%s: answer is not a task: %w", method, path, err)
		}
	}
	return nil
}

// Create implements Tasks.
func (h *HTTPTasks) Create(ctx context.Context, title string, due time.Time) (Task, error) {
	var t Task
	err := h.do(ctx, http.MethodPost, "tasks", map[string]string{"title": title, "dueAt": task.FormatTime(due)}, http.StatusCreated, &t)
	return t, err
}

// Update implements Tasks: a PATCH of the given fields.
func (h *HTTPTasks) Update(ctx context.Context, id string, fields map[string]string) (Task, error) {
	var t Task
	err := h.do(ctx, http.MethodPatch, "tasks/"+url.PathEscape(id), fields, http.StatusOK, &t)
	return t, err
}

// Get implements Tasks.
func (h *HTTPTasks) Get(ctx context.Context, id string) (Task, error) {
	var t Task
	err := h.do(ctx, http.MethodGet, "tasks/"+url.PathEscape(id), nil, http.StatusOK, &t)
	return t, err
}

// Delete implements Tasks.
func (h *HTTPTasks) Delete(ctx context.Context, id string) error {
	return h.do(ctx, http.MethodDelete, "tasks/"+url.PathEscape(id), nil, http.StatusNoContent, nil)
}
