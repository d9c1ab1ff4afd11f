package devserver

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/core/clock"
)

// stream is a client reading GET /campaigns/{id}/events as it arrives.
type stream struct {
	t      *testing.T
	resp   *http.Response
	lines  *bufio.Reader
	cancel context.CancelFunc
}

func (e *env) openEvents(tok, id string) (*stream, int) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.http.URL+"/campaigns/"+id+"/events", nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, resp.StatusCode
	}
	return &stream{t: e.t, resp: resp, lines: bufio.NewReader(resp.Body), cancel: cancel}, resp.StatusCode
}

// next reads events until one whose counts satisfy ok; it fails the test
// if the stream ends first.
func (s *stream) next(ok func(campaignapi.Progress) bool) campaignapi.Progress {
	s.t.Helper()
	for {
		line, err := s.lines.ReadString('\n')
		if err != nil {
			s.t.Fatalf("stream ended: %v", err)
		}
		data, found := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: ")
		if !found {
			continue
		}
		var p campaignapi.Progress
		if err := json.Unmarshal([]byte(data), &p); err != nil {
			s.t.Fatalf("event %q: %v", data, err)
		}
		if ok(p) {
			return p
		}
	}
}

func (s *stream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// step runs one server step (Tick) and returns the campaign schedules
// it fired.
func (e *env) step() int {
	e.t.Helper()
	n, err := e.srv.Tick(context.Background())
	if err != nil {
		e.t.Fatalf("step: %v", err)
	}
	return n
}

// campaignSchedules counts the live campaign schedules: those the
// campaign timer holds, and failed fires waiting for their retry.
func (e *env) campaignSchedules() int {
	e.t.Helper()
	return len(e.srv.campTimer.All()) + len(e.srv.campaigns.sends.Retrying())
}

// campaignEnv is a server whose listed users may send campaigns.
func campaignEnv(t *testing.T, senders ...string) *env {
	return startWith(t, clock.NewFake(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)),
		Config{DataDir: t.TempDir(), CampaignSenders: senders})
}

// Sign-up is open in dev too, so a signed-in user is not a sender: only
// users listed in CampaignSenders (by address or "@domain") get a token
// with the sender group and a verified address; the campaign API answers
// everyone else 403 JSON, as in the cloud.
func TestOnlyCampaignSendersMayUseCampaignsInDev(t *testing.T) {
	body := map[string]any{"subject": "Hello", "body": "Hi", "recipients": []map[string]string{{"email": "r0@example.com"}},
		"schedule": map[string]any{"windows": []string{"12:01-12:04"}, "timeZone": "UTC", "startDate": "2030-01-01"}}
	for _, tc := range []struct {
		name, email string
		senders     []string
		sender      bool
	}{
		{"listed address", "ann@example.com", []string{"ann@example.com"}, true},
		{"listed address, other case", "Ann@Example.com", []string{"ann@example.com"}, true},
		{"listed domain", "bo@senders.example", []string{"ann@example.com", "@senders.example"}, true},
		{"another address", "carl@example.com", []string{"ann@example.com", "@senders.example"}, false},
		{"a domain ending like a listed one", "dee@mysenders.example", []string{"@senders.example"}, false},
		{"nobody listed", "ann@example.com", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := campaignEnv(t, tc.senders...)
			tok := e.user(tc.email)
			claims, err := e.srv.signer.Verify(tok)
			if err != nil || claims.EmailVerified != tc.sender || slices.Contains(claims.Groups, campaignapi.DefaultSenderGroup) != tc.sender {
				t.Fatalf("claims %+v (%v), want sender %v", claims, err, tc.sender)
			}
			for _, r := range []struct {
				method, path string
				body         any
				ok           int
			}{{"POST", "/campaigns", body, 201}, {"POST", "/campaigns/preview", body, 200}, {"GET", "/campaigns", nil, 200}} {
				got := e.do(r.method, r.path, "Bearer "+tok, r.body)
				want := map[bool]int{true: r.ok, false: http.StatusForbidden}[tc.sender]
				if got.status != want || (!tc.sender && (got.body["error"] != "forbidden" || !strings.Contains(got.raw, "campaign-senders"))) {
					t.Errorf("%s %s: %d %s, want %d", r.method, r.path, got.status, got.raw, want)
				}
			}
			// The progress stream too: a non-sender is refused as on
			// every other route, before the campaign is looked up (a
			// sender asking for a missing one gets 404).
			got := e.do("GET", "/campaigns/nope/events", "Bearer "+tok, nil)
			want := map[bool]int{true: http.StatusNotFound, false: http.StatusForbidden}[tc.sender]
			if got.status != want || (!tc.sender && got.body["error"] != "forbidden") {
				t.Errorf("GET /campaigns/nope/events: %d %s, want %d", got.status, got.raw, want)
			}
		})
	}
}

