package cancel

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/changefeed"
)

func TestMessageIDs(t *testing.T) {
	long := strings.Repeat("e", 200)
	tests := []struct {
		name               string
		m                  Message
		wantGroup, wantDup string
		hashedDedup        bool
	}{
		{"plain", Message{Partition: user, Sort: tid, EventID: "c5d1a2b3"}, user + "/" + tid, user + "/" + tid + "-c5d1a2b3", false},
		{"no sort key", Message{Partition: "job-7", EventID: "e"}, "job-7", "job-7-e", false},
		{"long event id is hashed", Message{Partition: user, Sort: tid, EventID: long}, user + "/" + tid, "", true},
		{"non-ascii event id is hashed", Message{Partition: user, Sort: tid, EventID: "é"}, user + "/" + tid, "", true},
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
	good := Message{Action: ActionReschedule, Partition: user, Sort: tid, DueAt: due, Token: "TOK", EventID: "e"}
	tests := []struct {
		name    string
		body    string
		wantErr bool
	}{
		{"reschedule round trip", string(good.Encode()), false},
		{"cancel", `{"action":"cancel","pk":"u","sk":"` + tid + `","eventId":"e"}`, false},
		{"schedule without a token", `{"action":"schedule","pk":"u","sk":"j","dueAt":"2030-01-01T00:00:00Z"}`, false},
		{"the format before the generic key", `{"action":"reschedule","userId":"u","taskId":"` + tid + `","dueAt":"2030-01-01T00:00:00Z","scheduleToken":"TOK","eventId":"e"}`, false},
		{"not json", `{`, true},
		{"unknown action", `{"action":"explode","pk":"u","sk":"` + tid + `"}`, true},
		{"no key", `{"action":"cancel","eventId":"e"}`, true},
		{"reschedule without due", `{"action":"reschedule","pk":"u","sk":"` + tid + `","token":"T"}`, true},
		{"schedule without due", `{"action":"schedule","pk":"u","sk":"` + tid + `"}`, true},
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
			if tt.name == "reschedule round trip" && (m.Token != "TOK" || !m.DueAt.Equal(due)) {
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
	tk.Due = due.Add(48 * time.Hour)
	m, ok := Decide(schema, change(changefeed.Modify, pending(), &tk))
	if !ok {
		t.Fatal("deadline change not decided")
	}
	m, err := Parse(m.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Schedule(schema), schema.ScheduleFor(tk); got != want {
		t.Errorf("Schedule = %+v, want %+v", got, want)
	}
}
