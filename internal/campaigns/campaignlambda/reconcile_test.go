package campaignlambda

import (
	"context"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

func TestReconcileHandler(t *testing.T) {
	now := time.Now()
	st, clock, tasks := world(t, "c1", 1, now)
	_ = st.SetStatus(context.Background(), "c1", []campaign.Status{campaign.Draft}, campaign.Active, "", now)
	claimed, err := st.Claim(context.Background(), tasks[0].Key(), tasks[0].SendAt, tasks[0].SendAt, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	clock.Set(claimed.LeaseUntil.Add(time.Minute)) // the attempt died: stale
	m := rec{}
	h := &Reconcile{Metrics: m, Log: quiet, Ports: campaign.ReconcilePorts{Tasks: st, Campaigns: st,
		Timer: inmem.NewScheduler(), Sender: memory.NewCampaignSender(clock), Owners: memory.NewCampaignSenders("u1"), Dispatcher: nopDispatch{}, Clock: clock}}
	if err := h.Handle(context.Background()); err == nil {
		t.Fatal("no error without a deadline")
	}
	ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(10*time.Minute))
	defer cancel()
	if err := h.Handle(ctx); err == nil {
		t.Fatal("no error without a checkpoint store")
	}
	h.Ports.Checkpoints = &inmem.Checkpoints{}
	m[campaignmetrics.CampaignReconcilerErrors] = 0
	if err := h.Handle(ctx); err != nil || m[campaignmetrics.CampaignReconcileRecovered] != 1 || m[campaignmetrics.CampaignReconcilerErrors] != 0 {
		t.Fatalf("%v, metrics %v", err, m)
	}
}
