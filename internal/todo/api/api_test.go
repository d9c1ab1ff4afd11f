package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type env struct {
	h     *Handler
	store *memory.Store
	sched *inmem.Scheduler
	clock *fixedClock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{store: memory.NewStore(), sched: inmem.NewScheduler(), clock: &fixedClock{t0}}
	svc, err := task.NewService(task.Deps{Store: e.store, Timer: e.sched, Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	e.h = New(svc, pagecursor.NewRandom(), []string{"https://app.example.com", "http://localhost:5173"}, nil)
	return e
}

func (e *env) do(t testing.TB, user, method, route, id, body string, query map[string]string) (int, map[string]any) {
	t.Helper()
	resp := e.h.Serve(context.Background(), Request{Method: method, Route: route, ID: id, UserID: user, Body: []byte(body), Query: query})
	if resp.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" {
		t.Fatalf("CORS header missing: %v", resp.Headers)
	}
	var m map[string]any
	if resp.Status != http.StatusNoContent {
		if err := json.Unmarshal(resp.Body, &m); err != nil {
			t.Fatalf("status %d, body not JSON: %q", resp.Status, resp.Body)
		}
	}
	return resp.Status, m
}

func (e *env) create(t *testing.T, user, title string, due time.Time) string {
	t.Helper()
	st, m := e.do(t, user, "POST", RouteTasks, "", `{"title":"`+title+`","dueAt":"`+due.Format(time.RFC3339)+`"}`, nil)
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, m)
	}
	return m["id"].(string)
}

func TestCreateValidation(t *testing.T) {
	due := t0.Add(time.Hour).Format(time.RFC3339)
	for _, tc := range []struct {
		name, body string
		status     int
		msg        string
	}{
		{"malformed json", `{"title":`, 400, "malformed JSON"},
		{"not an object", `[1,2]`, 400, "JSON object"},
		{"two objects", `{"title":"a","dueAt":"` + due + `"}{}`, 400, "exactly one"},
		{"empty body", ``, 400, "empty"},
		{"missing title", `{"dueAt":"` + due + `"}`, 400, "title is required"},
		{"blank title", `{"title":"   ","dueAt":"` + due + `"}`, 400, "must not be empty"},
		{"title too long", `{"title":"` + strings.Repeat("x", 201) + `","dueAt":"` + due + `"}`, 400, "too long"},
		{"title wrong type", `{"title":5,"dueAt":"` + due + `"}`, 400, `"title"`},
		{"description too long", `{"title":"a","description":"` + strings.Repeat("x", 2001) + `","dueAt":"` + due + `"}`, 400, "description is too long"},
		{"missing dueAt", `{"title":"a"}`, 400, "dueAt is required"},
		{"dueAt not rfc3339", `{"title":"a","dueAt":"tomorrow"}`, 400, "not an RFC 3339"},
		{"dueAt date only", `{"title":"a","dueAt":"2030-01-01"}`, 400, "not an RFC 3339"},
		{"dueAt in past", `{"title":"a","dueAt":"` + t0.Add(-time.Minute).Format(time.RFC3339) + `"}`, 400, "not in the future"},
		{"dueAt now", `{"title":"a","dueAt":"` + t0.Format(time.RFC3339) + `"}`, 400, "not in the future"},
		{"dueAt over a year", `{"title":"a","dueAt":"` + t0.Add(366*24*time.Hour).Format(time.RFC3339) + `"}`, 400, "more than a year"},
		{"unknown field", `{"title":"a","dueAt":"` + due + `","owner":"mallory"}`, 400, `unknown field "owner"`},
		{"status on create", `{"title":"a","dueAt":"` + due + `","status":"done"}`, 400, "unknown field"},
		{"mis-cased title", `{"TITLE":"a","dueAt":"` + due + `"}`, 400, `unknown field "TITLE"`},
		{"mis-cased dueAt", `{"title":"a","DueAt":"` + due + `"}`, 400, `unknown field "DueAt"`},
		{"oversized body", `{"title":"a","description":"` + strings.Repeat("x", task.MaxBodyBytes) + `","dueAt":"` + due + `"}`, 413, "at most"},
		{"ok", `{"title":" Pay rent ","dueAt":"2026-11-30T14:00:00+01:00"}`, 201, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			st, m := e.do(t, "alice", "POST", RouteTasks, "", tc.body, nil)
			if st != tc.status {
				t.Fatalf("status %d, want %d: %v", st, tc.status, m)
			}
			if tc.status >= 400 {
				if msg, _ := m["message"].(string); !strings.Contains(msg, tc.msg) {
					t.Fatalf("message %q lacks %q", msg, tc.msg)
				}
				if len(e.store.All()) != 0 || len(e.sched.All()) != 0 {
					t.Fatal("a refused request left a task or schedule")
				}
				return
			}
			if m["title"] != "Pay rent" || m["status"] != "Pending" || m["dueAt"] != "2026-11-30T13:00:00Z" {
				t.Fatalf("created %v", m)
			}
		})
	}
}

