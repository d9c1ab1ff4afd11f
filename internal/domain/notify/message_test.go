package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/domain/task"
)

func TestFormatMessage(t *testing.T) {
	due := time.Date(2030, 3, 4, 17, 5, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		n           task.Notification
		wantSubject string
		wantBody    []string
		notInBody   []string
		// wantLast is the body's last line.
		wantLast string
	}{
		{
			name:        "plain",
			n:           task.Notification{UserID: "u", TaskID: "t", Title: "Pay rent", DueAt: due, Link: "https://app.example.com/#/tasks/t"},
			wantSubject: "Task expired: Pay rent",
			wantBody: []string{`"Pay rent"`, "2030-03-04T17:05:00Z", "Monday, 4 March 2030 at 17:05 UTC",
				"https://app.example.com/#/tasks/t"},
			wantLast: "Open the task: https://app.example.com/#/tasks/t",
		},
		{
			name:        "deadline in another zone is shown in UTC",
			n:           task.Notification{Title: "Call", DueAt: due.In(time.FixedZone("X", 3600))},
			wantSubject: "Task expired: Call",
			wantBody:    []string{"2030-03-04T17:05:00Z", "17:05 UTC"},
			notInBody:   []string{"Open the task", "#/tasks/"},
			wantLast:    "You receive this because you signed up for task reminders with this address.",
		},
		{
			name:        "non-ASCII title: subject made safe, body kept",
			n:           task.Notification{Title: "Café\tnaïve", DueAt: due},
			wantSubject: "Task expired: Caf??na?ve",
			wantBody:    []string{"Café\tnaïve"},
		},
		{
			name:        "long title is cut",
			n:           task.Notification{Title: strings.Repeat("a", 200), DueAt: due},
			wantSubject: "Task expired: " + strings.Repeat("a", MaxSubjectLen-3-len("Task expired: ")) + "...",
			wantBody:    []string{strings.Repeat("a", 200)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := FormatMessage(tc.n)
			if m.Subject != tc.wantSubject {
				t.Fatalf("subject %q, want %q", m.Subject, tc.wantSubject)
			}
			if len(m.Subject) >= 100 {
				t.Fatalf("subject is %d bytes; SNS takes fewer than 100", len(m.Subject))
			}
			for _, w := range tc.wantBody {
				if !strings.Contains(m.Body, w) {
					t.Errorf("body lacks %q:\n%s", w, m.Body)
				}
			}
			if lines := strings.Split(strings.TrimRight(m.Body, "\n"), "\n"); tc.wantLast != "" && lines[len(lines)-1] != tc.wantLast {
				t.Errorf("last line %q, want %q:\n%s", lines[len(lines)-1], tc.wantLast, m.Body)
			}
			for _, w := range tc.notInBody {
				if strings.Contains(m.Body, w) {
					t.Errorf("body has %q:\n%s", w, m.Body)
				}
			}
		})
	}
}
