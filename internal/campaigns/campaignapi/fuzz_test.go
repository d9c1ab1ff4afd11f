package campaignapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/httpapi"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// memStore adds the API's own store methods to the in-memory store.
type memStore struct{ *memory.CampaignStore }

func (m memStore) Create(_ context.Context, c campaign.Campaign, ts []campaign.SendTask) error {
	m.PutCampaign(c)
	m.PutTasks(ts...)
	return nil
}
func (m memStore) Complete(context.Context, campaign.Campaign) (bool, error) { return true, nil }
func (m memStore) Owned(context.Context, string, string, int) ([]campaign.Campaign, string, error) {
	return nil, "", nil
}

// FuzzCreateNever5xx: no body makes the create or preview route answer a
// 5xx, or a 2xx without a valid campaign.
func FuzzCreateNever5xx(f *testing.F) {
	for _, s := range []string{body(3, okSchedule), `{}`, `[]`, `null`, `{"schedule":{"windows":["24:00-24:00"]}}`,
		`{"subject":"s","body":"b","recipients":[{"email":"a@b.co"}],"schedule":{"windows":["00:00-24:00"],"timeZone":"Australia/Lord_Howe","startDate":"2026-10-04","weekdays":["sun"]}}`,
		`{"recipients":[{"email":""}],"schedule":{"weekdays":[""],"windows":["-"],"startDate":"2026-02-30"}}`} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	st := memStore{memory.NewCampaignStore()}
	clock := clock.NewFake(now)
	c, _ := campaigncancel.New(st, st, inmem.NewScheduler(), clock, 1)
	h, err := campaignapi.New(st, pagecursor.NewRandom(), &starts{}, c, clock, nil, nil, campaignapi.DefaultSenderGroup, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte, preview bool) {
		route := campaignapi.RouteCampaigns
		if preview {
			route = campaignapi.RoutePreview
		}
		resp := h.Serve(context.Background(), httpapi.Request{Method: http.MethodPost, Route: route, UserID: "u1", Groups: []string{campaignapi.DefaultSenderGroup}, EmailVerified: true, Email: "ada@example.com", EmailProof: "ada@example.com", Body: b})
		if resp.Status >= 500 {
			t.Fatalf("%d %s for %q", resp.Status, resp.Body, b)
		}
	})
}