func TestCreateMakesScheduleWithContract(t *testing.T) {
	e := newEnv(t)
	due := t0.Add(90 * time.Minute)
	id := e.create(t, "alice", "a", due)
	stored, err := e.store.Get(context.Background(), "alice", id)
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := e.sched.Lookup(task.ScheduleName(id))
	if !ok {
		t.Fatal("no schedule created")
	}
	want := contract.Schedule{Name: "task-" + id, At: due, ClientToken: task.ClientToken(stored.ScheduleToken, due),
		Payload: task.Payload{Key: task.Key("alice", id), Due: due}}
	if sc != want {
		t.Fatalf("schedule %+v, want %+v", sc, want)
	}
	if stored.ScheduleToken == "" || stored.ScheduleRepair {
		t.Fatalf("stored %+v", stored)
	}
}

func TestCreateScheduleFailureKeepsTaskForRepair(t *testing.T) {
	e := newEnv(t)
	e.sched.Fail = func(op, _ string) error { return errors.New("ThrottlingException: rate exceeded") }
	id := e.create(t, "alice", "a", t0.Add(time.Hour))
	got, err := e.store.Get(context.Background(), "alice", id)
	if err != nil {
		t.Fatal(err)
	}
	if !got.ScheduleRepair || got.Status != task.StatusPending {
		t.Fatalf("task %+v: want Pending and marked for repair", got)
	}
}

func TestStoreFailureIs500WithoutDetail(t *testing.T) {
	e := newEnv(t)
	e.store.Fail = func(string) error { return errors.New("secret internal detail") }
	st, m := e.do(t, "alice", "GET", RouteTasks, "", "", nil)
	if st != 500 || strings.Contains(m["message"].(string), "secret") {
		t.Fatalf("%d %v", st, m)
	}
}

func TestOwnershipAndTransitions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, e *env, id string)
		user   string
		method string
		body   string
		status int
	}{
		{"owner reads", nil, "alice", "GET", "", 200},
		{"other user reads is 404", nil, "bob", "GET", "", 404},
		{"other user patches is 404", nil, "bob", "PATCH", `{"title":"x"}`, 404},
		{"other user deletes is 404", nil, "bob", "DELETE", "", 404},
		{"edit title", nil, "alice", "PATCH", `{"title":"new"}`, 200},
		{"complete", nil, "alice", "PATCH", `{"status":"done"}`, 200},
		{"unknown status", nil, "alice", "PATCH", `{"status":"expired"}`, 400},
		{"empty patch", nil, "alice", "PATCH", `{}`, 400},
		{"patch dueAt in past", nil, "alice", "PATCH", `{"dueAt":"2020-01-01T00:00:00Z"}`, 400},
		{"complete twice is 409", func(t *testing.T, e *env, id string) {
			e.do(t, "alice", "PATCH", RouteTask, id, `{"status":"done"}`, nil)
		}, "alice", "PATCH", `{"status":"done"}`, 409},
		{"edit expired is 409", func(t *testing.T, e *env, id string) {
			_, _ = e.store.Expire(context.Background(), "alice", id, t0.Add(time.Hour), t0.Add(time.Hour))
		}, "alice", "PATCH", `{"title":"late"}`, 409},
		{"delete", nil, "alice", "DELETE", "", 204},
		{"delete twice is 404", func(t *testing.T, e *env, id string) {
			e.do(t, "alice", "DELETE", RouteTask, id, "", nil)
		}, "alice", "DELETE", "", 404},
		{"put not allowed", nil, "alice", "PUT", `{}`, 405},
		{"anonymous", nil, "", "GET", "", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.create(t, "alice", "a", t0.Add(time.Hour))
			if tc.setup != nil {
				tc.setup(t, e, id)
			}
			st, m := e.do(t, tc.user, tc.method, RouteTask, id, tc.body, nil)
			if st != tc.status {
				t.Fatalf("status %d, want %d: %v", st, tc.status, m)
			}
		})
	}
}

