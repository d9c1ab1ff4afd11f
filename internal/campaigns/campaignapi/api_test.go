package campaignapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo/dynamotest"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/httpapi"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/logfield/logfieldtest"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

var dynalite string

func TestMain(m *testing.M) { os.Exit(testenv.RunWithDynalite(m, &dynalite)) }

type starts struct {
	mu  sync.Mutex
	ids []string
}

func (s *starts) Start(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, id)
	return nil
}

type env struct {
	h      *campaignapi.Handler
	store  *campaigntable.CampaignStore
	sched  *inmem.Remote
	starts *starts
	n      int
}

var now = time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC) // Monday 08:00 in Berlin

func setup(t *testing.T) *env {
	t.Helper()
	return setupLogging(t, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// setupLogging is setup with the handler logging to log.
func setupLogging(t *testing.T, log *slog.Logger) *env {
	t.Helper()
	client := testenv.NewDynamoClient(dynalite)
	name := fmt.Sprintf("campaigns-%d", time.Now().UnixNano())
	dynamotest.CreateTable(t, client, campaigntable.CampaignTableInput(name))
	st, _ := campaigntable.NewCampaignStore(client, name)
	clock := clock.NewFake(now)
	e := &env{store: st, sched: inmem.NewRemote(inmem.NewScheduler(), nil), starts: &starts{}}
	c, _ := campaigncancel.New(st, st, e.sched, clock, 1)
	c.Margin = 5 * time.Second // as the API's main sets it
	var err error
	e.h, err = campaignapi.New(st, pagecursor.NewRandom(), e.starts, c, clock, func() string { e.n++; return fmt.Sprintf("c%d", e.n) },
		[]string{"http://localhost:5173"}, campaignapi.DefaultSenderGroup, log)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) do(method, route, id, user, body string, query map[string]string) (int, map[string]any) {
	return e.serve(sender(httpapi.Request{Method: method, Route: route, ID: id, UserID: user, Body: []byte(body), Query: query}))
}

// sender gives the request the claims of a campaign sender: a member of
// the sender group with a verified address proven by a code.
func sender(r httpapi.Request) httpapi.Request {
	r.Groups, r.EmailVerified = []string{"readers", campaignapi.DefaultSenderGroup}, true
	r.Email, r.EmailProof = "ada@example.com", "ada@example.com"
	return r
}

func (e *env) serve(r httpapi.Request) (int, map[string]any) {
	resp := e.h.Serve(context.Background(), r)
	var out map[string]any
	_ = json.Unmarshal(resp.Body, &out)
	return resp.Status, out
}

func body(n int, schedule string) string {
	var rs []string
	for i := range n {
		rs = append(rs, fmt.Sprintf(`{"email":"r%d@example.com"}`, i))
	}
	return fmt.Sprintf(`{"subject":"Hello","body":"Hi there","recipients":[%s],"schedule":%s}`, strings.Join(rs, ","), schedule)
}

const okSchedule = `{"sendsPerDay":5,"weekdays":["mon","tue","wednesday"],"windows":["09:00-12:00","13:00-17:00"],"timeZone":"Europe/Berlin","startDate":"2026-06-01"}`

func TestBadInputIsA4xxThatSaysHowToFixIt(t *testing.T) {
	e := setup(t)
	cases := []struct {
		name, method, route, user, body string
		status                          int
		says                            string
	}{
		{"no identity", "POST", campaignapi.RouteCampaigns, "", body(1, okSchedule), 401, "sign in"},
		{"malformed JSON", "POST", campaignapi.RouteCampaigns, "u1", `{"subject":`, 400, "the body ends early"},
		{"not JSON", "POST", campaignapi.RouteCampaigns, "u1", `{"subject" 1}`, 400, "not valid JSON (at byte"},
		{"unknown field", "POST", campaignapi.RouteCampaigns, "u1", `{"Subject":"x"}`, 400, "case-sensitive"},
		{"nested name in another case", "POST", campaignapi.RouteCampaigns, "u1", `{"subject":"s","body":"b","recipients":[{"EMAIL":"b@x.io"}],"schedule":` + okSchedule + `}`, 400, `"EMAIL" in recipients[0]`},
		{"two objects", "POST", campaignapi.RouteCampaigns, "u1", body(1, okSchedule) + "{}", 400, "one JSON object"},
		{"bad window", "POST", campaignapi.RouteCampaigns, "u1", body(1, `{"windows":["9-12"],"timeZone":"Europe/Berlin","startDate":"2026-06-01"}`), 400, "HH:MM-HH:MM"},
		{"bad weekday", "POST", campaignapi.RouteCampaigns, "u1", body(1, `{"weekdays":["funday"],"windows":["09:00-12:00"],"timeZone":"Europe/Berlin","startDate":"2026-06-01"}`), 400, "mon, tue"},
		{"no start date", "POST", campaignapi.RouteCampaigns, "u1", body(1, `{"windows":["09:00-12:00"],"timeZone":"Europe/Berlin"}`), 400, "startDate"},
		{"bad zone", "POST", campaignapi.RouteCampaigns, "u1", body(1, `{"windows":["09:00-12:00"],"timeZone":"Mars/Base","startDate":"2026-06-01"}`), 400, "IANA"},
		{"window ends first", "POST", campaignapi.RoutePreview, "u1", body(1, `{"windows":["12:00-09:00"],"timeZone":"UTC","startDate":"2026-06-01"}`), 400, "later than its start"},
		{"too many recipients", "POST", campaignapi.RouteCampaigns, "u1", body(campaignapi.MaxRecipients+1, okSchedule), 400, "split them"},
		{"no recipients", "POST", campaignapi.RouteCampaigns, "u1", body(0, okSchedule), 400, "1 to"},
		{"bad address", "POST", campaignapi.RouteCampaigns, "u1", `{"subject":"s","body":"b","recipients":[{"email":"Bob <b@x.io>"}],"schedule":` + okSchedule + `}`, 400, "plain email address"},
		{"empty subject", "POST", campaignapi.RouteCampaigns, "u1", `{"subject":" ","body":"b","recipients":[{"email":"b@x.io"}],"schedule":` + okSchedule + `}`, 400, "subject must be"},
		{"too large", "POST", campaignapi.RouteCampaigns, "u1", strings.Repeat(" ", campaignapi.MaxBody+1), 413, fmt.Sprintf("the body is %d bytes; at most 5242880 (5 MiB)", campaignapi.MaxBody+1)},
		{"explicit zero sends per day", "POST", campaignapi.RoutePreview, "u1", body(1, `{"sendsPerDay":0,"windows":["09:00-12:00"],"timeZone":"UTC","startDate":"2026-06-01"}`), 400, "schedule.sendsPerDay must be between 1 and 1440 (given 0)"},
		{"explicit empty weekdays", "POST", campaignapi.RoutePreview, "u1", body(1, `{"weekdays":[],"windows":["09:00-12:00"],"timeZone":"UTC","startDate":"2026-06-01"}`), 400, "schedule.weekdays is empty"},
		{"sends per day as a string", "POST", campaignapi.RoutePreview, "u1", body(1, `{"sendsPerDay":"20","windows":["09:00-12:00"],"timeZone":"UTC","startDate":"2026-06-01"}`), 400, "schedule.sendsPerDay must be a whole number (given a JSON string)"},
		{"weekdays as a string", "POST", campaignapi.RoutePreview, "u1", body(1, `{"weekdays":"mon","windows":["09:00-12:00"],"timeZone":"UTC","startDate":"2026-06-01"}`), 400, "schedule.weekdays must be an array of strings (given a JSON string)"},
		{"unknown field", "POST", campaignapi.RoutePreview, "u1", `{"subject":"s","sender":"x"}`, 400, `unknown field "sender"`},
		{"empty body", "POST", campaignapi.RoutePreview, "u1", ``, 400, "the body is empty"},
		{"a recipient's subject is not a schedule error", "POST", campaignapi.RoutePreview, "u1", `{"subject":"s","body":"b","recipients":[{"email":"b@x.io","subject":"a\nb"}],"schedule":` + okSchedule + `}`, 400, "recipients[0].subject must be at most 998 bytes"},
		{"wrong method", "DELETE", campaignapi.RouteCampaign, "u1", "", 405, "not allowed"},
		{"unknown route", "GET", "/nope", "u1", "", 404, "no such route"},
		{"missing campaign", "GET", campaignapi.RouteCampaign, "u1", "", 404, "not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := e.do(tc.method, tc.route, "nope", tc.user, tc.body, nil)
			msg, _ := out["message"].(string)
			if status != tc.status || !strings.Contains(msg, tc.says) {
				t.Fatalf("%d %q; want %d saying %q", status, msg, tc.status, tc.says)
			}
			// No prefix at all (so none twice), no schedule label on what
			// is not the schedule, and no decoder error echoed.
			if strings.Contains(msg, "invalid campaign") || strings.Contains(msg, "json:") || strings.Contains(msg, "Go ") {
				t.Fatalf("message %q echoes an internal prefix or error", msg)
			}
		})
	}
	t.Run("bad paging", func(t *testing.T) {
		for _, q := range []map[string]string{{"limit": "0"}, {"limit": "x"}, {"cursor": "-1"}, {"limit": "501"}} {
			if status, _ := e.do("GET", campaignapi.RouteCampaign, "c1", "u1", "", q); status != 400 {
				t.Errorf("%v: %d, want 400", q, status)
			}
		}
	})
}

func TestLifecycleOverTheAPI(t *testing.T) {
	e := setup(t)
	status, prev := e.do("POST", campaignapi.RoutePreview, "", "u1", body(12, okSchedule), nil)
	if status != 200 || prev["total"] != 12.0 || prev["days"] != 3.0 || !strings.HasPrefix(prev["first"].(string), "2026-06-01T09:") {
		t.Fatalf("preview %d %v", status, prev)
	}
	if e.n != 1 {
		t.Fatalf("preview used %d ids", e.n)
	}
	if status, _ := e.do("GET", campaignapi.RouteCampaign, "c1", "u1", "", nil); status != 404 {
		t.Fatalf("a preview stored a campaign (%d)", status)
	}
	status, created := e.do("POST", campaignapi.RouteCampaigns, "", "u1", body(12, okSchedule), nil)
	if status != 201 || created["id"] != "c2" || created["status"] != "Draft" || created["total"] != 12.0 {
		t.Fatalf("create %d %v", status, created)
	}
	t.Run("each user lists only their own campaigns", func(t *testing.T) {
		_, mine := e.do("GET", campaignapi.RouteCampaigns, "", "u1", "", nil)
		list, _ := mine["campaigns"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["id"] != "c2" || list[0].(map[string]any)["total"] != 12.0 {
			t.Fatalf("u1's list %v", mine)
		}
		// A summary holds what the owner index projects: no zone rather
		// than an empty one (GET /campaigns/{id} has it).
		if zone, ok := list[0].(map[string]any)["timeZone"]; ok {
			t.Fatalf("the list shows timeZone %q", zone)
		}
		if _, theirs := e.do("GET", campaignapi.RouteCampaigns, "", "u2", "", nil); len(theirs["campaigns"].([]any)) != 0 {
			t.Fatalf("u2's list %v", theirs)
		}
		if status, _ := e.do("GET", campaignapi.RouteCampaigns, "", "u1", "", map[string]string{"cursor": "%%%"}); status != 400 {
			t.Fatalf("a damaged cursor: %d", status)
		}
		// Well-formed base64 JSON, but not a key this index gave out: a
		// 400 naming the cursor, not DynamoDB's ValidationException (a 500).
		for _, forged := range []string{`{"pk":"C#c2"}`, `{"pk":"C#c2","sk":"META","owner":"u2","createdAt":"x"}`} {
			cur := base64.RawURLEncoding.EncodeToString([]byte(forged))
			if status, out := e.do("GET", campaignapi.RouteCampaigns, "", "u1", "", map[string]string{"cursor": cur}); status != 400 || !strings.Contains(out["message"].(string), "cursor") {
				t.Fatalf("a forged cursor %s: %d %v", forged, status, out)
			}
		}
	})
	t.Run("another user's campaign is a 404 on every route", func(t *testing.T) {
		for _, r := range []struct{ method, route string }{{"GET", campaignapi.RouteCampaign}, {"POST", campaignapi.RouteProvision}, {"POST", campaignapi.RouteCancel}} {
			if status, _ := e.do(r.method, r.route, "c2", "u2", "", nil); status != 404 {
				t.Errorf("%s %s by another user: %d, want 404", r.method, r.route, status)
			}
		}
	})
	t.Run("get pages the sends with counts", func(t *testing.T) {
		status, got := e.do("GET", campaignapi.RouteCampaign, "c2", "u1", "", map[string]string{"limit": "5"})
		counts, _ := got["counts"].(map[string]any)
		cur, _ := got["cursor"].(string)
		if status != 200 || counts["Pending"] != 12.0 || len(got["sends"].([]any)) != 5 || cur == "" || got["timeZone"] != "Europe/Berlin" {
			t.Fatalf("%d %v", status, got)
		}
		_, second := e.do("GET", campaignapi.RouteCampaign, "c2", "u1", "", map[string]string{"cursor": cur, "limit": "5"})
		if sends := second["sends"].([]any); len(sends) != 5 || sends[0].(map[string]any)["index"] != 5.0 {
			t.Fatalf("second page %v", second)
		}
		_, last := e.do("GET", campaignapi.RouteCampaign, "c2", "u1", "", map[string]string{"cursor": second["cursor"].(string)})
		if len(last["sends"].([]any)) != 2 || last["cursor"] != nil {
			t.Fatalf("last page %v", last)
		}
	})
	t.Run("provision starts the function", func(t *testing.T) {
		status, first := e.do("POST", campaignapi.RouteProvision, "c2", "u1", "", nil)
		if status != 202 || len(e.starts.ids) != 1 || e.starts.ids[0] != "c2" {
			t.Fatalf("%d, starts %v", status, e.starts.ids)
		}
		// Provisioning again answers as the first did, while it runs
		// and once it is Active (without starting it again).
		for _, to := range []campaign.Status{campaign.Provisioning, campaign.Active} {
			if err := e.store.SetStatus(context.Background(), "c2", []campaign.Status{campaign.Draft, campaign.Provisioning}, to, "", now); err != nil {
				t.Fatal(err)
			}
			status, again := e.do("POST", campaignapi.RouteProvision, "c2", "u1", "", nil)
			if status != 202 || !sameKeys(first, again) || again["status"] != string(to) {
				t.Fatalf("provision while %s: %d %v; want 202 shaped as %v", to, status, again, first)
			}
		}
		if len(e.starts.ids) != 2 {
			t.Fatalf("starts %v: want one more while Provisioning, none once Active", e.starts.ids)
		}
	})
	t.Run("an incomplete create cannot be provisioned", func(t *testing.T) {
		c := campaign.Campaign{ID: "half", OwnerID: "u1", Status: campaign.Draft, Total: 3}
		if err := e.store.Create(context.Background(), c, nil); err != nil {
			t.Fatal(err)
		}
		if status, out := e.do("POST", campaignapi.RouteProvision, "half", "u1", "", nil); status != 409 {
			t.Fatalf("%d %v", status, out)
		}
	})
	t.Run("cancel cancels every pending send, then provisioning is refused", func(t *testing.T) {
		status, out := e.do("POST", campaignapi.RouteCancel, "c2", "u1", "", nil)
		if status != 200 || out["cancelled"] != 12.0 || out["done"] != true {
			t.Fatalf("%d %v", status, out)
		}
		_, got := e.do("GET", campaignapi.RouteCampaign, "c2", "u1", "", nil)
		if got["status"] != "Cancelled" || got["counts"].(map[string]any)["Cancelled"] != 12.0 {
			t.Fatalf("after cancel %v", got)
		}
		if status, _ := e.do("POST", campaignapi.RouteProvision, "c2", "u1", "", nil); status != http.StatusConflict {
			t.Fatalf("provision after cancel: %d", status)
		}
		// Again: nothing left to cancel, no schedule deleted.
		if status, out := e.do("POST", campaignapi.RouteCancel, "c2", "u1", "", nil); status != 200 || out["cancelled"] != 0.0 || out["schedulesDeleted"] != 0.0 {
			t.Fatalf("second cancel %d %v", status, out)
		}
	})
	t.Run("cancelling a draft deletes no schedule", func(t *testing.T) {
		_, created := e.do("POST", campaignapi.RouteCampaigns, "", "u1", body(2, okSchedule), nil)
		status, out := e.do("POST", campaignapi.RouteCancel, created["id"].(string), "u1", "", nil)
		if status != 200 || out["cancelled"] != 2.0 || out["schedulesDeleted"] != 0.0 {
			t.Fatalf("%d %v", status, out)
		}
	})
}

// TestCancelLogsTheCampaignKey: a cancel's outcome line names the
// campaign by its item's key in logfield.Key (unschedule why --logs),
// and no recipient's address.
func TestCancelLogsTheCampaignKey(t *testing.T) {
	log, c := logfieldtest.New()
	e := setupLogging(t, log)
	_, created := e.do("POST", campaignapi.RouteCampaigns, "", "u1", body(2, okSchedule), nil)
	id, _ := created["id"].(string)
	if status, out := e.do("POST", campaignapi.RouteCancel, id, "u1", "", nil); status != 200 {
		t.Fatalf("%d %v", status, out)
	}
	c.RequireKey(t, "campaign cancelled by its owner", campaign.CampaignItemKey(id).String())
	if id != "c1" || campaign.CampaignItemKey(id).String() != "C#c1/META" {
		t.Errorf("campaign %s: key %s, want C#c1/META", id, campaign.CampaignItemKey(id))
	}
	for _, l := range c.Lines(t) {
		if b, _ := json.Marshal(l); strings.Contains(string(b), "@example.com") {
			t.Errorf("a line logs a recipient's address: %s", b)
		}
	}
}

func sameKeys(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// A missing sendsPerDay or weekdays takes its default (20 a day, Monday
// to Friday); only an explicit value is checked.
func TestMissingScheduleFieldsTakeTheirDefaults(t *testing.T) {
	e := setup(t)
	// 45 sends from Friday 2026-06-05: 20 on Friday, 20 on Monday, 5 on Tuesday.
	status, out := e.do("POST", campaignapi.RoutePreview, "", "u1", body(45, `{"windows":["09:00-17:00"],"timeZone":"UTC","startDate":"2026-06-05"}`), nil)
	if status != 200 || out["days"] != 3.0 || !strings.HasPrefix(out["last"].(string), "2026-06-09T") {
		t.Fatalf("%d %v", status, out)
	}
}

// GET completes an Active campaign whose every send ended, if the
// store's own completing write was lost.
func TestGetCompletesAFinishedCampaign(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(campaign.SendTask, string, time.Time) (campaign.SendTask, error)
	}{
		{"Failed", campaign.Fail},
		{"Suppressed", campaign.Suppress},
	} {
		t.Run("the last send "+tc.name, func(t *testing.T) {
			e := setup(t)
			_, created := e.do("POST", campaignapi.RouteCampaigns, "", "u1", body(1, okSchedule), nil)
			id := created["id"].(string)
			ctx := context.Background()
			// The task ends while the campaign is a Draft (so the store does not
			// complete it), then the campaign is Active: as if the completing
			// write had been lost.
			task, _ := e.store.Get(ctx, campaign.Key{CampaignID: id, TaskID: campaign.TaskID(id, 0)})
			done, err := tc.end(task, "why it ended", now)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.store.Replace(ctx, task, done); err != nil {
				t.Fatal(err)
			}
			if err := e.store.SetStatus(ctx, id, []campaign.Status{campaign.Draft}, campaign.Active, "", now); err != nil {
				t.Fatal(err)
			}
			_, got := e.do("GET", campaignapi.RouteCampaign, id, "u1", "", nil)
			if got["status"] != "Completed" || got["counts"].(map[string]any)[tc.name] != 1.0 {
				t.Fatalf("GET %v", got)
			}
			if status, out := e.do("POST", campaignapi.RouteCancel, id, "u1", "", nil); status != http.StatusConflict {
				t.Fatalf("cancel of a completed campaign %d %v", status, out)
			}
		})
	}
}

// Sign-up is open, so a signed-in user is not yet a sender: every route
// answers 403 JSON unless the token says the caller is in the sender
// group and has a verified address, and nothing is stored or started.
func TestOnlyVerifiedMembersOfTheSenderGroupMayUseCampaigns(t *testing.T) {
	e := setup(t)
	routes := []struct{ method, route, id, body string }{
		{"POST", campaignapi.RouteCampaigns, "", body(3, okSchedule)},
		{"POST", campaignapi.RoutePreview, "", body(3, okSchedule)},
		{"GET", campaignapi.RouteCampaigns, "", ""},
		{"GET", campaignapi.RouteCampaign, "c1", ""},
		{"POST", campaignapi.RouteProvision, "c1", ""},
		{"POST", campaignapi.RouteCancel, "c1", ""},
	}
	for _, tc := range []struct {
		name     string
		groups   []string
		verified bool
		says     string
	}{
		{"no group", nil, true, `members of the "campaign-senders" user group`},
		{"another group", []string{"readers"}, true, `members of the "campaign-senders" user group`},
		{"a group of a similar name", []string{"campaign-senders-x", "Campaign-Senders"}, true, `"campaign-senders"`},
		{"member, address not verified", []string{campaignapi.DefaultSenderGroup}, false, "email_verified is not true"},
		{"neither", nil, false, "ask an administrator"},
	} {
		for _, r := range routes {
			t.Run(tc.name+" "+r.method+" "+r.route, func(t *testing.T) {
				status, out := e.serve(httpapi.Request{Method: r.method, Route: r.route, ID: r.id, UserID: "u1", Body: []byte(r.body),
					Groups: tc.groups, EmailVerified: tc.verified})
				msg, _ := out["message"].(string)
				if status != http.StatusForbidden || out["error"] != "forbidden" || !strings.Contains(msg, tc.says) {
					t.Fatalf("%d %v; want 403 forbidden saying %q", status, out, tc.says)
				}
			})
		}
	}
	if e.n != 0 || len(e.starts.ids) != 0 {
		t.Fatalf("a refused request used %d ids and started %v", e.n, e.starts.ids)
	}
	if status, out := e.do("POST", campaignapi.RouteCampaigns, "", "u1", body(3, okSchedule), nil); status != http.StatusCreated {
		t.Fatalf("a sender: %d %v", status, out)
	}
}

// A member of the sender group with a verified address still may not
// create or provision a campaign until the token's custom:email_proof
// names their current address (a password reset writes it); they may
// read, preview and cancel. Nothing is stored or started for a refusal.
func TestCreatingACampaignNeedsTheProofOfTheAddress(t *testing.T) {
	e := setup(t)
	if status, out := e.do("POST", campaignapi.RouteCampaigns, "", "u1", body(3, okSchedule), nil); status != http.StatusCreated {
		t.Fatalf("a proven sender: %d %v", status, out)
	}
	n := e.n
	for _, tc := range []struct {
		name, email, proof string
	}{
		{"no proof", "ada@example.com", ""},
		{"proof of an earlier address", "ada@example.com", "old@example.com"},
		{"proof without an address", "", "ada@example.com"},
		{"neither", "", ""},
	} {
		for _, r := range []struct{ method, route, id, body string }{
			{"POST", campaignapi.RouteCampaigns, "", body(3, okSchedule)},
			{"POST", campaignapi.RouteProvision, "c1", ""},
		} {
			t.Run(tc.name+" "+r.method+" "+r.route, func(t *testing.T) {
				req := sender(httpapi.Request{Method: r.method, Route: r.route, ID: r.id, UserID: "u1", Body: []byte(r.body)})
				req.Email, req.EmailProof = tc.email, tc.proof
				status, out := e.serve(req)
				msg, _ := out["message"].(string)
				if status != http.StatusForbidden || out["error"] != "forbidden" || !strings.Contains(msg, "custom:email_proof") {
					t.Fatalf("%d %v; want 403 forbidden naming custom:email_proof", status, out)
				}
			})
		}
	}
	if e.n != n || len(e.starts.ids) != 0 {
		t.Fatalf("a refused request used %d ids and started %v", e.n-n, e.starts.ids)
	}
	for _, r := range []struct{ method, route, id, body string }{
		{"POST", campaignapi.RoutePreview, "", body(3, okSchedule)},
		{"GET", campaignapi.RouteCampaigns, "", ""},
		{"GET", campaignapi.RouteCampaign, "c1", ""},
		{"POST", campaignapi.RouteCancel, "c1", ""},
	} {
		req := sender(httpapi.Request{Method: r.method, Route: r.route, ID: r.id, UserID: "u1", Body: []byte(r.body)})
		req.EmailProof = ""
		if status, out := e.serve(req); status >= 300 {
			t.Fatalf("an unproven sender %s %s: %d %v", r.method, r.route, status, out)
		}
	}
	// The proof is compared as the sender check compares it: case and
	// surrounding spaces aside.
	req := sender(httpapi.Request{Method: "POST", Route: campaignapi.RouteCampaigns, UserID: "u1", Body: []byte(body(3, okSchedule))})
	req.Email, req.EmailProof = "Ada@Example.com", "ada@example.com"
	if status, out := e.serve(req); status != http.StatusCreated {
		t.Fatalf("proof in another case: %d %v", status, out)
	}
}

// Every paged route refuses, with a 400 naming cursor, a cursor it did
// not hand out to this caller for this list: damaged, cut short, never
// issued (the store's bare position), another user's, another list's.
func TestPagedRoutesRefuseCursorsTheyDidNotHandOut(t *testing.T) {
	e := setup(t)
	for range 3 {
		if status, out := e.do("POST", campaignapi.RouteCampaigns, "", "u1", body(3, okSchedule), nil); status != 201 {
			t.Fatalf("create %d %v", status, out)
		}
	}
	// u2 owns c4, so a cursor of u1's c1 can be tried on it.
	if status, out := e.do("POST", campaignapi.RouteCampaigns, "", "u2", body(3, okSchedule), nil); status != 201 {
		t.Fatalf("create %d %v", status, out)
	}
	issued := func(route, id string) string {
		_, out := e.do("GET", route, id, "u1", "", map[string]string{"limit": "1"})
		c, _ := out["cursor"].(string)
		if c == "" {
			t.Fatalf("%s %s handed out no cursor: %v", route, id, out)
		}
		return c
	}
	list, sends := issued(campaignapi.RouteCampaigns, ""), issued(campaignapi.RouteCampaign, "c1")
	_, sends2 := issued(campaignapi.RouteCampaigns, ""), issued(campaignapi.RouteCampaign, "c2")
	changed := func(c string) string {
		mid := len(c) / 2
		return c[:mid] + map[bool]string{true: "B", false: "A"}[c[mid] == 'A'] + c[mid+1:]
	}
	// The positions the store itself uses, as the API used to show them.
	bareKey := base64.RawURLEncoding.EncodeToString([]byte(`{"pk":"C#c2","sk":"META","owner":"u1","createdAt":"2026-06-01T06:00:00Z"}`))
	for _, tc := range []struct {
		name, route, id, user, cursor string
	}{
		{"list: a character changed", campaignapi.RouteCampaigns, "", "u1", changed(list)},
		{"list: cut short by four", campaignapi.RouteCampaigns, "", "u1", list[:len(list)-4]},
		{"list: never issued (the store's bare key)", campaignapi.RouteCampaigns, "", "u1", bareKey},
		{"list: another user's", campaignapi.RouteCampaigns, "", "u2", list},
		{"list: another list's (a page of sends)", campaignapi.RouteCampaigns, "", "u1", sends},
		{"sends: a character changed", campaignapi.RouteCampaign, "c1", "u1", changed(sends)},
		{"sends: cut short by four", campaignapi.RouteCampaign, "c1", "u1", sends[:len(sends)-4]},
		{"sends: never issued (a bare offset)", campaignapi.RouteCampaign, "c1", "u1", "3"},
		{"sends: another campaign's", campaignapi.RouteCampaign, "c1", "u1", sends2},
		{"sends: another list's (the campaign list)", campaignapi.RouteCampaign, "c1", "u1", list},
		{"sends: another user's, on their own campaign", campaignapi.RouteCampaign, "c4", "u2", sends},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := e.do("GET", tc.route, tc.id, tc.user, "", map[string]string{"cursor": tc.cursor})
			if msg, _ := out["message"].(string); status != 400 || out["error"] != "validation_error" || !strings.HasPrefix(msg, "cursor ") {
				t.Fatalf("%d %v, want a 400 naming cursor", status, out)
			}
		})
	}
	t.Run("the issued cursors still page", func(t *testing.T) {
		if status, out := e.do("GET", campaignapi.RouteCampaigns, "", "u1", "", map[string]string{"cursor": list, "limit": "1"}); status != 200 || len(out["campaigns"].([]any)) != 1 {
			t.Fatalf("list: %d %v", status, out)
		}
		if status, out := e.do("GET", campaignapi.RouteCampaign, "c1", "u1", "", map[string]string{"cursor": sends}); status != 200 || out["sends"].([]any)[0].(map[string]any)["index"] != 1.0 {
			t.Fatalf("sends: %d %v", status, out)
		}
	})
}
