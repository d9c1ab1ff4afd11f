package campaignapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/httpapi"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// limitsStore is the in-memory store with the API's own methods.
type limitsStore struct{ *memory.CampaignStore }

func (m limitsStore) Create(_ context.Context, c campaign.Campaign, ts []campaign.SendTask) error {
	m.PutCampaign(c)
	m.PutTasks(ts...)
	return nil
}
func (m limitsStore) Complete(context.Context, campaign.Campaign) (bool, error) { return true, nil }
func (m limitsStore) Owned(context.Context, string, string, int) ([]campaign.Campaign, string, error) {
	return nil, "", nil
}

type noStarts struct{}

func (noStarts) Start(context.Context, string) error { return nil }

var limitsNow = time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC) // 18 hours before the next UTC day

// limited is a handler with the sender limits l, on counters c.
func limited(t *testing.T, l limits.Limits, c limits.Counters) *campaignapi.Handler {
	t.Helper()
	st := limitsStore{memory.NewCampaignStore()}
	clock := clock.NewFake(limitsNow)
	cn, _ := campaigncancel.New(st, st, inmem.NewScheduler(), clock, 1)
	h, err := campaignapi.New(st, pagecursor.NewRandom(), noStarts{}, cn, clock, nil, []string{"https://app.example.com"}, campaignapi.DefaultSenderGroup,
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limits.New(l, c, clock)
	if err != nil {
		t.Fatal(err)
	}
	return h.WithLimits(lim)
}

func campaignBody(recipients int) string {
	var rs []string
	for i := range recipients {
		rs = append(rs, fmt.Sprintf(`{"email":"r%d@example.com"}`, i))
	}
	return fmt.Sprintf(`{"subject":"Hello","body":"Hi","recipients":[%s],"schedule":{"sendsPerDay":50,"windows":["09:00-17:00"],"timeZone":"Europe/Berlin","startDate":"2026-06-01"}}`,
		strings.Join(rs, ","))
}

func post(h *campaignapi.Handler, route, user, body string) httpapi.Response {
	return h.Serve(context.Background(), httpapi.Request{Method: http.MethodPost, Route: route, UserID: user, Body: []byte(body),
		Groups: []string{campaignapi.DefaultSenderGroup}, EmailVerified: true, Email: "ada@example.com", EmailProof: "ada@example.com", Origin: "https://app.example.com"})
}

// TestLimitsAnswer429 drives the create and preview routes past each
// limit: the refusal is a JSON 429 naming the limit, its value, the
// caller's use and the request, with Retry-After (exposed to the
// browser) when the next UTC day lifts it.
func TestLimitsAnswer429(t *testing.T) {
	l := limits.Limits{CampaignsPerDay: 2, SendsPerDay: 10, RecipientsPerCampaign: 6}
	type req struct {
		route, user string
		recipients  int
	}
	create := func(user string, n int) req { return req{campaignapi.RouteCampaigns, user, n} }
	preview := func(n int) req { return req{campaignapi.RoutePreview, "u1", n} }
	const retry = 18 * 3600 // 06:00 UTC to midnight
	cases := []struct {
		name                 string
		before               []req // each must succeed
		last                 req
		limit                string
		used, max, requested int
		retry                int // seconds; 0 = no Retry-After
		says                 string
	}{
		{"campaigns per day", []req{create("u1", 1), create("u1", 1)}, create("u1", 1), "campaignsPerDay", 2, 2, 1, retry, "2 of your 2 campaigns for today (UTC)"},
		{"sends per day", []req{create("u1", 6)}, create("u1", 5), "sendsPerDay", 6, 10, 5, retry, "past your 10 sends for today (UTC; 6 used)"},
		{"recipients per campaign", nil, create("u1", 7), "recipientsPerCampaign", 0, 6, 7, 0, "at most 6 recipients (given 7)"},
		{"recipients per campaign, preview", nil, preview(7), "recipientsPerCampaign", 0, 6, 7, 0, "at most 6 recipients"},
		{"previews count nothing", []req{preview(6), preview(6), preview(6), create("u1", 5), create("u1", 5)}, create("u1", 1), "campaignsPerDay", 2, 2, 1, retry, "campaigns"},
		{"senders count apart", []req{create("u2", 6), create("u2", 4), create("u1", 6)}, create("u1", 5), "sendsPerDay", 6, 10, 5, retry, "sends"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := limited(t, l, memory.NewSenderLimits())
			for i, r := range tc.before {
				if resp := post(h, r.route, r.user, campaignBody(r.recipients)); resp.Status >= 300 {
					t.Fatalf("request %d: %d %s, want it to pass", i, resp.Status, resp.Body)
				}
			}
			resp := post(h, tc.last.route, tc.last.user, campaignBody(tc.last.recipients))
			var got struct {
				Error, Message, Limit string
				Max, Used, Requested  int
				RetryAfterSeconds     int
			}
			if err := json.Unmarshal(resp.Body, &got); err != nil || resp.Status != http.StatusTooManyRequests {
				t.Fatalf("%d %s (%v), want a JSON 429", resp.Status, resp.Body, err)
			}
			if got.Error != "limit_exceeded" || got.Limit != tc.limit || got.Max != tc.max || got.Used != tc.used ||
				got.Requested != tc.requested || !strings.Contains(got.Message, tc.says) {
				t.Fatalf("body %s, want limit %s (max %d, used %d, requested %d) saying %q", resp.Body, tc.limit, tc.max, tc.used, tc.requested, tc.says)
			}
			if resp.Headers["Content-Type"] != "application/json" || resp.Headers["Access-Control-Allow-Origin"] != "https://app.example.com" {
				t.Errorf("headers %v, want JSON with CORS", resp.Headers)
			}
			wantHeader := ""
			if tc.retry > 0 {
				wantHeader = fmt.Sprint(tc.retry)
			}
			if resp.Headers["Retry-After"] != wantHeader || got.RetryAfterSeconds != tc.retry {
				t.Errorf("Retry-After %q, retryAfterSeconds %d, want %d", resp.Headers["Retry-After"], got.RetryAfterSeconds, tc.retry)
			}
			if exposed := resp.Headers["Access-Control-Expose-Headers"] == "Retry-After"; exposed != (tc.retry > 0) {
				t.Errorf("Access-Control-Expose-Headers %q with Retry-After %d", resp.Headers["Access-Control-Expose-Headers"], tc.retry)
			}
		})
	}
}

