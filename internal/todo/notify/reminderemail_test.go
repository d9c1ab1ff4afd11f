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

// The reminder path end to end, wired as the expiry function wires it:
// subject "Due in <offset>: <title>" in ASCII, the description, the
// deadline in the owner's zone and the link last.
func TestReminderEmail(t *testing.T) {
	ctx := context.Background()
	due := time.Date(2030, 3, 4, 15, 55, 0, 0, time.UTC)
	for _, tc := range []struct {
		reminder    task.Reminder
		wantSubject string
		wantIn      string
	}{
		{task.Reminder15m, "Due in 15 minutes: Kuchen fur Zoe backen", "is due in 15 minutes."},
		{task.Reminder1h, "Due in 1 hour: Kuchen fur Zoe backen", "is due in 1 hour."},
		{task.Reminder1d, "Due in 1 day: Kuchen fur Zoe backen", "is due in 1 day."},
	} {
		t.Run(string(tc.reminder), func(t *testing.T) {
			store, outbox, settings := memory.NewStore(), &memory.Outbox{}, memory.NewSettings()
			if _, err := settings.SaveSettings(ctx, notify.Settings{UserID: "u1", Enabled: true, TimeZone: "Europe/Berlin"}); err != nil {
				t.Fatal(err)
			}
			clock := &fixedClock{due.Add(-48 * time.Hour)}
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
			created, err := svc.Create(ctx, "u1", task.NewTask{Title: "Kuchen für Zoë backen", Description: "Bring the cake tin back.",
				DueAt: due, Reminder: tc.reminder})
			if err != nil {
				t.Fatal(err)
			}
			clock.t = created.RemindAt
			out, err := firer.Remind(ctx, task.RemindRequest{UserID: "u1", TaskID: created.TaskID, DueAt: due, RemindAt: created.RemindAt})
			if err != nil || out != task.Reminded {
				t.Fatalf("remind: %q, %v", out, err)
			}
			sent := outbox.Sent()
			if len(sent) != 1 {
				t.Fatalf("%d notifications", len(sent))
			}
			m := notify.FormatMessage(sent[0])
			if m.Subject != tc.wantSubject {
				t.Errorf("subject %q, want %q", m.Subject, tc.wantSubject)
			}
			for _, w := range []string{"\"Kuchen für Zoë backen\" " + tc.wantIn, "Bring the cake tin back.\n\nDue: Monday, 4 March 2030 at 16:55 CET (15:55 UTC)\n"} {
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
