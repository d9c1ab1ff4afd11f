package tasktable

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/todo/api"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

// TestAPIAndExpiryOnDynalite runs the real API handler and the real expiry
// use case on the DynamoDB store against dynalite: the writes the API
// makes, and the conditional expiry write (status is a reserved word, the
// deadline must match), are proven on a DynamoDB-compatible server.
func TestAPIAndExpiryOnDynalite(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := &fixedClock{now}
	client, table := newTable(t)
	store := New(client, table)
	outbox := &memory.Outbox{}
	svc, err := task.NewService(task.Deps{Store: store, Timer: inmem.NewScheduler(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	// The expiry as deployed: the expiry function's core on the table
	// through the contract's writes (ItemStore), delivering to the to-do
	// app's target (the notify function's task.NotifyTarget).
	items, err := dynamo.NewItemStore(client, table, tableschema.Todo())
	if err != nil {
		t.Fatal(err)
	}
	core, err := fire.New(fire.Config{Schema: tableschema.Todo(), Store: items, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	target, err := task.NewNotifyTarget(task.NotifyConfig{Tasks: store, Notifier: outbox, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	firer, err := task.NewFirer(core, items, target)
	if err != nil {
		t.Fatal(err)
	}
	h := api.New(svc, pagecursor.NewRandom(), nil, nil)
	call := func(user, method, route, id, body string) (int, map[string]any) {
		t.Helper()
		resp := h.Serve(ctx, api.Request{Method: method, Route: route, ID: id, UserID: user, Body: []byte(body)})
		var m map[string]any
		if len(resp.Body) > 0 {
			if err := json.Unmarshal(resp.Body, &m); err != nil {
				t.Fatalf("%s %s: body %q", method, route, resp.Body)
			}
		}
		return resp.Status, m
	}
	create := func(title string, due time.Time) string {
		t.Helper()
		st, m := call("alice", "POST", api.RouteTasks, "", `{"title":"`+title+`","dueAt":"`+due.Format(time.RFC3339)+`"}`)
		if st != 201 {
			t.Fatalf("create: %d %v", st, m)
		}
		return m["id"].(string)
	}
	due := now.Add(time.Hour)

	completed := create("complete me", due)
	moved := create("move me", due)
	expires := create("let me expire", due)
	deleted := create("delete me", due)

	for _, tc := range []struct {
		name, user, method, id, body string
		status                       int
	}{
		{"complete", "alice", "PATCH", completed, `{"status":"done"}`, 200},
		{"complete again is 409", "alice", "PATCH", completed, `{"status":"done"}`, 409},
		{"edit a done task is 409", "alice", "PATCH", completed, `{"title":"x"}`, 409},
		{"move the deadline later", "alice", "PATCH", moved, `{"dueAt":"` + due.Add(time.Hour).Format(time.RFC3339) + `"}`, 200},
		{"edit title and description", "alice", "PATCH", expires, `{"title":"renamed","description":"d"}`, 200},
		{"another user cannot read", "bob", "GET", expires, ``, 404},
		{"another user cannot complete", "bob", "PATCH", expires, `{"status":"done"}`, 404},
		{"another user cannot delete", "bob", "DELETE", expires, ``, 404},
		{"delete", "alice", "DELETE", deleted, ``, 204},
		{"delete again is 404", "alice", "DELETE", deleted, ``, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			route := api.RouteTask
			if st, m := call(tc.user, tc.method, route, tc.id, tc.body); st != tc.status {
				t.Fatalf("status %d, want %d: %v", st, tc.status, m)
			}
		})
	}
	if st, m := call("alice", "GET", api.RouteTasks, "", ""); st != 200 || len(m["tasks"].([]any)) != 3 {
		t.Fatalf("list: %d %v", st, m)
	}

	clock.t = due.Add(time.Second) // the old deadline has passed
	for _, tc := range []struct {
		name       string
		id         string
		want       task.ExpireOutcome
		wantStatus task.Status
	}{
		{"completed task is not expired", completed, task.Skipped, task.StatusDone},
		{"a moved deadline is not expired early", moved, task.Skipped, task.StatusPending},
		{"pending task at its deadline expires", expires, task.Expired, task.StatusExpired},
		{"the same firing again sends nothing", expires, task.Skipped, task.StatusExpired},
		{"a deleted task is skipped", deleted, task.Skipped, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := firer.Expire(ctx, task.ExpireRequest{UserID: "alice", TaskID: tc.id, DueAt: due})
			if err != nil || got != tc.want {
				t.Fatalf("Expire = %v, %v; want %v", got, err, tc.want)
			}
			if tc.wantStatus == "" {
				return
			}
			stored, err := store.Get(ctx, "alice", tc.id)
			if err != nil || stored.Status != tc.wantStatus {
				t.Fatalf("stored %+v, %v; want %s", stored, err, tc.wantStatus)
			}
		})
	}
	sent := outbox.Sent()
	if len(sent) != 1 || sent[0].TaskID != expires || !strings.Contains(sent[0].Title, "renamed") {
		t.Fatalf("notifications %+v, want exactly one for %s", sent, expires)
	}
	stored, _ := store.Get(ctx, "alice", expires)
	if stored.NotifiedAt.IsZero() {
		t.Fatal("the notification was not recorded on the task")
	}
	// The contract's claim knows nothing of the table's sparse indexes:
	// the target's record takes the task out of them.
	raw := rawItem(t, client, table, "alice", expires)
	for _, a := range []string{tableschema.UserPendingAttr, tableschema.PendingShardAttr} {
		if _, ok := raw[a]; ok {
			t.Errorf("expired and notified task still has %s: %v", a, raw)
		}
	}
}