func TestMalformedIDIs404(t *testing.T) {
	e := newEnv(t)
	for _, id := range []string{"", "x", "../../etc", strings.Repeat("Z", 26), "01JD0000000000000000000000'"} {
		if st, m := e.do(t, "alice", "GET", RouteTask, id, "", nil); st != 404 {
			t.Fatalf("id %q: %d %v", id, st, m)
		}
	}
}

func TestListPaginatesAndIsolatesUsers(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for i := 0; i < 5; i++ {
		e.clock.t = t0.Add(time.Duration(i) * time.Millisecond)
		ids = append(ids, e.create(t, "alice", "a", t0.Add(time.Hour)))
	}
	e.create(t, "bob", "b", t0.Add(time.Hour))
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("cursor never ends")
		}
		q := map[string]string{"limit": "2"}
		if cursor != "" {
			q["cursor"] = cursor
		}
		st, m := e.do(t, "alice", "GET", RouteTasks, "", "", q)
		if st != 200 {
			t.Fatalf("%d %v", st, m)
		}
		for _, x := range m["tasks"].([]any) {
			got = append(got, x.(map[string]any)["id"].(string))
		}
		c, _ := m["cursor"].(string)
		if c == "" {
			break
		}
		cursor = c
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Fatalf("listed %v, want %v", got, ids)
	}
	for _, tc := range []struct{ limit, cursor string }{{"0", ""}, {"101", ""}, {"x", ""}, {"10", "not-a-cursor!"}} {
		q := map[string]string{"limit": tc.limit}
		if tc.cursor != "" {
			q["cursor"] = tc.cursor
		}
		if st, m := e.do(t, "alice", "GET", RouteTasks, "", "", q); st != 400 {
			t.Fatalf("limit %q cursor %q: %d %v", tc.limit, tc.cursor, st, m)
		}
	}
}

// A cursor the API did not hand out to this caller for this list is a
// 400 naming cursor, never a page read from wherever it points.
func TestListRefusesCursorsItDidNotHandOut(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for i := 0; i < 3; i++ {
		e.clock.t = t0.Add(time.Duration(i) * time.Millisecond)
		ids = append(ids, e.create(t, "alice", "a", t0.Add(time.Hour)))
	}
	_, m := e.do(t, "alice", "GET", RouteTasks, "", "", map[string]string{"limit": "1"})
	good, _ := m["cursor"].(string)
	if good == "" || strings.Contains(good, ids[0]) {
		t.Fatalf("cursor %q: want an opaque one", good)
	}
	raw := base64.RawURLEncoding.EncodeToString([]byte(ids[0])) // the store's own position, bare
	mid := len(good) / 2
	other, _ := pagecursor.NewRandom().Seal(context.Background(), pagecursor.Scope{Route: RouteTasks, Owner: "alice"}, ids[0])
	for _, tc := range []struct{ name, user, cursor string }{
		{"a character changed", "alice", good[:mid] + map[bool]string{true: "B", false: "A"}[good[mid] == 'A'] + good[mid+1:]},
		{"cut short by four", "alice", good[:len(good)-4]},
		{"never issued: the store's bare position", "alice", raw},
		{"another user's", "bob", good},
		{"another API's", "alice", other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, m := e.do(t, tc.user, "GET", RouteTasks, "", "", map[string]string{"cursor": tc.cursor})
			if msg, _ := m["message"].(string); st != 400 || !strings.HasPrefix(msg, "cursor ") {
				t.Fatalf("%d %v, want a 400 naming cursor", st, m)
			}
		})
	}
	if st, m := e.do(t, "alice", "GET", RouteTasks, "", "", map[string]string{"cursor": good}); st != 200 || m["tasks"].([]any)[0].(map[string]any)["id"] != ids[1] {
		t.Fatalf("the issued cursor: %d %v", st, m)
	}
}

func TestCORSOrigin(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ origin, want string }{
		{"http://localhost:5173", "http://localhost:5173"},
		{"https://app.example.com", "https://app.example.com"},
		{"https://evil.example.net", "https://app.example.com"},
		{"", "https://app.example.com"},
	} {
		resp := e.h.Serve(context.Background(), Request{Method: "GET", Route: RouteTasks, UserID: "u", Origin: tc.origin})
		if got := resp.Headers["Access-Control-Allow-Origin"]; got != tc.want {
			t.Fatalf("origin %q: ACAO %q, want %q", tc.origin, got, tc.want)
		}
	}
}

