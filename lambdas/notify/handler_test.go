package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestHandle: the payload the expiry function sends to any target (as
// internal/core/adapters/awslambda encodes it) becomes the to-do app's
// notification, with the text the owner has always received.
func TestHandle(t *testing.T) {
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	remAt := due.Add(-15 * time.Minute)
	const id = "01JD00000000000000000000AA"
	expired := task.Task{UserID: "u1", TaskID: id, Title: "Renew passport", Status: task.StatusExpired, DueAt: due,
		ExpiredAt: due, NotifyClaimAt: due, Reminder: task.Reminder15m, RemindAt: remAt}
	pending := expired
	pending.Status, pending.ExpiredAt, pending.NotifyClaimAt = task.StatusPending, time.Time{}, time.Time{}
	done := pending
	done.Status = task.StatusDone
	schema := tableschema.Todo()
	payload := func(p contract.Payload) json.RawMessage { return json.RawMessage(schema.EncodePayload(p)) }
	expiry := payload(contract.Payload{Key: task.Key("u1", id), Due: due})
	reminder := payload(contract.Payload{Key: task.Key("u1", id), Due: due, Remind: remAt})
	errSNS := errors.New("sns down")
	for _, tc := range []struct {
		name       string
		stored     *task.Task
		payload    json.RawMessage
		publishErr error
		wantErr    bool
		// wantSubject is the one message's subject ("": none sent).
		wantSubject string
		wantLog     string
	}{
		{"expired: one expiry message with title and link", &expired, expiry, nil, false, "Task expired: Renew passport", `"outcome":"notified"`},
		{"reminder: the reminder message", &pending, reminder, nil, false, "Due in 15 minutes: Renew passport", `"reminder":true`},
		{"task gone meanwhile: nothing sent, success", nil, expiry, nil, false, "", `"outcome":"gone"`},
		{"reminder's task completed meanwhile: nothing sent, success", &done, reminder, nil, false, "", `"outcome":"stale"`},
		{"SNS error: the invocation fails, so the firing is retried", &expired, expiry, errSNS, true, "", "sns down"},
		{"reminder SNS error fails too", &pending, reminder, errSNS, true, "", "sns down"},
		{"not a schedule payload", &expired, json.RawMessage(`{"hello":1}`), nil, true, "", "not a schedule payload"},
		{"payload without a task id", &expired, payload(contract.Payload{Key: task.Key("u1", "x"), Due: due}), nil, true, "", "task id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.NewStore()
			if tc.stored != nil {
				store.Put(*tc.stored)
			}
			outbox := &memory.Outbox{Fail: func(task.Notification) error { return tc.publishErr }}
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			target, err := task.NewNotifyTarget(task.NotifyConfig{Tasks: store, Notifier: outbox, WebURL: "https://todo.example", Log: log})
			if err != nil {
				t.Fatal(err)
			}
			h := &handler{schema: schema, target: target, log: log}
			err = h.Handle(context.Background(), tc.payload)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tc.wantErr)
			}
			sent := outbox.Sent()
			switch {
			case tc.wantSubject == "" && len(sent) != 0:
				t.Fatalf("sent %+v, want nothing", sent)
			case tc.wantSubject != "":
				if len(sent) != 1 {
					t.Fatalf("sent %d messages, want 1", len(sent))
				}
				m := notify.FormatMessage(sent[0])
				if m.Subject != tc.wantSubject || !strings.Contains(m.Body, "Open the task: https://todo.example/#/tasks/"+id) {
					t.Errorf("message %+v, want subject %q and the task's link", m, tc.wantSubject)
				}
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("log %s lacks %s", logs.String(), tc.wantLog)
			}
		})
	}
}
