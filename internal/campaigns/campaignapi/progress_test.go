package campaignapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
)

func TestNewProgress(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 5, time.UTC)
	c := campaign.Campaign{ID: "c1", OwnerID: "u1", Status: campaign.Active}
	tests := []struct {
		name   string
		counts map[campaign.State]int
		sends  []campaign.SendTask
		want   string
	}{
		{"no counts read yet shows zeros", nil, nil,
			`{"campaignId":"c1","status":"Active","asOf":"2026-12-01T09:00:00.000000005Z","counts":{"Cancelled":0,"Failed":0,"Finished":0,"Pending":0,"Running":0,"Suppressed":0},"sends":[]}`},
		{"counts and a changed send", map[campaign.State]int{campaign.Finished: 1, campaign.Pending: 4},
			[]campaign.SendTask{{ID: "c1-00000", Email: "a@example.com", State: campaign.Finished, SendAt: at, Local: "2026-12-01T10:00:00", SentAt: at}},
			`{"campaignId":"c1","status":"Active","asOf":"2026-12-01T09:00:00.000000005Z","counts":{"Cancelled":0,"Failed":0,"Finished":1,"Pending":4,"Running":0,"Suppressed":0},"sends":[{"id":"c1-00000","index":0,"email":"a@example.com","subject":"","state":"Finished","sendAt":"2026-12-01T09:00:00Z","local":"2026-12-01T10:00:00","sentAt":"2026-12-01T09:00:00Z"}]}`},
		{"a suppressed send is counted", map[campaign.State]int{campaign.Suppressed: 2, campaign.Finished: 1},
			[]campaign.SendTask{{ID: "c1-00001", Index: 1, Email: "b@example.com", State: campaign.Suppressed, SendAt: at, Local: "2026-12-01T10:00:00", Reason: "suppressed: unsubscribed"}},
			`{"campaignId":"c1","status":"Active","asOf":"2026-12-01T09:00:00.000000005Z","counts":{"Cancelled":0,"Failed":0,"Finished":1,"Pending":0,"Running":0,"Suppressed":2},"sends":[{"id":"c1-00001","index":1,"email":"b@example.com","subject":"","state":"Suppressed","sendAt":"2026-12-01T09:00:00Z","local":"2026-12-01T10:00:00","reason":"suppressed: unsubscribed"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(NewProgress(c, tt.counts, tt.sends, at))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
	if got := ProgressChannel("u1", "c1"); got != "/campaigns/u1/c1" {
		t.Errorf("ProgressChannel = %q", got)
	}
}