// TestBadRequestsCountNothing: a create refused as invalid (400) uses no
// campaign of the day.
func TestBadRequestsCountNothing(t *testing.T) {
	mem := memory.NewSenderLimits()
	h := limited(t, limits.Limits{CampaignsPerDay: 1, SendsPerDay: 10, RecipientsPerCampaign: 10}, mem)
	bad := strings.Replace(campaignBody(2), "2026-06-01", "2026-02-30", 1)
	for range 3 {
		if resp := post(h, campaignapi.RouteCampaigns, "u1", bad); resp.Status != http.StatusBadRequest {
			t.Fatalf("%d %s, want 400", resp.Status, resp.Body)
		}
	}
	if resp := post(h, campaignapi.RouteCampaigns, "u1", campaignBody(2)); resp.Status != http.StatusCreated {
		t.Fatalf("%d %s, want 201: the bad requests were counted", resp.Status, resp.Body)
	}
}

type brokenCounters struct{}

func (brokenCounters) Add(context.Context, limits.Key, time.Time, []limits.Add) (map[string]int64, bool, error) {
	return nil, false, errors.New("ProvisionedThroughputExceededException: secret detail")
}

// TestCountersDownRefuses: when the counters cannot be read the create is
// refused (5xx, nothing stored) and the store's error is not echoed.
func TestCountersDownRefuses(t *testing.T) {
	h := limited(t, limits.Defaults(), brokenCounters{})
	resp := post(h, campaignapi.RouteCampaigns, "u1", campaignBody(1))
	if resp.Status != http.StatusInternalServerError || strings.Contains(string(resp.Body), "secret") {
		t.Fatalf("%d %s, want a 500 that does not echo the error", resp.Status, resp.Body)
	}
	// A preview counts nothing, so it does not need the counters.
	if resp := post(h, campaignapi.RoutePreview, "u1", campaignBody(1)); resp.Status != http.StatusOK {
		t.Fatalf("preview: %d %s, want 200", resp.Status, resp.Body)
	}
}

// TestRecipientLimitWithinTheHardLimit: a sender's recipients per
// campaign can never exceed what the API and the planner accept.
func TestRecipientLimitWithinTheHardLimit(t *testing.T) {
	if limits.MaxRecipientsPerCampaign > campaignapi.MaxRecipients || limits.MaxRecipientsPerCampaign > plan.MaxRecipients {
		t.Fatalf("limits.MaxRecipientsPerCampaign = %d, over the API's %d or the planner's %d", limits.MaxRecipientsPerCampaign,
			campaignapi.MaxRecipients, plan.MaxRecipients)
	}
}