// TestCampaignRunsInTheDevServer drives a campaign over HTTP: create,
// provision, a schedule fires into the owner's outbox, the progress
// stream shows each change, cancel stops the rest; the stream is the
// owner's only and ends when the client goes away.
func TestCampaignRunsInTheDevServer(t *testing.T) {
	e := campaignEnv(t, "ann@example.com", "bob@example.com") // 2030-01-01 12:00 UTC, a Tuesday
	ann, bob := e.user("ann@example.com"), e.user("bob@example.com")
	body := map[string]any{"subject": "Hello", "body": "Hi there",
		"recipients": []map[string]string{{"email": "r0@example.com"}, {"email": "r1@example.com"}, {"email": "r2@example.com"}},
		"schedule": map[string]any{"sendsPerDay": 3, "windows": []string{"12:01-12:04"}, "timeZone": "UTC", "startDate": "2030-01-01",
			"weekdays": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}}}
	r := e.do("POST", "/campaigns", "Bearer "+ann, body)
	id, _ := r.body["id"].(string)
	if r.status != http.StatusCreated || id == "" {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	for _, c := range []struct {
		name, tok string
		status    int
	}{{"no token", "", 401}, {"another sender", bob, 404}} {
		if s, got := e.openEvents(c.tok, id); got != c.status {
			if s != nil {
				s.close()
			}
			t.Errorf("%s: events answered %d, want %d", c.name, got, c.status)
		}
	}
	if _, got := e.openEvents(ann, "nope"); got != 404 {
		t.Errorf("missing campaign: events answered %d, want 404", got)
	}
	s, status := e.openEvents(ann, id)
	if status != 200 {
		t.Fatalf("events: %d", status)
	}
	defer s.close()
	if ct := s.resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if line, _ := s.lines.ReadString('\n'); line != ": subscribed\n" {
		t.Fatalf("first line %q", line)
	}

	if r := e.do("POST", "/campaigns/"+id+"/provision", "Bearer "+ann, nil); r.status != http.StatusAccepted {
		t.Fatalf("provision: %d %s", r.status, r.raw)
	}
	e.srv.campaigns.wg.Wait() // the provisioning runs and sends started so far
	s.next(func(p campaignapi.Progress) bool { return p.Status == "Active" })
	if n := e.campaignSchedules(); n != 3 {
		t.Fatalf("%d schedules, want 3", n)
	}
	if n := e.step(); n != 0 {
		t.Fatalf("fired %d before their time", n)
	}
	e.clock.Advance(90 * time.Second) // 12:01:30: the first send's minute
	if n := e.step(); n != 1 {
		t.Fatalf("fired %d, want 1", n)
	}
	p := s.next(func(p campaignapi.Progress) bool { return p.Counts["Finished"] == 1 })
	if len(p.Sends) != 1 || p.Sends[0].State != "Finished" || p.Counts["Pending"] != 2 {
		t.Errorf("progress after the first send: %+v", p)
	}
	mail := e.emails(ann, EmailKindCampaign, "")
	if len(mail) != 1 || mail[0].To[0] != "r0@example.com" || mail[0].Subject != "Hello" {
		t.Fatalf("outbox: %+v", mail)
	}
	if got := e.emails(bob, EmailKindCampaign, ""); len(got) != 0 {
		t.Errorf("bob sees ann's campaign mail: %+v", got)
	}

	if r := e.do("POST", "/campaigns/"+id+"/cancel", "Bearer "+ann, nil); r.status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	p = s.next(func(p campaignapi.Progress) bool { return p.Counts["Cancelled"] == 2 })
	if p.Status != "Cancelled" || p.Counts["Finished"] != 1 {
		t.Errorf("progress after cancel: %+v", p)
	}
	e.clock.Advance(10 * time.Minute)
	e.step()
	if got := e.emails(ann, EmailKindCampaign, ""); len(got) != 1 {
		t.Errorf("%d campaign emails after the cancel, want 1", len(got))
	}

	c, _ := e.srv.campaigns.store.Campaign(context.Background(), id)
	ch := campaignapi.ProgressChannel(c.OwnerID, id)
	if n := subscribers(e.srv.campaigns.hub, ch); n != 1 {
		t.Errorf("%d subscribers, want 1", n)
	}
	s.close()
	deadline := time.Now().Add(10 * time.Second)
	for subscribers(e.srv.campaigns.hub, ch) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stream kept its subscription after the client left")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
