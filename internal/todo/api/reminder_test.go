package api

import (
	"net/http"
	"testing"
	"time"
)

// TestReminderJSON pins the reminder API contract: "reminder" is none,
// 15m, 1h or 1d (default 1h), "remindAt" is dueAt minus it, absent for
// none; a bad value is a 400 validation_error; PATCH changes it, and a
// deadline change moves remindAt.
func TestReminderJSON(t *testing.T) {
	e := newEnv(t)
	due := t0.Add(3 * time.Hour)
	dueS := due.Format(time.RFC3339)
	st, m := e.do(t, "alice", "POST", RouteTasks, "", `{"title":"a","dueAt":"`+dueS+`"}`, nil)
	if st != http.StatusCreated || m["reminder"] != "1h" || m["remindAt"] != due.Add(-time.Hour).Format(time.RFC3339) {
		t.Fatalf("default: %d %v", st, m)
	}
	id := m["id"].(string)
	st, m = e.do(t, "alice", "POST", RouteTasks, "", `{"title":"b","dueAt":"`+dueS+`","reminder":"none"}`, nil)
	if _, has := m["remindAt"]; st != http.StatusCreated || m["reminder"] != "none" || has {
		t.Fatalf("none: %d %v", st, m)
	}
	st, m = e.do(t, "alice", "POST", RouteTasks, "", `{"title":"c","dueAt":"`+dueS+`","reminder":"x"}`, nil)
	if st != http.StatusBadRequest || m["error"] != "validation_error" ||
		m["message"] != `reminder must be one of none, 15m, 1h, 1d (given "x")` {
		t.Fatalf("bad value: %d %v", st, m)
	}
	st, m = e.do(t, "alice", "PATCH", RouteTask, id, `{"reminder":"15m"}`, nil)
	if st != http.StatusOK || m["reminder"] != "15m" || m["remindAt"] != due.Add(-15*time.Minute).Format(time.RFC3339) {
		t.Fatalf("patch reminder: %d %v", st, m)
	}
	later := due.Add(time.Hour)
	st, m = e.do(t, "alice", "PATCH", RouteTask, id, `{"dueAt":"`+later.Format(time.RFC3339)+`"}`, nil)
	if st != http.StatusOK || m["reminder"] != "15m" || m["remindAt"] != later.Add(-15*time.Minute).Format(time.RFC3339) {
		t.Fatalf("patch deadline: %d %v", st, m)
	}
	st, m = e.do(t, "alice", "PATCH", RouteTask, id, `{"reminder":"2d"}`, nil)
	if st != http.StatusBadRequest || m["message"] != `reminder must be one of none, 15m, 1h, 1d (given "2d")` {
		t.Fatalf("patch bad value: %d %v", st, m)
	}
	st, m = e.do(t, "alice", "GET", RouteTask, id, "", nil)
	if st != http.StatusOK || m["reminder"] != "15m" {
		t.Fatalf("get: %d %v", st, m)
	}
}
