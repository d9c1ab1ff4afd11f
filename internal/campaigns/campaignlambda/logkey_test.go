package campaignlambda

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/logfield/logfieldtest"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestOutcomeLinesCarryTheKey: each campaign function's outcome line names
// its item in logfield.Key as unschedule why --logs queries it: a send
// task by its table key (never the recipient's address), a campaign by
// its own item's key.
func TestOutcomeLinesCarryTheKey(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name, msg, key string
		run            func(t *testing.T, log *slog.Logger)
	}{
		{"a send (the older event)", "send handled", "C#c1/T#c1-00000", func(t *testing.T, log *slog.Logger) {
			h, _ := sendWorld(t, now, log)
			if _, err := h.Invoke(context.Background(), []byte(`{"campaignId":"c1","taskId":"c1-00000"}`)); err != nil {
				t.Fatal(err)
			}
		}},
		{"a send (a core timer's payload)", "send handled", "C#c1/T#c1-00001", func(t *testing.T, log *slog.Logger) {
			h, tasks := sendWorld(t, now, log)
			if _, err := h.Invoke(context.Background(), []byte(campaign.TaskSchema.EncodePayload(tasks[1].Payload()))); err != nil {
				t.Fatal(err)
			}
		}},
		{"a provisioning run", "provision run done", "C#c1/META", func(t *testing.T, log *slog.Logger) {
			provisionRun(t, now, "c1", log)
		}},
		{"a failed provisioning run", "provision run failed", "C#gone/META", func(t *testing.T, log *slog.Logger) {
			provisionRun(t, now, "gone", log)
		}},
		{"the reconciler's repair of a stale send", "policy decided", "C#c1/T#c1-00000", func(t *testing.T, log *slog.Logger) {
			st, clock, tasks := world(t, "c1", 1, now)
			_ = st.SetStatus(context.Background(), "c1", []campaign.Status{campaign.Draft}, campaign.Active, "", now)
			claimed, err := st.Claim(context.Background(), tasks[0].Key(), tasks[0].SendAt, tasks[0].SendAt, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			clock.Set(claimed.LeaseUntil.Add(time.Minute)) // the attempt died: stale
			h := &Reconcile{Metrics: rec{}, Log: log, Ports: campaign.ReconcilePorts{Tasks: st, Campaigns: st, Timer: inmem.NewScheduler(),
				Sender: memory.NewCampaignSender(clock), Owners: memory.NewCampaignSenders("u1"), Dispatcher: nopDispatch{}, Clock: clock,
				Checkpoints: &inmem.Checkpoints{}}}
			ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(10*time.Minute))
			defer cancel()
			if err := h.Handle(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"a failed progress announce", "announce failed; the stream retries from its first record", "C#c2/META", func(t *testing.T, log *slog.Logger) {
			st := memory.NewCampaignStore()
			for _, c := range []campaign.Campaign{{ID: "c1", OwnerID: "u1", Status: campaign.Active, Total: 2},
				{ID: "c2", OwnerID: "u2", Status: campaign.Active, Total: 1}, {ID: "c3", OwnerID: "u3", Status: campaign.Active, Total: 2}} {
				st.PutCampaign(c)
			}
			f := &failing{CampaignStore: st, refuse: map[string]bool{"/campaigns/u2/c2": true}}
			h := &Progress{Store: f, Publisher: f, Task: campaigntable.StreamSendTask, Metrics: rec{},
				Clock: clock.NewFake(time.Date(2026, 12, 1, 9, 0, 2, 0, time.UTC)), Log: log}
			if _, err := h.Handle(context.Background(), progressEvent(t)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, c := logfieldtest.New()
			tt.run(t, log)
			c.RequireKey(t, tt.msg, tt.key)
			for _, l := range c.Lines(t) {
				for k, v := range l {
					if s, ok := v.(string); ok && strings.Contains(s, "@example.com") {
						t.Errorf("%q logs a recipient's address in %s: %s", l["msg"], k, s)
					}
				}
			}
		})
	}
}

// sendWorld is the send handler of campaign c1 (4 tasks, Active) at the
// last task's send time, logging to log.
func sendWorld(t *testing.T, now time.Time, log *slog.Logger) (*Send, []campaign.SendTask) {
	t.Helper()
	st, clock, tasks := world(t, "c1", 4, now)
	clock.Set(tasks[3].SendAt)
	if err := st.SetStatus(context.Background(), "c1", []campaign.Status{campaign.Draft}, campaign.Active, "", now); err != nil {
		t.Fatal(err)
	}
	w, err := send.New(st, st, memory.NewCampaignSender(clock), memory.NewCampaignSenders("u1"), clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &Send{Worker: w, Metrics: rec{}, Log: log}, tasks
}

// provisionRun provisions campaign id of a world holding c1 only.
func provisionRun(t *testing.T, now time.Time, id string, log *slog.Logger) {
	t.Helper()
	st, clock, _ := world(t, "c1", 2, now)
	p, err := provision.New(provision.Config{Seed: 1}, st, st, memory.NewCampaignSenders("u1"), inmem.NewRemote(inmem.NewScheduler(), nil),
		memory.NewCampaignCheckpoints(), clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(time.Hour))
	defer cancel()
	_ = (&Provision{Provisioner: p, Self: &starts{}, Metrics: rec{}, Log: log}).Handle(ctx, ProvisionEvent{CampaignID: id})
}