func TestPatchFieldNamesAreCaseSensitive(t *testing.T) {
	for _, body := range []string{`{"Status":"done"}`, `{"TITLE":"x"}`, `{"title":"x","dueat":"2026-12-01T00:00:00Z"}`} {
		t.Run(body, func(t *testing.T) {
			e := newEnv(t)
			id := e.create(t, "alice", "a", t0.Add(time.Hour))
			st, m := e.do(t, "alice", "PATCH", RouteTask, id, body, nil)
			if msg, _ := m["message"].(string); st != 400 || !strings.Contains(msg, "unknown field") {
				t.Fatalf("%d %v, want 400 naming the unknown field", st, m)
			}
			if got, _ := e.store.Get(context.Background(), "alice", id); got.Status != task.StatusPending || got.Title != "a" {
				t.Fatalf("a refused patch changed the task: %+v", got)
			}
		})
	}
}

func TestNotPendingConflictNamesState(t *testing.T) {
	for _, tc := range []struct {
		name  string
		end   func(t *testing.T, e *env, id string)
		state string
	}{
		{"done", func(t *testing.T, e *env, id string) {
			e.do(t, "alice", "PATCH", RouteTask, id, `{"status":"done"}`, nil)
		}, "done"},
		{"expired", func(_ *testing.T, e *env, id string) {
			_, _ = e.store.Expire(context.Background(), "alice", id, t0.Add(time.Hour), t0.Add(time.Hour))
		}, "expired"},
	} {
		for _, body := range []string{`{"status":"done"}`, `{"title":"late"}`} {
			t.Run(tc.name+" "+body, func(t *testing.T) {
				e := newEnv(t)
				id := e.create(t, "alice", "a", t0.Add(time.Hour))
				tc.end(t, e, id)
				st, m := e.do(t, "alice", "PATCH", RouteTask, id, body, nil)
				msg, _ := m["message"].(string)
				if st != 409 || m["error"] != "not_pending" || !strings.Contains(msg, "the task is "+tc.state+", no longer pending") {
					t.Fatalf("%d %v, want 409 naming the state %q", st, m, tc.state)
				}
			})
		}
	}
}

func TestPendingCapPerUser(t *testing.T) {
	e := &env{store: memory.NewStore(), sched: inmem.NewScheduler(), clock: &fixedClock{t0}}
	svc, err := task.NewService(task.Deps{Store: e.store, Timer: e.sched, Clock: e.clock, MaxPendingPerUser: 3})
	if err != nil {
		t.Fatal(err)
	}
	e.h = New(svc, pagecursor.NewRandom(), []string{"https://app.example.com"}, nil)
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, e.create(t, "alice", "a", t0.Add(time.Hour)))
	}
	body := `{"title":"one too many","dueAt":"` + t0.Add(time.Hour).Format(time.RFC3339) + `"}`
	st, m := e.do(t, "alice", "POST", RouteTasks, "", body, nil)
	if msg, _ := m["message"].(string); st != 429 || m["error"] != "too_many_pending" || !strings.Contains(msg, "3 pending tasks") {
		t.Fatalf("%d %v, want 429 stating the limit of 3", st, m)
	}
	if n := len(e.store.All()); n != 3 || len(e.sched.All()) != 3 {
		t.Fatalf("a refused create left a task or schedule: %d tasks", n)
	}
	// Another user has their own cap.
	e.create(t, "bob", "b", t0.Add(time.Hour))
	// Completing, expiring or deleting a task frees a place; editing does not.
	for _, free := range []func(){
		func() { e.do(t, "alice", "PATCH", RouteTask, ids[0], `{"status":"done"}`, nil) },
		func() {
			_, _ = e.store.Expire(context.Background(), "alice", ids[1], t0.Add(time.Hour), t0.Add(time.Hour))
		},
		func() { e.do(t, "alice", "DELETE", RouteTask, ids[2], "", nil) },
	} {
		free()
		e.create(t, "alice", "a", t0.Add(time.Hour))
		if st, m := e.do(t, "alice", "POST", RouteTasks, "", body, nil); st != 429 {
			t.Fatalf("past the cap again: %d %v", st, m)
		}
	}
	if st, m := e.do(t, "alice", "PATCH", RouteTask, ids[0], `{"title":"renamed"}`, nil); st != 409 {
		t.Fatalf("%d %v", st, m)
	}
}
