package cancel

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMessageIDs(t *testing.T) {
	long := strings.Repeat("e", 200)
	tests := []struct {
		name               string
		m                  Message
		wantGroup, wantDup string
		hashedDedup        bool
	}{
		{"plain", Message{TaskID: tid, EventID: "c5d1a2b3"}, tid, tid + "-c5d1a2b3", false},
		{"long event id is hashed", Message{TaskID: tid, EventID: long}, tid, "", true},
		{"non-ascii event id is hashed", Message{TaskID: tid, EventID: "é"}, tid, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if g := tt.m.GroupID(); g != tt.wantGroup {
				t.Errorf("GroupID = %q, want %q", g, tt.wantGroup)
			}
			d := tt.m.DedupID()
			if len(d) > MaxIDLen || d == "" {
				t.Fatalf("DedupID %q has length %d", d, len(d))
			}
			if tt.hashedDedup {
				if len(d) != 64 || strings.Contains(d, tt.m.EventID) {
					t.Errorf("DedupID = %q, want a 64-char hash", d)
				}
				if d != tt.m.DedupID() {
					t.Error("hashed DedupID is not deterministic")
				}
				return
			}
			if d != tt.wantDup {
				t.Errorf("DedupID = %q, want %q", d, tt.wantDup)
			}
		})
	}
}

func TestParse(t *testing.T) {
	good := Message{Action: ActionReschedule, UserID: user, TaskID: tid, DueAt: due, ScheduleToken: "TOK", EventID: "e"}
	tests := []struct {
		name    string
		body    string
		wantErr bool
	}{
		{"reschedule round trip", string(good.Encode()), false},
		{"cancel", `{"action":"cancel","userId":"u","taskId":"` + tid + `","eventId":"e"}`, false},
		{"not json", `{`, true},
		{"unknown action", `{"action":"explode","userId":"u","taskId":"` + tid + `"}`, true},
		{"bad task id", `{"action":"cancel","userId":"u","taskId":"nope"}`, true},
		{"no user", `{"action":"cancel","taskId":"` + tid + `"}`, true},
		{"reschedule without due", `{"action":"reschedule","userId":"u","taskId":"` + tid + `","scheduleToken":"T"}`, true},
		{"reschedule without token", `{"action":"reschedule","userId":"u","taskId":"` + tid + `","dueAt":"2030-01-01T00:00:00Z"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.body))
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v does not wrap ErrMalformed", err)
			}
			if tt.name == "reschedule round trip" && (m.ScheduleToken != "TOK" || !m.DueAt.Equal(due)) {
				t.Errorf("round trip lost fields: %+v", m)
			}
		})
	}
}

// The worker's schedule for a reschedule is the one the API creates for
// the same task and deadline: the ClientToken matches, so a create retried
// by either path is idempotent.
func TestMessageScheduleMatchesCreate(t *testing.T) {
	tk := *pending()
	tk.DueAt = due.Add(48 * time.Hour)
	m, ok := Decide(changeModify(pending(), &tk))
	if !ok {
		t.Fatal("deadline change not decided")
	}
	m, err := Parse(m.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Schedule(), scheduleFor(tk); got != want {
		t.Errorf("Schedule = %+v, want %+v", got, want)
	}
}
