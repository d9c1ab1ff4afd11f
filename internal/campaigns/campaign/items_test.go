package campaign_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestItemsIsTheReconcilersView: the open tasks are listed (Pending as
// armed, Running as claimed and undelivered), terminal ones never; DueBy
// keeps the overdue ones; Get maps a missing task to ErrItemNotFound.
func TestItemsIsTheReconcilersView(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 7, 0, 0, 0, time.UTC)
	st := memory.NewCampaignStore()
	for i, c := range []struct {
		state campaign.State
		at    time.Time
	}{{campaign.Pending, t0}, {campaign.Running, t0}, {campaign.Finished, t0}, {campaign.Pending, t0.Add(time.Hour)}} {
		st.PutTasks(campaign.SendTask{CampaignID: "c1", ID: campaign.TaskID("c1", i), Index: i, State: c.state, SendAt: c.at, ClaimedAt: t0})
	}
	v := campaign.Items{Tasks: st}
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		dueBy time.Time
		want  int
	}{{"all open", time.Time{}, 3}, {"overdue", t0, 2}} {
		n := 0
		for req := (reconcile.ListRequest{Limit: 1, DueBy: c.dueBy}); ; {
			page, err := v.List(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				n++
				armed := campaign.TaskSchema.Armed(it.Item)
				undelivered := campaign.TaskSchema.Undelivered(it.Item, it.Due)
				if armed == undelivered {
					t.Fatalf("%s: %s is armed %v, undelivered %v: want one", c.name, it.Key, armed, undelivered)
				}
			}
			if req.Cursor = page.Cursor; req.Cursor == "" {
				break
			}
		}
		if n != c.want {
			t.Fatalf("%s: listed %d, want %d", c.name, n, c.want)
		}
	}
	if _, err := v.Get(ctx, campaign.ItemKey(campaign.Key{CampaignID: "c1", TaskID: "gone"})); !errors.Is(err, reconcile.ErrItemNotFound) {
		t.Fatalf("Get of a missing task = %v", err)
	}
	it, err := v.Get(ctx, campaign.ItemKey(campaign.Key{CampaignID: "c1", TaskID: campaign.TaskID("c1", 1)}))
	if err != nil || it.State != string(campaign.Running) || !it.FiredAt.Equal(t0) {
		t.Fatalf("Get = %+v, %v", it, err)
	}
}
