package devserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
)

// A campaign email in /outbox.json carries the List-Unsubscribe headers
// as SES would send them (unsubscribe.Headers of the link in its body);
// a task email carries none.
func TestOutboxShowsTheUnsubscribeHeaders(t *testing.T) {
	e := campaignEnv(t, "ann@example.com")
	ann := e.user("ann@example.com")
	e.createCampaign(ann, "r0@example.com")
	e.clock.Advance(90 * time.Second)
	e.step()
	mail := e.emails(ann, EmailKindCampaign, "")
	if len(mail) != 1 {
		t.Fatalf("%d campaign emails, want 1", len(mail))
	}
	link := unsubscribeLink.FindString(mail[0].Body)
	var want []Header
	for _, h := range unsubscribe.Headers(e.srv.cfg.PublicURL + link) {
		want = append(want, Header{Name: h[0], Value: h[1]})
	}
	if link == "" || fmt.Sprint(mail[0].Headers) != fmt.Sprint(want) {
		t.Fatalf("headers %v, want %v", mail[0].Headers, want)
	}
	if got := e.do("GET", "/outbox.json", ann, nil).raw; !strings.Contains(got, `"headers":[{"name":"List-Unsubscribe","value":"\u003c`) ||
		!strings.Contains(got, `{"name":"List-Unsubscribe-Post","value":"List-Unsubscribe=One-Click"}`) {
		t.Fatalf("outbox.json %s: want the two headers by name", got)
	}
	e.create(ann, "a task", 5*time.Second)
	e.clock.Advance(6 * time.Second)
	e.step()
	if got := e.emails(ann, KindTaskExpired, ""); len(got) != 1 || got[0].Headers != nil {
		t.Fatalf("task email %+v: want one, without headers", got)
	}
}

// The owner of a campaign email makes it bounce (or draws a complaint)
// through the bounce function's own handler: the recipient is on the
// suppression list with that reason, and the next campaign's send to
// them ends Suppressed with no email. Only the owner's campaign emails
// can; anything else is refused.
func TestOutboxBounceSuppressesTheNextSend(t *testing.T) {
	e := campaignEnv(t, "ann@example.com", "bob@example.com")
	ann, bob := e.user("ann@example.com"), e.user("bob@example.com")
	e.createCampaign(ann, "r0@example.com", "r1@example.com")
	e.stepAt(time.Date(2030, 1, 1, 12, 1, 30, 0, time.UTC), time.Date(2030, 1, 1, 12, 2, 30, 0, time.UTC)) // each send in its minute
	seqOf := map[string]uint64{}
	for _, m := range e.emails(ann, EmailKindCampaign, "") {
		seqOf[m.To[0]] = m.Seq
	}
	if len(seqOf) != 2 {
		t.Fatalf("sent %v, want r0 and r1", seqOf)
	}
	e.create(ann, "a task", 5*time.Second)
	e.stepAt(e.clock.Now().Add(6 * time.Second))
	taskMail := e.emails(ann, KindTaskExpired, "")[0].Seq
	for _, tc := range []struct {
		name, token, path string
		status            int
	}{
		{"no token", "", fmt.Sprintf("/outbox/%d/bounce", seqOf["r0@example.com"]), 401},
		{"another sender's email", bob, fmt.Sprintf("/outbox/%d/bounce", seqOf["r0@example.com"]), 404},
		{"no such email", ann, "/outbox/999/bounce", 404},
		{"not a campaign email", ann, fmt.Sprintf("/outbox/%d/bounce", taskMail), 400},
		{"not a feedback", ann, fmt.Sprintf("/outbox/%d/delivery", seqOf["r0@example.com"]), 404},
		{"a bounce", ann, fmt.Sprintf("/outbox/%d/bounce", seqOf["r0@example.com"]), 200},
		{"a repeated bounce (SES delivers at least once)", ann, fmt.Sprintf("/outbox/%d/bounce", seqOf["r0@example.com"]), 200},
		{"a complaint", ann, fmt.Sprintf("/outbox/%d/complaint", seqOf["r1@example.com"]), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := tc.token
			if tok != "" {
				tok = "Bearer " + tok
			}
			if r := e.do("POST", tc.path, tok, nil); r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.raw, tc.status)
			}
		})
	}
	for addr, reason := range map[string]suppress.Reason{"r0@example.com": suppress.Bounce, "r1@example.com": suppress.Complaint} {
		entry, ok, err := e.srv.db.suppressions.Get(context.Background(), addr)
		if err != nil || !ok || entry.Reason != reason {
			t.Errorf("%s: entry %+v %v %v, want %s", addr, entry, ok, err, reason)
		}
	}
	// The next campaign (starting the next day, at 12:01 UTC) sends to
	// neither.
	id := e.createCampaignOn(ann, "2030-01-02", "r0@example.com", "r1@example.com", "r2@example.com")
	e.stepAt(time.Date(2030, 1, 2, 12, 1, 30, 0, time.UTC), time.Date(2030, 1, 2, 12, 2, 30, 0, time.UTC), time.Date(2030, 1, 2, 12, 3, 30, 0, time.UTC))
	ann = e.signIn("ann@example.com") // a day on: the token expired
	r := e.do("GET", "/campaigns/"+id, "Bearer "+ann, nil)
	counts, _ := r.body["counts"].(map[string]any)
	if r.status != http.StatusOK || counts["Suppressed"] != 2.0 || counts["Finished"] != 1.0 {
		t.Fatalf("the next campaign: %d %s, want 2 Suppressed, 1 Finished", r.status, r.raw)
	}
	if got := e.sentTo(ann); got["r0@example.com"] != 1 || got["r1@example.com"] != 1 || got["r2@example.com"] != 1 {
		t.Errorf("sent %v: want r0 and r1 once (before the bounce), r2 once", got)
	}
}

// stepAt sets the clock to each time and runs a server step there.
func (e *env) stepAt(times ...time.Time) {
	e.t.Helper()
	for _, at := range times {
		e.clock.Set(at)
		e.step()
	}
}
