package devserver

import (
	"testing"
	"time"
)

// TestReminderEmail: make dev sends the reminder into the outbox before
// the deadline (kind task-reminder), once, and none for a task completed
// before it; the schedule listing shows the reminder schedule.
func TestReminderEmail(t *testing.T) {
	for _, tc := range []struct {
		name     string
		complete bool
		want     int
	}{
		{"pending: one reminder 15 minutes before", false, 1},
		{"completed before: none", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tok := e.user("ada@example.com")
			due := e.clock.Now().Add(20 * time.Minute).Truncate(time.Second)
			r := e.do("POST", "/tasks", tok, map[string]string{"title": "water the plants",
				"dueAt": due.Format(time.RFC3339), "reminder": "15m"})
			if r.status != 201 || r.body["remindAt"] != due.Add(-15*time.Minute).Format(time.RFC3339) {
				t.Fatalf("create: %d %s", r.status, r.raw)
			}
			id := r.body["id"].(string)
			found := false
			for _, sc := range e.schedules(tok) {
				found = found || sc.Name == "remind-"+id && sc.RemindAt == due.Add(-15*time.Minute).Format(time.RFC3339)
			}
			if !found {
				t.Fatalf("no reminder schedule listed: %+v", e.schedules(tok))
			}
			if tc.complete {
				if r := e.do("PATCH", "/tasks/"+id, tok, map[string]string{"status": "done"}); r.status != 200 {
					t.Fatalf("complete: %d %s", r.status, r.raw)
				}
			}
			e.tick(time.Second)
			e.tick(5*time.Minute + time.Second)
			e.tick(time.Minute)
			emails := e.emails(tok, KindTaskReminder, id)
			if len(emails) != tc.want {
				t.Fatalf("%d reminder emails %+v, want %d", len(emails), emails, tc.want)
			}
			if tc.want == 1 && (emails[0].Subject != "Due in 15 minutes: water the plants" || emails[0].To[0] != "ada@example.com") {
				t.Fatalf("email %+v", emails[0])
			}
			if n := len(e.emails(tok, KindTaskExpired, id)); n != 0 {
				t.Fatalf("%d expiry emails before the deadline", n)
			}
		})
	}
}
