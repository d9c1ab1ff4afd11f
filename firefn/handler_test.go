package firefn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/fire/firetest"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// todoApp is the to-do app as the firing function runs it: the firing
// core over the task table, delivering to the to-do app's target
// (task.NotifyTarget, which the notify function runs in AWS).
func todoApp(t *testing.T, store *memory.Store, n task.Notifier, now func() time.Time) targetFirer {
	t.Helper()
	core, err := fire.New(fire.Config{Schema: tableschema.Todo(), Store: task.Items(store), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	target, err := task.NewNotifyTarget(task.NotifyConfig{Tasks: store, Notifier: n, Now: now, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return targetFirer{core: core, reminders: task.Items(store), target: target}
}

// TestHandle: the to-do app, plugged in as a target.
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
	// A reminder 15 minutes before a later deadline (the clock reads due+30s).
	remDue := due.Add(15 * time.Minute)
	reminding := pending
	reminding.DueAt, reminding.Reminder, reminding.RemindAt = remDue, task.Reminder15m, due
	remPayload := func(dueAt, at time.Time) json.RawMessage {
		return json.RawMessage(task.EncodePayload(task.Payload{Key: task.Key("u1", id), Due: dueAt, Remind: at}))
	}
	// Fired 29 s before their time (EventBridge Scheduler's minute).
	early := pending
	early.DueAt = due.Add(59 * time.Second)
	earlyRem := reminding
	earlyRem.RemindAt = due.Add(59 * time.Second)
	var out bytes.Buffer
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
		{"expires and notifies", &pending, payload(due), nil, false, `"ItemsFired":1`, 1, task.StatusExpired},
		{"lag is recorded", &pending, payload(due), nil, false, `"DeliveryLagSeconds":30`, 1, task.StatusExpired},
		{"stale deadline skipped", &pending, payload(due.Add(-time.Hour)), nil, false, `"FireSkipped":1`, 0, task.StatusPending},
		{"gone task skipped", nil, payload(due), nil, false, `"FireSkipped":1`, 0, ""},
		{"publish failure is retried", &pending, payload(due), errors.New("sns down"), true, `"FireErrors":1`, 0, task.StatusExpired},
		{"another attempt is publishing: retry later", &claimed, payload(due), nil, true, `"FireInProgress":1`, 0, task.StatusExpired},
		{"not our payload", &pending, json.RawMessage(`{"hello":1}`), nil, true, `"FireBadInput":1`, 0, task.StatusPending},
		{"reminder payload reminds, task stays pending", &reminding, remPayload(remDue, due), nil, false, `"RemindersSent":1`, 1, task.StatusPending},
		{"stale reminder skipped", &reminding, remPayload(remDue, due.Add(-time.Hour)), nil, false, `"RemindersSkipped":1`, 0, task.StatusPending},
		{"reminder publish failure is retried", &reminding, remPayload(remDue, due), errors.New("sns down"), true, `"FireErrors":1`, 0, task.StatusPending},
		{"an early firing fails, so Lambda retries it", &early, payload(early.DueAt), nil, true, `"EarlyFirings":1`, 0, task.StatusPending},
		{"an early reminder fails, so Lambda retries it", &earlyRem, remPayload(remDue, earlyRem.RemindAt), nil, true, `"EarlyFirings":1`, 0, task.StatusPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out.Reset()
			store := memory.NewStore()
			if tc.stored != nil {
				store.Put(*tc.stored)
			}
			outbox := &memory.Outbox{Fail: func(task.Notification) error { return tc.publishErr }}
			now := func() time.Time { return due.Add(30 * time.Second) }
			h := &handler{firer: todoApp(t, store, outbox, now), now: now, log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)),
				metrics: metrics.New(metrics.FunctionExpiry, &out)}
			err := h.Handle(context.Background(), tc.payload)
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

// With a target function, the item is claimed first and the target runs
// only after a successful claim, once; a failed target is retried, and
// its delivery is not recorded.
func TestHandleTarget(t *testing.T) {
	s := firetest.ConsumerSchema()
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	k := contract.Key{Partition: "t1", Sort: "j1"}
	item := func(state string) map[string]string {
		a := s.Attrs(k)
		a[s.StateAttr], a[s.DueAttr] = state, contract.FormatTime(due)
		return a
	}
	payload := json.RawMessage(s.EncodePayload(contract.Payload{Key: k, Due: due}))
	boom := errors.New("target failed")
	for _, tc := range []struct {
		name       string
		stored     map[string]string
		payload    json.RawMessage
		targetErr  error
		wantErr    bool
		wantMetric string
		wantCalls  int
		wantState  string
		delivered  bool
	}{
		{"claims, then runs the target", item("Queued"), payload, nil, false, `"ItemsFired":1`, 1, "Done", true},
		{"not armed: the target never runs", item("Cancelled"), payload, nil, false, `"FireSkipped":1`, 0, "Cancelled", false},
		{"moved due time: skipped", item("Queued"), json.RawMessage(s.EncodePayload(contract.Payload{Key: k, Due: due.Add(-time.Hour)})),
			nil, false, `"FireSkipped":1`, 0, "Queued", false},
		{"a failed target is retried, not recorded", item("Queued"), payload, boom, true, `"FireErrors":1`, 1, "Done", false},
		{"not our payload", item("Queued"), json.RawMessage(`{"userId":"u"}`), nil, true, `"FireBadInput":1`, 0, "Queued", false},
		{"an early firing: the target does not run, Lambda retries it", item("Queued"),
			json.RawMessage(s.EncodePayload(contract.Payload{Key: k, Due: due.Add(59 * time.Second)})), nil, true, `"EarlyFirings":1`, 0, "Queued", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := inmem.NewItems(s)
			if err := items.Put(tc.stored); err != nil {
				t.Fatal(err)
			}
			now := func() time.Time { return due.Add(30 * time.Second) }
			core, err := fire.New(fire.Config{Schema: s, Store: items, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			var calls []contract.Payload
			target := fire.DeliverFunc(func(_ context.Context, p contract.Payload) error {
				calls = append(calls, p)
				return tc.targetErr
			})
			var out bytes.Buffer
			h := &handler{firer: targetFirer{core: core, target: target}, now: now, log: slog.New(slog.DiscardHandler),
				metrics: metrics.New(metrics.FunctionExpiry, &out)}
			err = h.Handle(context.Background(), tc.payload)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if !strings.Contains(out.String(), tc.wantMetric) {
				t.Fatalf("metrics %s lack %s", out.String(), tc.wantMetric)
			}
			if len(calls) != tc.wantCalls || (tc.wantCalls == 1 && (calls[0].Key != k || !calls[0].Due.Equal(due))) {
				t.Fatalf("target calls %+v, want %d with the key and due time", calls, tc.wantCalls)
			}
			got, _ := items.Attrs(k)
			if got[s.StateAttr] != tc.wantState || (got[s.DeliveredAtAttr] != "") != tc.delivered {
				t.Fatalf("item %v: want state %s, delivered %v", got, tc.wantState, tc.delivered)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	consumer := firetest.ConsumerSchema()
	todo := map[string]string{"TABLE_NAME": "tasks", envvars.TargetFunctionArn: "arn:notify",
		contract.EnvVar: tableschema.Todo().EnvValue()}
	target := map[string]string{"TABLE_NAME": "jobs", contract.EnvVar: consumer.EnvValue(), envvars.TargetFunctionArn: "arn:fn"}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    settings
		wantErr string
	}{
		{"to-do app: its notify function", todo,
			settings{Table: "tasks", Schema: tableschema.Todo(), Target: "arn:notify", Lease: fire.DefaultLease}, ""},
		{"adopter's target", target, settings{Table: "jobs", Schema: consumer, Target: "arn:fn", Lease: fire.DefaultLease}, ""},
		{"lease above a long target's timeout", withEnv(target, envvars.FireLeaseSeconds, "930"),
			settings{Table: "jobs", Schema: consumer, Target: "arn:fn", Lease: 930 * time.Second}, ""},
		{"lease out of range", withEnv(target, envvars.FireLeaseSeconds, "0"), settings{}, envvars.FireLeaseSeconds},
		{"no table", map[string]string{envvars.TargetFunctionArn: "arn:fn"}, settings{}, "TABLE_NAME"},
		{"no target", map[string]string{"TABLE_NAME": "t", contract.EnvVar: consumer.EnvValue()}, settings{}, envvars.TargetFunctionArn + " is not set"},
		{"bad schema", map[string]string{"TABLE_NAME": "t", envvars.TargetFunctionArn: "f", contract.EnvVar: "{"}, settings{}, contract.EnvVar},
		{"no schema", map[string]string{"TABLE_NAME": "t", envvars.TargetFunctionArn: "f"}, settings{}, contract.EnvVar + " is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadConfig(func(k string) string { return tc.env[k] }, false)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("loadConfig = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// withEnv is env with k set to v (env itself is left as it is).
func withEnv(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for n, x := range env {
		if n != k {
			out[n] = x
		}
	}
	return out
}
