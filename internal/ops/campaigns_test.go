package ops_test

import (
	"context"
	"errors"
	"testing"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntest"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/ops/opstest"
)

// TestCancelCampaigns: every unfinished campaign of the owner is
// cancelled by the campaign API's code, its schedules deleted; a dry run
// changes nothing; another owner's campaign is left alone.
func TestCancelCampaigns(t *testing.T) {
	ctx := context.Background()
	f := opstest.New(t, campaigntest.CampaignT0, servers(t))
	store, err := campaigntable.NewCampaignStore(f.World.DDB, opstest.CampaignTable)
	if err != nil {
		t.Fatal(err)
	}
	mine, tasks := campaigntest.CampaignFixture(t, "c1", 3, campaigntest.CampaignT0)
	other, otherTasks := campaigntest.CampaignFixture(t, "c2", 2, campaigntest.CampaignT0)
	other.OwnerID = "owner-2"
	tm := f.Campaign(t, mine, tasks)
	f.Campaign(t, other, otherTasks)
	dry, err := f.World.CancelCampaigns(ctx, "owner-1", true)
	if err != nil || len(dry) != 1 || dry[0].Action != "would cancel" {
		t.Fatalf("dry run = %+v, %v", dry, err)
	}
	if got, _ := store.Campaign(ctx, "c1"); got.Status != campaign.Draft {
		t.Fatalf("a dry run changed the campaign to %s", got.Status)
	}
	done, err := f.World.CancelCampaigns(ctx, "owner-1", false)
	if err != nil || len(done) != 1 || done[0].Action != "cancelled" || done[0].Result.Cancelled != 3 || done[0].Result.SchedulesDeleted != 3 {
		t.Fatalf("cancel = %+v (%+v), %v", done, done[0].Result, err)
	}
	for _, tk := range tasks {
		if _, err := tm.Get(ctx, tk.Schedule().Name, tk.SendAt); !errors.Is(err, timer.ErrNotFound) {
			t.Errorf("schedule of %s: %v, want it deleted", tk.ID, err)
		}
	}
	if _, err := tm.Get(ctx, otherTasks[0].Schedule().Name, otherTasks[0].SendAt); err != nil {
		t.Errorf("another owner's schedule: %v", err)
	}
	again, err := f.World.CancelCampaigns(ctx, "owner-1", false)
	if err != nil || len(again) != 1 || again[0].Action != "left" {
		t.Errorf("a second cancel = %+v, %v", again, err)
	}
}
