package devserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerkind"
)

// createCampaign creates and provisions a campaign of the recipients,
// one send a minute from 12:01 UTC (the env starts at 12:00), and
// returns its id once every schedule exists.
func (e *env) createCampaign(tok string, recipients ...string) string {
	e.t.Helper()
	return e.createCampaignOn(tok, "2030-01-01", recipients...)
}

// createCampaignOn is createCampaign starting on day (YYYY-MM-DD).
func (e *env) createCampaignOn(tok, day string, recipients ...string) string {
	e.t.Helper()
	var rs []map[string]string
	for _, r := range recipients {
		rs = append(rs, map[string]string{"email": r})
	}
	body := map[string]any{"subject": "Hello", "body": "Hi there", "recipients": rs,
		"schedule": map[string]any{"sendsPerDay": len(recipients), "windows": []string{fmt.Sprintf("12:01-12:%02d", 1+len(recipients))}, "timeZone": "UTC",
			"startDate": day, "weekdays": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}}}
	r := e.do("POST", "/campaigns", "Bearer "+tok, body)
	id, _ := r.body["id"].(string)
	if r.status != http.StatusCreated || id == "" {
		e.t.Fatalf("create: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/campaigns/"+id+"/provision", "Bearer "+tok, nil); r.status != http.StatusAccepted {
		e.t.Fatalf("provision: %d %s", r.status, r.raw)
	}
	e.srv.campaigns.wg.Wait() // the provisioning runs and sends started so far
	if n := e.campaignSchedules(); n != len(recipients) {
		e.t.Fatalf("%d schedules, want %d", n, len(recipients))
	}
	return id
}

// sentTo counts the owner's campaign emails per recipient.
func (e *env) sentTo(tok string) map[string]int {
	e.t.Helper()
	n := map[string]int{}
	for _, m := range e.emails(tok, EmailKindCampaign, "") {
		n[strings.Join(m.To, ",")]++
	}
	return n
}

