package campaign_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestCachedSenderCheckStaleness: an answer is reused for the TTL and no
// longer, so a removal reaches a warm function within SenderCacheTTL; an
// error is never cached.
func TestCachedSenderCheckStaleness(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		after     time.Duration
		wantAllow bool
		wantCalls int
	}{
		{"within the TTL: the cached allow", campaign.SenderCacheTTL - time.Second, true, 1},
		{"at the TTL: asked again, refused", campaign.SenderCacheTTL, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			group := memory.NewCampaignSenders("u1")
			c, err := campaign.NewCachedSenderCheck(group, 0, clk)
			if err != nil {
				t.Fatal(err)
			}
			if v, err := c.Check(ctx, "u1"); err != nil || !v.Allowed {
				t.Fatalf("first check: %+v %v", v, err)
			}
			group.Remove("u1")
			clk.Set(t0.Add(tc.after))
			v, err := c.Check(ctx, "u1")
			if err != nil || v.Allowed != tc.wantAllow || group.Calls != tc.wantCalls {
				t.Fatalf("check: %+v %v after %d calls; want allowed %v after %d", v, err, group.Calls, tc.wantAllow, tc.wantCalls)
			}
		})
	}
	t.Run("errors are not cached", func(t *testing.T) {
		group := memory.NewCampaignSenders("u1")
		fail := true
		group.Fault = func(string) error {
			if fail {
				return errors.New("TooManyRequestsException")
			}
			return nil
		}
		c, _ := campaign.NewCachedSenderCheck(group, time.Minute, clock.NewFake(t0))
		if _, err := c.Check(ctx, "u1"); err == nil {
			t.Fatal("want the error")
		}
		fail = false
		if v, err := c.Check(ctx, "u1"); err != nil || !v.Allowed {
			t.Fatalf("second check: %+v %v; want allowed", v, err)
		}
	})
}

// TestGateCancelsOnlyLiveCampaigns: a refused owner's Draft, Provisioning
// or Active campaign is cancelled with the senderRemoved reason; a
// Completed or already Cancelled one keeps its status and reason.
func TestGateCancelsOnlyLiveCampaigns(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		from       campaign.Status
		want       campaign.Status
		wantReason bool
	}{
		{campaign.Draft, campaign.CampaignCancelled, true},
		{campaign.Provisioning, campaign.CampaignCancelled, true},
		{campaign.Active, campaign.CampaignCancelled, true},
		{campaign.Completed, campaign.Completed, false},
		{campaign.CampaignCancelled, campaign.CampaignCancelled, false},
	} {
		t.Run(string(tc.from), func(t *testing.T) {
			st := memory.NewCampaignStore()
			c := campaign.Campaign{ID: "c1", OwnerID: "u1", Status: tc.from, CancelReason: map[bool]string{true: "user"}[tc.from == campaign.CampaignCancelled]}
			st.PutCampaign(c)
			ok, err := campaign.Gate(ctx, memory.NewCampaignSenders(), st, c, now)
			if err != nil || ok {
				t.Fatalf("Gate = %v, %v; want refused", ok, err)
			}
			got, _ := st.Campaign(ctx, "c1")
			if got.Status != tc.want || campaign.SenderRemoved(got) != tc.wantReason {
				t.Fatalf("campaign %s (%q); want %s, senderRemoved %v", got.Status, got.CancelReason, tc.want, tc.wantReason)
			}
		})
	}
}
