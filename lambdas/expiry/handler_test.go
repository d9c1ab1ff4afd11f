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

	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/memory"
	"github.com/unschedule/unschedule/internal/metrics"
)

type clock struct{ t time.Time }

func (c clock) Now() time.Time { return c.t }

func TestHandle(t *testing.T) {
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	const id = "01JD00000000000000000000AA"
	pending := task.Task{UserID: "u1", TaskID: id, Title: "t", Status: task.StatusPending, DueAt: due, ScheduleToken: "tok"}
	// Expired by a concurrent firing that is publishing right now.
	claimed := pending
	claimed.Status, claimed.ExpiredAt, claimed.NotifyClaimAt = task.StatusExpired, due, due.Add(20*time.Second)
	payload := func(dueAt time.Time) json.RawMessage {
		return json.RawMessage(task.EncodePayload(task.Payload{Key: task.Key("u1", id), Due: dueAt}))
	}
	for _, tc := range []struct {
		name       string
		stored     *task.Task
		payload    json.RawMessage
		publishErr error
		wantErr    bool
		wantMetric string
		wantSent   int
		wantStatus task.Status
	}{
		{"expires and notifies", &pending, payload(due), nil, false, `"TasksExpired":1`, 1, task.StatusExpired},
		{"lag is recorded", &pending, payload(due), nil, false, `"NotificationLagSeconds":30`, 1, task.StatusExpired},
		{"stale deadline skipped", &pending, payload(due.Add(-time.Hour)), nil, false, `"ExpirySkipped":1`, 0, task.StatusPending},
		{"gone task skipped", nil, payload(due), nil, false, `"ExpirySkipped":1`, 0, ""},
		{"publish failure is retried", &pending, payload(due), errors.New("sns down"), true, `"ExpiryErrors":1`, 0, task.StatusExpired},
		{"another attempt is publishing: retry later", &claimed, payload(due), nil, true, `"ExpiryNotifyInProgress":1`, 0, task.StatusExpired},
		{"not our payload", &pending, json.RawMessage(`{"hello":1}`), nil, true, `"ExpiryBadInput":1`, 0, task.StatusPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.NewStore()
			if tc.stored != nil {
				store.Put(*tc.stored)
			}
			outbox := &memory.Outbox{Fail: func(task.Notification) error { return tc.publishErr }}
			svc, err := task.NewService(task.Deps{Store: store, Notifier: outbox, Clock: clock{due.Add(30 * time.Second)}})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			h := &handler{svc: svc, log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)), metrics: metrics.New(metrics.FunctionExpiry, &out)}
			err = h.Handle(context.Background(), tc.payload)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if !strings.Contains(out.String(), tc.wantMetric) {
				t.Fatalf("metrics %s lack %s", out.String(), tc.wantMetric)
			}
			if got := len(outbox.Sent()); got != tc.wantSent {
				t.Fatalf("sent %d, want %d", got, tc.wantSent)
			}
			if tc.stored != nil {
				got, _ := store.Get(context.Background(), "u1", id)
				if got.Status != tc.wantStatus {
					t.Fatalf("status %s, want %s", got.Status, tc.wantStatus)
				}
			}
		})
	}
}