// TestCampaignResumesAfterRestart: a campaign part-way through its sends
// survives a restart of the server on the same data folder. The sends
// due while it was down go out at its first step, each once; a send
// whose email went out just before the stop but whose task was never
// recorded (a crash between the two) is finished by the reconciler from
// the receipt, never sent again; the campaign ends Completed.
func TestCampaignResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	fake := clock.NewFake(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	cfg := Config{DataDir: dir, CampaignSenders: []string{"ann@example.com"}}
	e := startWith(t, fake, cfg)
	ann := e.user("ann@example.com")
	recipients := []string{"r0@example.com", "r1@example.com", "r2@example.com", "r3@example.com", "r4@example.com"}
	id := e.createCampaign(ann, recipients...)
	ctx := context.Background()

	fake.Advance(90 * time.Second) // 12:01:30: r0's minute
	if n := e.step(); n != 1 {
		t.Fatalf("fired %d at 12:01:30, want 1", n)
	}
	// 12:02:10: r1's send crashes after its email, before its task's write.
	fake.Advance(40 * time.Second)
	st := e.srv.db.campaigns
	k := campaign.Key{CampaignID: id, TaskID: campaign.TaskID(id, 1)}
	pending, err := st.Get(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := st.Claim(ctx, k, pending.SendAt, fake.Now(), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	sender := outboxSender{db: e.srv.db, campaigns: st, clock: fake}
	if _, err := sender.Send(ctx, campaign.Message{IdempotencyKey: claimed.IdempotencyKey(), To: claimed.Email, Subject: claimed.Subject, Body: "Hi there"}); err != nil {
		t.Fatal(err)
	}
	e.stop()

	fake.Advance(2 * time.Minute) // 12:04:10: r2 and r3 came due while it was down
	e = startWith(t, fake, cfg)
	ann = e.signIn("ann@example.com")
	if n := e.step(); n != 3 { // r1 (skipped: Running), r2, r3
		t.Fatalf("fired %d after the restart, want 3", n)
	}
	if got := e.sentTo(ann); len(got) != 4 || got["r4@example.com"] != 0 {
		t.Fatalf("after the restart: %v, want r0-r3 once each", got)
	}
	fake.Advance(time.Minute) // 12:05:10: r4
	if n := e.step(); n != 1 {
		t.Fatalf("fired %d at 12:05:10, want 1", n)
	}
	fake.Advance(5 * time.Minute) // r1's lease has passed
	if err := e.srv.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	e.srv.campaigns.wg.Wait() // the provisioning runs and sends started so far
	if n := e.step(); n != 0 {
		t.Errorf("fired %d after every send, want 0", n)
	}
	got := e.sentTo(ann)
	for _, r := range recipients {
		if got[r] != 1 {
			t.Errorf("%s got %d emails, want 1 (all: %v)", r, got[r], got)
		}
	}
	r := e.do("GET", "/campaigns/"+id, "Bearer "+ann, nil)
	if r.status != http.StatusOK || r.body["status"] != string(campaign.Completed) {
		t.Fatalf("campaign: %d %s, want Completed", r.status, r.raw)
	}
	task, err := e.srv.db.campaigns.Get(ctx, claimed.Key())
	if err != nil || task.State != campaign.Finished || task.MessageID == "" {
		t.Errorf("r1's task %+v, %v: want Finished with the first send's receipt", task, err)
	}
}

// TestCampaignFireRetries: a schedule whose fire fails is tried again on
// the next steps, up to campaign.ScheduleRetries retries, then removed (a
// dead letter, logged); a duplicate fire of a sent task sends nothing.
func TestCampaignFireRetries(t *testing.T) {
	e := campaignEnv(t, "ann@example.com")
	ann := e.user("ann@example.com")
	id := e.createCampaign(ann, "r0@example.com")
	at := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	bad := timer.Schedule{Name: "camp-bad", ClientToken: "t", At: at, Payload: contract.Payload{Key: contract.Key{Partition: "not", Sort: "a task"}, Due: at}}
	if err := e.srv.campTimer.Arm(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	for i := range campaign.ScheduleRetries + 1 {
		if n := e.step(); n != 1 {
			t.Fatalf("step %d fired %d, want the bad schedule", i, n)
		}
	}
	if n := e.campaignSchedules(); n != 1 {
		t.Fatalf("%d schedules after the retries, want r0's only", n)
	}
	if !strings.Contains(e.logs.String(), "dead-lettered") {
		t.Error("the dead letter was not logged")
	}
	e.clock.Advance(90 * time.Second)
	if n := e.step(); n != 1 {
		t.Fatalf("fired %d, want 1", n)
	}
	fire := campaign.FireEvent{CampaignID: id, TaskID: campaign.TaskID(id, 0)}
	for range 2 {
		_ = campaignDispatcher{e.srv.campaigns}.Dispatch(context.Background(), fire)
	}
	e.srv.campaigns.wg.Wait() // the provisioning runs and sends started so far
	if got := e.sentTo(ann); got["r0@example.com"] != 1 {
		t.Errorf("sent %v, want r0 once", got)
	}
}

var unsubscribeLink = regexp.MustCompile(`/unsubscribe\?token=[A-Za-z0-9_.%-]+`)

// TestOutboxLinkUnsubscribes: a make dev campaign email shows its
// unsubscribe link; the link's page (GET) suppresses nothing, its button
// (POST) suppresses the address, kept in the store; a forged link is a
// 400; the link still works after a restart.
func TestOutboxLinkUnsubscribes(t *testing.T) {
	dir := t.TempDir()
	fake := clock.NewFake(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	cfg := Config{DataDir: dir, CampaignSenders: []string{"ann@example.com"}}
	e := startWith(t, fake, cfg)
	ann := e.user("ann@example.com")
	e.createCampaign(ann, "r0@example.com")
	fake.Advance(90 * time.Second)
	e.step()
	mail := e.emails(ann, EmailKindCampaign, "")
	if len(mail) != 1 {
		t.Fatalf("%d emails", len(mail))
	}
	path := unsubscribeLink.FindString(mail[0].Body)
	if path == "" || !strings.HasPrefix(mail[0].Body, "Hi there") {
		t.Fatalf("body %q: want the body, then the link", mail[0].Body)
	}
	e.stop()
	e = startWith(t, fake, cfg)
	do := func(method, p string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, e.http.URL+p, strings.NewReader("List-Unsubscribe=One-Click"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	suppressed := func() (suppress.Entry, bool) {
		entry, ok, err := e.srv.db.suppressions.Get(context.Background(), "r0@example.com")
		if err != nil {
			t.Fatal(err)
		}
		return entry, ok
	}
	if code, body := do("GET", path); code != 200 || !strings.Contains(body, `<form method="post"`) {
		t.Fatalf("GET = %d %q: want the page", code, body)
	}
	if _, ok := suppressed(); ok {
		t.Fatal("GET suppressed the address")
	}
	if code, body := do("GET", path+"x"); code != 400 || !strings.Contains(body, "link does not work") {
		t.Errorf("forged GET = %d %q", code, body)
	}
	if code, _ := do("POST", path); code != 200 {
		t.Fatalf("POST = %d", code)
	}
	if entry, ok := suppressed(); !ok || entry.Reason != suppress.Unsubscribe {
		t.Errorf("entry %+v, %v", entry, ok)
	}
}

// TestCampaignLimitsAreCounted: the sender limits apply in dev too,
// counted in the store across a restart.
func TestCampaignLimitsAreCounted(t *testing.T) {
	dir := t.TempDir()
	fake := clock.NewFake(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	cfg := Config{DataDir: dir, CampaignSenders: []string{"ann@example.com"}}
	cfg.CampaignLimits.CampaignsPerDay, cfg.CampaignLimits.SendsPerDay, cfg.CampaignLimits.RecipientsPerCampaign = 1, 10, 10
	e := startWith(t, fake, cfg)
	ann := e.user("ann@example.com")
	body := map[string]any{"subject": "Hello", "body": "Hi", "recipients": []map[string]string{{"email": "r0@example.com"}},
		"schedule": map[string]any{"windows": []string{"12:01-12:04"}, "timeZone": "UTC", "startDate": "2030-01-01"}}
	if r := e.do("POST", "/campaigns", "Bearer "+ann, body); r.status != http.StatusCreated {
		t.Fatalf("first create: %d %s", r.status, r.raw)
	}
	e.stop()
	e = startWith(t, fake, cfg)
	ann = e.signIn("ann@example.com")
	if r := e.do("POST", "/campaigns", "Bearer "+ann, body); r.status != http.StatusTooManyRequests {
		t.Fatalf("second create the same day: %d %s, want 429", r.status, r.raw)
	}
}

// TestCampaignSendsOnEveryTimer: make dev arms a campaign's sends on the
// stand-in of its -timer, keeps them across a restart, and fires each
// once at its time (a TTL marker within the sweeper's delay).
func TestCampaignSendsOnEveryTimer(t *testing.T) {
	for _, l := range timerkind.Names() {
		t.Run(string(l), func(t *testing.T) {
			fake := clock.NewFake(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
			cfg := Config{DataDir: t.TempDir(), CampaignSenders: []string{"ann@example.com"}, Timer: l, TTLMaxDelay: time.Second}
			e := startWith(t, fake, cfg)
			ann := e.user("ann@example.com")
			e.createCampaign(ann, "r0@example.com", "r1@example.com")
			e.stop()
			e = startWith(t, fake, cfg)
			ann = e.signIn("ann@example.com")
			if n := e.campaignSchedules(); n != 2 {
				t.Fatalf("%d schedules after the restart, want 2", n)
			}
			fake.Advance(150 * time.Second) // 12:02:30: past both sends (12:01, 12:02) and the sweeper's delay, inside the window
			if n := e.step(); n != 2 {
				t.Fatalf("fired %d, want 2", n)
			}
			if got := e.sentTo(ann); got["r0@example.com"] != 1 || got["r1@example.com"] != 1 || e.campaignSchedules() != 0 {
				t.Fatalf("sent %v, %d schedules left", got, e.campaignSchedules())
			}
		})
	}
}

// TestRemovedDevSenderSendsNothing: make dev checks a campaign's owner
// before each send, as the send function does in AWS: restarted without
// the owner in -campaign-senders, the server sends none of the campaign's
// remaining emails and the campaign ends Cancelled, senderRemoved.
func TestRemovedDevSenderSendsNothing(t *testing.T) {
	dir := t.TempDir()
	fake := clock.NewFake(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	e := startWith(t, fake, Config{DataDir: dir, CampaignSenders: []string{"ann@example.com"}})
	ann := e.user("ann@example.com")
	id := e.createCampaign(ann, "r0@example.com", "r1@example.com")
	fake.Advance(90 * time.Second) // 12:01:30: r0's minute
	if n := e.step(); n != 1 {
		t.Fatalf("fired %d at 12:01:30, want 1", n)
	}
	e.stop()

	e = startWith(t, fake, Config{DataDir: dir}) // ann is no sender any more
	fake.Advance(time.Minute)                    // 12:02:30: r1's minute
	e.step()
	e.srv.campaigns.wg.Wait() // the provisioning runs and sends started so far
	c, err := e.srv.db.campaigns.Campaign(context.Background(), id)
	if err != nil || !campaign.SenderRemoved(c) {
		t.Fatalf("campaign %+v, %v: want Cancelled, senderRemoved", c, err)
	}
	task, _ := e.srv.db.campaigns.Get(context.Background(), campaign.Key{CampaignID: id, TaskID: campaign.TaskID(id, 1)})
	if task.State != campaign.Cancelled {
		t.Errorf("r1's task %s, want Cancelled", task.State)
	}
	if got := e.sentTo(e.signIn("ann@example.com")); len(got) != 1 || got["r0@example.com"] != 1 {
		t.Errorf("sent %v, want r0 once and nothing more", got)
	}
}
