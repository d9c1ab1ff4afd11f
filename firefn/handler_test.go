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
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

// TestHandle: the firing core on the fixture's table (timertest.Schema,
// with reminders) delivering to a target that counts what it delivered,
// as the firing function runs it: each outcome is its metric, and the
// item's state is the claim's.
func TestHandle(t *testing.T) {
	s := timertest.Schema
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	k := contract.Key{Partition: "u1", Sort: "01JD00000000000000000000AA"}
	// item is an item of the fixture's table: its state and due time, and
	// the other attributes as set.
	item := func(state string, dueAt time.Time, set map[string]time.Time) map[string]string {
		a := s.Attrs(k)
		a[s.StateAttr], a[s.DueAttr], a[s.TokenAttr] = state, contract.FormatTime(dueAt), "tok"
		for name, at := range set {
			a[name] = contract.FormatTime(at)
		}
		return a
	}
	pending := item("Pending", due, nil)
	// Fired by a concurrent firing that is delivering right now.
	claimed := item("Fired", due, map[string]time.Time{s.FiredAtAttr: due, s.ClaimAtAttr: due.Add(20 * time.Second)})
	payload := func(dueAt time.Time) json.RawMessage {
		return json.RawMessage(s.EncodePayload(contract.Payload{Key: k, Due: dueAt}))
	}
	// A reminder 15 minutes before a later due time (the clock reads due+30s).
	remDue := due.Add(15 * time.Minute)
	reminding := item("Pending", remDue, map[string]time.Time{s.RemindAttr: due})
	remPayload := func(dueAt, at time.Time) json.RawMessage {
		return json.RawMessage(s.EncodePayload(contract.Payload{Key: k, Due: dueAt, Remind: at}))
	}
	// Fired 29 s before their time (EventBridge Scheduler's minute).
	early := item("Pending", due.Add(59*time.Second), nil)
	earlyRem := item("Pending", remDue, map[string]time.Time{s.RemindAttr: due.Add(59 * time.Second)})
	var out bytes.Buffer
	for _, tc := range []struct {
		name       string
		stored     map[string]string
		payload    json.RawMessage
		deliverErr error
		wantErr    bool
		wantMetric string
		wantSent   int
		wantState  string
	}{
		{"fires and delivers", pending, payload(due), nil, false, `"ItemsFired":1`, 1, "Fired"},
		{"lag is recorded", pending, payload(due), nil, false, `"DeliveryLagSeconds":30`, 1, "Fired"},
		{"stale due time skipped", pending, payload(due.Add(-time.Hour)), nil, false, `"FireSkipped":1`, 0, "Pending"},
		{"gone item skipped", nil, payload(due), nil, false, `"FireSkipped":1`, 0, ""},
		{"a delivery failure is retried", pending, payload(due), errors.New("target down"), true, `"FireErrors":1`, 0, "Fired"},
		{"another attempt is delivering: retry later", claimed, payload(due), nil, true, `"FireInProgress":1`, 0, "Fired"},
		{"not our payload", pending, json.RawMessage(`{"hello":1}`), nil, true, `"FireBadInput":1`, 0, "Pending"},
		{"reminder payload reminds, the item stays armed", reminding, remPayload(remDue, due), nil, false, `"RemindersSent":1`, 1, "Pending"},
		{"stale reminder skipped", reminding, remPayload(remDue, due.Add(-time.Hour)), nil, false, `"RemindersSkipped":1`, 0, "Pending"},
		{"a reminder's delivery failure is retried", reminding, remPayload(remDue, due), errors.New("target down"), true, `"FireErrors":1`, 0, "Pending"},
		{"an early firing fails, so Lambda retries it", early, payload(due.Add(59 * time.Second)), nil, true, `"EarlyFirings":1`, 0, "Pending"},
		{"an early reminder fails, so Lambda retries it", earlyRem, remPayload(remDue, due.Add(59*time.Second)), nil, true, `"EarlyFirings":1`, 0, "Pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out.Reset()
			items := inmem.NewItems(s)
			if tc.stored != nil {
				if err := items.Put(tc.stored); err != nil {
					t.Fatal(err)
				}
			}
			now := func() time.Time { return due.Add(30 * time.Second) }
			core, err := fire.New(fire.Config{Schema: s, Store: items, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			sent := 0
			target := fire.DeliverFunc(func(context.Context, contract.Payload) error {
				if tc.deliverErr != nil {
					return tc.deliverErr
				}
				sent++
				return nil
			})
			h := &handler{firer: targetFirer{core: core, reminders: items, target: target}, now: now,
				log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)), metrics: metrics.New(metrics.FunctionExpiry, &out)}
			err = h.Handle(context.Background(), tc.payload)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if !strings.Contains(out.String(), tc.wantMetric) {
				t.Fatalf("metrics %s lack %s", out.String(), tc.wantMetric)
			}
			if sent != tc.wantSent {
				t.Fatalf("delivered %d, want %d", sent, tc.wantSent)
			}
			if tc.stored != nil {
				got, _ := items.Attrs(k)
				if got[s.StateAttr] != tc.wantState {
					t.Fatalf("state %s, want %s", got[s.StateAttr], tc.wantState)
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
	fixture := map[string]string{"TABLE_NAME": "items", envvars.TargetFunctionArn: "arn:target",
		contract.EnvVar: timertest.Schema.EnvValue()}
	target := map[string]string{"TABLE_NAME": "jobs", contract.EnvVar: consumer.EnvValue(), envvars.TargetFunctionArn: "arn:fn"}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    settings
		wantErr string
	}{
		{"the fixture's schema: its target function", fixture,
			settings{Table: "items", Schema: timertest.Schema, Target: "arn:target", Lease: fire.DefaultLease}, ""},
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
