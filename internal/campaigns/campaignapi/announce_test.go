package campaignapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

type published struct {
	channel string
	p       campaignapi.Progress
}

type recorder struct {
	got  []published
	fail error
}

func (r *recorder) Publish(_ context.Context, channel string, p campaignapi.Progress) error {
	r.got = append(r.got, published{channel, p})
	return r.fail
}

func TestAnnounce(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	st := memory.NewCampaignStore()
	st.PutCampaign(campaign.Campaign{ID: "ca", OwnerID: "u1", Status: campaign.Active, Total: 2})
	st.PutCampaign(campaign.Campaign{ID: "cb", OwnerID: "u2", Status: campaign.CampaignCancelled, Total: 1})
	a0 := campaign.SendTask{CampaignID: "ca", ID: "ca-00000", State: campaign.Finished}
	a1 := campaign.SendTask{CampaignID: "ca", ID: "ca-00001", Index: 1, State: campaign.Pending}
	b0 := campaign.SendTask{CampaignID: "cb", ID: "cb-00000", State: campaign.Cancelled}
	st.PutTasks(a0, a1, b0)
	tests := []struct {
		name      string
		ch        campaignapi.Changes
		fail      error
		channels  []string
		sends     []int
		finished  []int
		wantError bool
	}{
		{"sends grouped per campaign in first-seen order", campaignapi.Changes{Sends: []campaign.SendTask{b0, a0, a1}},
			nil, []string{"/campaigns/u2/cb", "/campaigns/u1/ca"}, []int{1, 2}, []int{0, 1}, false},
		{"a campaign item change alone", campaignapi.Changes{Campaigns: []string{"cb", "cb"}},
			nil, []string{"/campaigns/u2/cb"}, []int{0}, []int{0}, false},
		{"a campaign that is gone is skipped", campaignapi.Changes{Campaigns: []string{"gone"}, Sends: []campaign.SendTask{a0}},
			nil, []string{"/campaigns/u1/ca"}, []int{1}, []int{1}, false},
		{"publish failures are returned after trying every campaign", campaignapi.Changes{Campaigns: []string{"ca", "cb"}},
			errors.New("throttled"), []string{"/campaigns/u1/ca", "/campaigns/u2/cb"}, []int{0, 0}, []int{1, 0}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{fail: tt.fail}
			err := campaignapi.Announce(context.Background(), st, r, tt.ch, at)
			if (err != nil) != tt.wantError {
				t.Fatalf("err = %v, want error %v", err, tt.wantError)
			}
			if len(r.got) != len(tt.channels) {
				t.Fatalf("published %d updates, want %d: %+v", len(r.got), len(tt.channels), r.got)
			}
			for i, g := range r.got {
				if g.channel != tt.channels[i] || len(g.p.Sends) != tt.sends[i] || g.p.Counts["Finished"] != tt.finished[i] {
					t.Errorf("update %d = %s with %d sends, %d finished; want %s, %d, %d",
						i, g.channel, len(g.p.Sends), g.p.Counts["Finished"], tt.channels[i], tt.sends[i], tt.finished[i])
				}
			}
		})
	}
}
