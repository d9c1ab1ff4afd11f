package devserver

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Every paged route of make dev (the task list, the campaign list, a
// campaign's sends) hands out opaque cursors and refuses, with a 400
// naming cursor, one it did not hand out to this caller for this query:
// a character changed, four cut off, never issued (what the store or the
// API used to show bare), another user's, another query's. The issued
// cursor still pages, after a restart too (the key is kept).
func TestEveryPagedRouteRefusesCursorsItDidNotHandOut(t *testing.T) {
	e := campaignEnv(t, "@example.com")
	ann, bob := e.user("ann@example.com"), e.user("bob@example.com")
	for range 3 {
		e.create("Bearer "+ann, "a task", time.Hour)
		e.create("Bearer "+bob, "a task", time.Hour)
	}
	body := map[string]any{"subject": "Hello", "body": "Hi", "recipients": []map[string]string{{"email": "r0@example.com"}, {"email": "r1@example.com"}, {"email": "r2@example.com"}},
		"schedule": map[string]any{"windows": []string{"12:01-12:04"}, "timeZone": "UTC", "startDate": "2030-01-01"}}
	ids := map[string]string{}
	for _, who := range []string{"ann1", "ann2", "bob"} {
		tok := map[bool]string{true: ann, false: bob}[strings.HasPrefix(who, "ann")]
		r := e.do("POST", "/campaigns", "Bearer "+tok, body)
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.raw)
		}
		ids[who], _ = r.body["id"].(string)
	}
	routes := []struct{ name, path, filter string }{
		{"tasks", "/tasks", ""}, {"campaigns", "/campaigns", ""}, {"sends", "/campaigns/" + ids["ann1"], ids["ann1"]},
	}
	issued := map[string]string{}
	for _, r := range routes {
		got := e.do("GET", r.path+"?limit=1", "Bearer "+ann, nil)
		c, _ := got.body["cursor"].(string)
		if got.status != 200 || c == "" {
			t.Fatalf("%s: %d %s, want a cursor", r.path, got.status, got.raw)
		}
		if r.filter != "" && strings.Contains(c, r.filter) {
			t.Fatalf("%s: cursor %q shows the campaign", r.path, c)
		}
		issued[r.name] = c
	}
	other := e.do("GET", "/campaigns/"+ids["ann2"]+"?limit=1", "Bearer "+ann, nil).body["cursor"].(string)
	changed := func(c string) string {
		mid := len(c) / 2
		return c[:mid] + map[bool]string{true: "B", false: "A"}[c[mid] == 'A'] + c[mid+1:]
	}
	bare := base64.RawURLEncoding.EncodeToString([]byte("ann@example.com\x002030-01-01T12:00:00Z\x00" + ids["ann1"]))
	for _, r := range routes {
		good := issued[r.name]
		anotherQuery := issued[map[string]string{"tasks": "campaigns", "campaigns": "sends", "sends": "tasks"}[r.name]]
		if r.name == "sends" {
			anotherQuery = other // another campaign's sends
		}
		for _, tc := range []struct{ name, token, path, cursor string }{
			{"a character changed", ann, r.path, changed(good)},
			{"cut short by four", ann, r.path, good[:len(good)-4]},
			{"never issued: a bare offset", ann, r.path, "3"},
			{"never issued: a bare store key", ann, r.path, bare},
			{"another user's", bob, map[bool]string{true: "/campaigns/" + ids["bob"], false: r.path}[r.name == "sends"], good},
			{"another query's", ann, r.path, anotherQuery},
		} {
			t.Run(r.name+": "+tc.name, func(t *testing.T) {
				got := e.do("GET", tc.path+"?cursor="+url.QueryEscape(tc.cursor), "Bearer "+tc.token, nil)
				if msg, _ := got.body["message"].(string); got.status != http.StatusBadRequest || !strings.HasPrefix(msg, "cursor ") {
					t.Fatalf("%d %s, want a 400 naming cursor", got.status, got.raw)
				}
			})
		}
	}
	e.stop()
	e = startWith(t, e.clock, Config{DataDir: e.dir, CampaignSenders: []string{"@example.com"}})
	for _, r := range routes {
		t.Run(r.name+": the issued cursor pages after a restart", func(t *testing.T) {
			got := e.do("GET", r.path+"?limit=1&cursor="+url.QueryEscape(issued[r.name]), "Bearer "+ann, nil)
			if got.status != 200 {
				t.Fatalf("%d %s", got.status, got.raw)
			}
		})
	}
}
