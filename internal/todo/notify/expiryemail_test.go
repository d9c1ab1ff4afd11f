package notify_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

// The expiry path end to end, wired as the expiry function wires it
// (notify.InUserTimeZone over the notifier): the email carries the task's
// description after its title and shows the deadline in the owner's zone.
func TestExpiryEmail(t *testing.T) {
	ctx := context.Background()
	due := time.Date(2030, 3, 4, 15, 55, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, zone, description string
		want                    []string
		wantSubject             string
	}{
		{"zone and description", "Europe/Berlin", "Bring the cake tin back.",
			[]string{"\"Kuchen für Zoë backen\" reached its deadline", "expired.\n\nBring the cake tin back.\n\nDue: Monday, 4 March 2030 at 16:55 CET (15:55 UTC)\n"},
			"Task expired: Kuchen fur Zoe backen"},
		{"no zone, no description", "", "",
			[]string{"expired.\n\nDue: Monday, 4 March 2030 at 15:55 UTC\n"}, "Task expired: Kuchen fur Zoe backen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, outbox, settings := memory.NewStore(), &memory.Outbox{}, memory.NewSettings()
			if tc.zone != "" {
				if _, err := settings.SaveSettings(ctx, notify.Settings{UserID: "u1", Enabled: true, TimeZone: tc.zone}); err != nil {
					t.Fatal(err)
				}
			}
			clock := &fixedClock{due.Add(-time.Hour)}
			svc, err := task.NewService(task.Deps{Store: store, Timer: inmem.NewScheduler(), Clock: clock,
				Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			firer, err := task.InProcess(task.InProcessConfig{Store: store, Clock: clock,
				Notifier: notify.InUserTimeZone(outbox, settings, slog.New(slog.DiscardHandler)), WebURL: "https://app.example.com",
				Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			created, err := svc.Create(ctx, "u1", task.NewTask{Title: "Kuchen für Zoë backen", Description: tc.description, DueAt: due})
			if err != nil {
				t.Fatal(err)
			}
			clock.t = due.Add(time.Second)
			if out, err := firer.Expire(ctx, task.ExpireRequest{UserID: "u1", TaskID: created.TaskID, DueAt: due}); err != nil || out != task.Expired {
				t.Fatalf("expire: %q, %v", out, err)
			}
			sent := outbox.Sent()
			if len(sent) != 1 {
				t.Fatalf("%d notifications", len(sent))
			}
			m := notify.FormatMessage(sent[0])
			if m.Subject != tc.wantSubject {
				t.Errorf("subject %q, want %q", m.Subject, tc.wantSubject)
			}
			for _, w := range tc.want {
				if !strings.Contains(m.Body, w) {
					t.Errorf("body lacks %q:\n%s", w, m.Body)
				}
			}
			if !strings.HasSuffix(m.Body, "Open the task: https://app.example.com/#/tasks/"+created.TaskID+"\n") {
				t.Errorf("the link is not last:\n%s", m.Body)
			}
		})
	}
}
