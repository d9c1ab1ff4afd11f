package campaigndev

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/api"
	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/campaignapi"
	"github.com/unschedule/unschedule/internal/clock"
)

// outbox records campaign emails; fail makes the next appends fail.
type outbox struct {
	mu   sync.Mutex
	fail int
	got  []campaign.Message
}

func (o *outbox) AppendCampaignEmail(_ string, m campaign.Message, _ time.Time) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail > 0 {
		o.fail--
		return "", errors.New("disk full")
	}
	o.got = append(o.got, m)
	return "m", nil
}

func (o *outbox) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.got)
}

var start = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC) // a Tuesday

const createBody = `{"subject":"Hello","body":"Hi","recipients":[{"email":"a@example.com"},{"email":"b@example.com"}],
"schedule":{"sendsPerDay":2,"windows":["12:01-12:03"],"timeZone":"UTC","startDate":"2030-01-01","weekdays":["tue"]}}`

// provisioned is a runtime with one provisioned campaign of two sends at
// 12:01 and 12:02.
func provisioned(t *testing.T, ob *outbox) (*Runtime, *clock.Fake, string) {
	t.Helper()
	clock := clock.NewFake(start)
	rt, err := New(Config{Outbox: ob, Clock: clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	ctx := context.Background()
	resp := rt.API.Serve(ctx, api.Request{Method: "POST", Route: campaignapi.RouteCampaigns, UserID: "u1", Groups: []string{campaignapi.DefaultSenderGroup}, EmailVerified: true, Body: []byte(createBody)})
	if resp.Status != 201 {
		t.Fatalf("create: %d %s", resp.Status, resp.Body)
	}
	page, _, _ := rt.Store.Owned(ctx, "u1", "", 10)
	id := page[0].ID
	if resp := rt.API.Serve(ctx, api.Request{Method: "POST", Route: campaignapi.RouteProvision, TaskID: id, UserID: "u1", Groups: []string{campaignapi.DefaultSenderGroup}, EmailVerified: true}); resp.Status != 202 {
		t.Fatalf("provision: %d %s", resp.Status, resp.Body)
	}
	rt.Wait()
	return rt, clock, id
}

func TestFireDue(t *testing.T) {
	cases := []struct {
		name       string
		failures   int // outbox failures before it works
		fires      int // FireDue calls at 12:01:30
		emails     int
		finished   int
		schedules  int // left after the fires
		duplicates int // extra dispatches of the fired task
	}{
		{name: "fires once at its time", fires: 1, emails: 1, finished: 1, schedules: 1},
		{name: "a second call fires nothing again", fires: 2, emails: 1, finished: 1, schedules: 1},
		{name: "a duplicate fire sends nothing twice", fires: 1, emails: 1, finished: 1, schedules: 1, duplicates: 2},
		{name: "a failed fire is retried", failures: 1, fires: 2, emails: 1, finished: 1, schedules: 1},
		{name: "after its retries a fire is dead-lettered", failures: 5, fires: 4, emails: 0, finished: 0, schedules: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ob := &outbox{fail: c.failures}
			rt, clock, id := provisioned(t, ob)
			ctx := context.Background()
			if n := rt.FireDue(ctx); n != 0 {
				t.Fatalf("fired %d before the first send's time", n)
			}
			clock.Set(start.Add(90 * time.Second))
			for range c.fires {
				rt.FireDue(ctx)
			}
			for range c.duplicates {
				_ = dispatcher{rt}.Dispatch(ctx, campaign.FireEvent{CampaignID: id, TaskID: campaign.TaskID(id, 0)})
			}
			rt.Wait()
			counts, _ := rt.Store.Counts(ctx, id)
			if ob.count() != c.emails || counts[campaign.Finished] != c.finished || len(rt.Scheduler.Schedules()) != c.schedules {
				t.Errorf("emails %d finished %d schedules %d; want %d %d %d", ob.count(), counts[campaign.Finished],
					len(rt.Scheduler.Schedules()), c.emails, c.finished, c.schedules)
			}
		})
	}
}

func TestAtTime(t *testing.T) {
	cases := []struct {
		expr, zone, want string
		bad              bool
	}{
		{"at(2030-01-01T12:01:00)", "UTC", "2030-01-01T12:01:00Z", false},
		{"at(2030-07-01T09:30:00)", "Europe/Berlin", "2030-07-01T07:30:00Z", false},
		{"rate(1 minute)", "UTC", "", true},
		{"at(2030-01-01T12:01:00)", "Mars/Base", "", true},
	}
	for _, c := range cases {
		got, err := AtTime(c.expr, c.zone)
		if (err != nil) != c.bad || (!c.bad && got.UTC().Format(time.RFC3339) != c.want) {
			t.Errorf("AtTime(%q, %q) = %v, %v; want %s (error %v)", c.expr, c.zone, got, err, c.want, c.bad)
		}
	}
}

func TestOwnedPages(t *testing.T) {
	s := NewStore(NewHub(), clock.NewFake(start), slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	for _, id := range []string{"c1", "c2", "c3"} {
		_ = s.Create(ctx, campaign.Campaign{ID: id, OwnerID: "u1"}, nil)
	}
	_ = s.Create(ctx, campaign.Campaign{ID: "x", OwnerID: "u2"}, nil)
	var got []string
	for cursor, first := "", true; first || cursor != ""; first = false {
		page, next, err := s.Owned(ctx, "u1", cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			got = append(got, c.ID)
		}
		cursor = next
	}
	if strings.Join(got, ",") != "c3,c2,c1" {
		t.Errorf("pages %v, want newest first c3,c2,c1", got)
	}
	if _, _, err := s.Owned(ctx, "u1", "x", 2); !errors.Is(err, campaign.ErrBadCursor) {
		t.Errorf("bad cursor: %v", err)
	}
}

// TestAnnouncementsAreOrdered: every update is newer than the one before,
// even when the clock reads the same instant.
func TestAnnouncementsAreOrdered(t *testing.T) {
	hub := NewHub()
	s := NewStore(hub, clock.NewFake(start), slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	_ = s.Create(ctx, campaign.Campaign{ID: "c1", OwnerID: "u1", Status: campaign.Draft}, nil)
	sub := hub.subscribe(campaignapi.ProgressChannel("u1", "c1"))
	for _, to := range []campaign.Status{campaign.Provisioning, campaign.Active, campaign.CampaignCancelled} {
		if err := s.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft, campaign.Provisioning, campaign.Active}, to, "r", start); err != nil {
			t.Fatal(err)
		}
	}
	var last time.Time
	for range 3 {
		p := <-sub.ch
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
			s := NewStore(hub, clock.NewFake(start), slog.New(slog.NewTextHandler(io.Discard, nil)))
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
			_ = s.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft}, campaign.Provisioning, "", start)
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
			for hub.Subscribers(ch) != 0 {
				if time.Now().After(deadline) {
					t.Fatal("the subscription outlived the stream")
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}
