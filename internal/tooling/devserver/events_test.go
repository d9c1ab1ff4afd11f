package devserver

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

var eventsStart = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// announcingStore is a new campaign store that announces to hub.
func announcingStore(t *testing.T, hub *Hub) *memory.CampaignStore {
	t.Helper()
	return announcing(memory.NewCampaignStore(), hub, clock.NewFake(eventsStart), slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// TestAnnouncementsAreOrdered: every update is newer than the one before,
// even when the clock reads the same instant.
func TestAnnouncementsAreOrdered(t *testing.T) {
	hub := NewHub()
	s := announcingStore(t, hub)
	ctx := context.Background()
	_ = s.Create(ctx, campaign.Campaign{ID: "c1", OwnerID: "u1", Status: campaign.Draft}, nil)
	sub := hub.subscribe(campaignapi.ProgressChannel("u1", "c1"))
	for _, to := range []campaign.Status{campaign.Provisioning, campaign.Active, campaign.CampaignCancelled} {
		if err := s.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft, campaign.Provisioning, campaign.Active}, to, "r", eventsStart); err != nil {
			t.Fatal(err)
		}
	}
	var last time.Time
	for range 3 {
		p := <-sub
		at, err := time.Parse(time.RFC3339Nano, p.AsOf)
		if err != nil || !at.After(last) {
			t.Fatalf("asOf %s after %s", p.AsOf, last)
		}
		last = at
	}
}

// TestEventStream reads the stream as it arrives: the subscribed
// comment, an update, keep-alive comments; it ends when the hub closes
// or the client leaves.
func TestEventStream(t *testing.T) {
	cases := []struct {
		name  string
		leave func(hub *Hub, cancel context.CancelFunc)
	}{
		{"the client leaves", func(_ *Hub, cancel context.CancelFunc) { cancel() }},
		{"the server shuts down", func(hub *Hub, _ context.CancelFunc) { hub.Close() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hub := NewHub()
			s := announcingStore(t, hub)
			ctx := context.Background()
			_ = s.Create(ctx, campaign.Campaign{ID: "c1", OwnerID: "u1", Status: campaign.Draft}, nil)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ServeEvents(w, r, hub, s, r.Header.Get("X-User"), "c1", 20*time.Millisecond)
			}))
			defer srv.Close()
			get := func(user string) (*http.Response, context.CancelFunc) {
				rctx, cancel := context.WithCancel(ctx)
				req, _ := http.NewRequestWithContext(rctx, "GET", srv.URL, nil)
				req.Header.Set("X-User", user)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp, cancel
			}
			other, cancelOther := get("u2")
			other.Body.Close()
			cancelOther()
			if other.StatusCode != 404 {
				t.Errorf("another user's stream: %d, want 404", other.StatusCode)
			}
			resp, cancel := get("u1")
			defer cancel()
			defer resp.Body.Close()
			lines := bufio.NewReader(resp.Body)
			read := func() string {
				l, err := lines.ReadString('\n')
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				return l
			}
			if l := read(); l != ": subscribed\n" {
				t.Fatalf("first line %q", l)
			}
			_ = s.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft}, campaign.Provisioning, "", eventsStart)
			l := read()
			for !strings.HasPrefix(l, "data: ") {
				l = read()
			}
			if !strings.HasPrefix(l, `data: {"campaignId":"c1","status":"Provisioning"`) {
				t.Fatalf("event %q", l)
			}
			for l := read(); l != ": keep-alive\n"; l = read() {
			}
			ch := campaignapi.ProgressChannel("u1", "c1")
			c.leave(hub, cancel)
			for {
				if _, err := lines.ReadString('\n'); err != nil {
					break // the stream ended
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for subscribers(hub, ch) != 0 {
				if time.Now().After(deadline) {
					t.Fatal("the subscription outlived the stream")
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// subscribers is how many streams listen on channel.
func subscribers(h *Hub, channel string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[channel])
}
