package devserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/identity"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/ops"
	"github.com/unschedule/unschedule/internal/todo/notify"
)

type env struct {
	t     *testing.T
	dir   string
	clock *clock.Fake
	srv   *Server
	http  *httptest.Server
	logs  *bytes.Buffer
}

func start(t *testing.T, dir string, clock *clock.Fake, domains ...string) *env {
	t.Helper()
	return startWith(t, clock, Config{DataDir: dir, AllowedEmailDomains: domains})
}

// startWith opens a server of cfg on clock, logging to env.logs.
func startWith(t *testing.T, clock *clock.Fake, cfg Config) *env {
	t.Helper()
	dir := cfg.DataDir
	logs := &bytes.Buffer{}
	cfg.Now, cfg.Log = clock.Now, slog.New(slog.NewJSONHandler(&lockedWriter{w: logs}, nil))
	srv, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: dir, clock: clock, srv: srv, http: httptest.NewServer(srv.Handler()), logs: logs}
	t.Cleanup(e.stop)
	return e
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// stop closes the server and its store (idempotent).
func (e *env) stop() {
	if e.srv == nil {
		return
	}
	e.http.Close()
	if err := e.srv.Close(); err != nil {
		e.t.Error(err)
	}
	e.srv = nil
}

func newEnv(t *testing.T, domains ...string) *env {
	return start(t, t.TempDir(), clock.NewFake(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)), domains...)
}

type reply struct {
	header http.Header
	status int
	body   map[string]any
	raw    string
}

func (e *env) do(method, path, token string, body any) reply {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.http.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{header: resp.Header, status: resp.StatusCode, raw: string(raw)}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

// user signs up and signs in, and returns the ID token.
func (e *env) user(email string) string {
	e.t.Helper()
	if r := e.do("POST", "/local-auth/signup", "", map[string]string{"email": email, "password": "Password-one1"}); r.status != http.StatusCreated {
		e.t.Fatalf("sign-up: %d %s", r.status, r.raw)
	}
	return e.signIn(email)
}

// signIn signs the user in and returns the ID token.
func (e *env) signIn(email string) string {
	e.t.Helper()
	r := e.do("POST", "/local-auth/signin", "", map[string]string{"email": email, "password": "Password-one1"})
	tok, _ := r.body["idToken"].(string)
	if r.status != http.StatusOK || tok == "" {
		e.t.Fatalf("sign-in: %d %s", r.status, r.raw)
	}
	return tok
}

func (e *env) create(tok, title string, in time.Duration) string {
	e.t.Helper()
	r := e.do("POST", "/tasks", tok, map[string]string{"title": title,
		"dueAt": e.clock.Now().Add(in).UTC().Format(time.RFC3339)})
	id, _ := r.body["id"].(string)
	if r.status != http.StatusCreated || id == "" {
		e.t.Fatalf("create: %d %s", r.status, r.raw)
	}
	return id
}

func (e *env) status(tok, id string) string {
	e.t.Helper()
	r := e.do("GET", "/tasks/"+id, tok, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("get %s: %d %s", id, r.status, r.raw)
	}
	return r.body["status"].(string)
}

// tick advances the wall clock by d and runs the pipeline to rest.
func (e *env) tick(d time.Duration) {
	e.t.Helper()
	e.clock.Advance(d)
	if _, err := e.srv.Tick(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// emails are the outbox emails of kind (and of taskID, when set) that the
// token's user sees.
func (e *env) emails(tok, kind, taskID string) []Email {
	e.t.Helper()
	var out struct {
		Emails []Email `json:"emails"`
	}
	r := e.do("GET", "/outbox.json", tok, nil)
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
		e.t.Fatalf("outbox.json %q: %v", r.raw, err)
	}
	var sel []Email
	for _, m := range out.Emails {
		if m.Kind == kind && (taskID == "" || m.TaskID == taskID) {
			sel = append(sel, m)
		}
	}
	return sel
}

// schedules are the live schedules the token's user sees.
func (e *env) schedules(tok string) []scheduleJSON {
	e.t.Helper()
	var out struct {
		Schedules []scheduleJSON `json:"schedules"`
	}
	r := e.do("GET", "/debug/schedules.json", tok, nil)
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
		e.t.Fatalf("schedules.json %q: %v", r.raw, err)
	}
	return out.Schedules
}

func TestAPIRefusesBadTokens(t *testing.T) {
	e := newEnv(t)
	tok := e.user("ada@example.com")
	id := e.create(tok, "mine", time.Hour)
	parts := strings.Split(tok, ".")
	tampered := parts[0] + "." + b64.EncodeToString([]byte(`{"sub":"someone-else","iss":"unschedule-dev","token_use":"id","exp":1999999999}`)) + "." + parts[2]
	now := e.clock.Now()
	other, _ := NewSigner(keyB, time.Hour, func() time.Time { return now })
	otherTok, _ := other.Sign(Claims{Sub: "sub-x", Email: "x@example.com"})
	for _, tc := range []struct {
		name, method, path, token string
	}{
		{"no token, list", "GET", "/tasks", ""},
		{"no token, create", "POST", "/tasks", ""},
		{"garbage", "GET", "/tasks", "not-a-token"},
		{"tampered claims", "GET", "/tasks", tampered},
		{"other key", "GET", "/tasks/" + id, otherTok},
		{"bearer of tampered", "DELETE", "/tasks/" + id, "Bearer " + tampered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, tc.token, map[string]string{"title": "x", "dueAt": "2031-01-01T00:00:00Z"})
			if r.status != http.StatusUnauthorized || r.body["error"] != "unauthorized" || r.body["message"] == "" {
				t.Fatalf("%d %s, want 401 JSON with error and message", r.status, r.raw)
			}
		})
	}
	t.Run("the task is untouched", func(t *testing.T) {
		if got := e.status(tok, id); got != "Pending" {
			t.Fatalf("status %s", got)
		}
	})
	t.Run("expired token", func(t *testing.T) {
		e.clock.Advance(12*time.Hour + time.Second) // the default lifetime
		if r := e.do("GET", "/tasks", tok, nil); r.status != http.StatusUnauthorized {
			t.Fatalf("%d %s, want 401", r.status, r.raw)
		}
	})
}

// TestUserComesFromToken: each user sees only their own tasks, whatever
// the body says.
func TestUserComesFromToken(t *testing.T) {
	e := newEnv(t)
	ada, bob := e.user("ada@example.com"), e.user("bob@example.com")
	id := e.create(ada, "ada's", time.Hour)
	for _, tc := range []struct {
		name, method, path, token string
		body                      any
		want                      int
	}{
		{"owner reads", "GET", "/tasks/" + id, ada, nil, http.StatusOK},
		{"other user reads", "GET", "/tasks/" + id, bob, nil, http.StatusNotFound},
		{"other user completes", "PATCH", "/tasks/" + id, bob, map[string]string{"status": "done"}, http.StatusNotFound},
		{"other user deletes", "DELETE", "/tasks/" + id, bob, nil, http.StatusNotFound},
		{"a userId in the body is refused", "POST", "/tasks", bob, map[string]string{"title": "x", "userId": "ada", "dueAt": "2031-01-01T00:00:00Z"}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := e.do(tc.method, tc.path, tc.token, tc.body); r.status != tc.want {
				t.Fatalf("%d %s, want %d", r.status, r.raw, tc.want)
			}
		})
	}
	t.Run("other user's list is empty", func(t *testing.T) {
		r := e.do("GET", "/tasks", bob, nil)
		if tasks, _ := r.body["tasks"].([]any); r.status != http.StatusOK || len(tasks) != 0 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
	})
}

func TestSignUpAndSignIn(t *testing.T) {
	e := newEnv(t, "example.com")
	type creds = map[string]string
	for _, tc := range []struct {
		name     string
		path     string
		body     any
		want     int
		wantCode string
		wantMsg  string
	}{
		{"sign up", "/local-auth/signup", creds{"email": "ada@example.com", "password": "Password-one1"}, 201, "", ""},
		{"same email, other case", "/local-auth/signup", creds{"email": "ADA@example.com", "password": "Password-two2"}, 409, "user_exists", ""},
		{"domain not allowed (PreSignUp rule)", "/local-auth/signup", creds{"email": "eve@example.org", "password": "Password-one1"}, 400, "signup_refused", identity.ErrSignUpRestricted.Error()},
		{"no email (PreSignUp rule)", "/local-auth/signup", creds{"email": " ", "password": "Password-one1"}, 400, "signup_refused", identity.ErrNoEmail.Error()},
		{"not an email", "/local-auth/signup", creds{"email": "ada@example.com@", "password": "Password-one1"}, 400, "", ""},
		{"short password", "/local-auth/signup", creds{"email": "bob@example.com", "password": "short"}, 400, "invalid_password", ""},
		{"the word password (Cognito's policy)", "/local-auth/signup", creds{"email": "bob@example.com", "password": "password"}, 400, "invalid_password",
			"The password needs at least 12 characters, an uppercase letter (A-Z), a digit (0-9), a symbol such as ! ? # or a space."},
		{"unknown field", "/local-auth/signup", map[string]any{"email": "bob@example.com", "password": "Password-one1", "admin": true}, 400, "bad_request", ""},
		{"not JSON", "/local-auth/signup", "[", 400, "bad_request", ""},
		{"wrong password", "/local-auth/signin", creds{"email": "ada@example.com", "password": "Password-two2"}, 401, "not_authorized", "Incorrect email or password."},
		{"unknown user", "/local-auth/signin", creds{"email": "zed@example.com", "password": "Password-one1"}, 401, "not_authorized", "Incorrect email or password."},
		{"sign in", "/local-auth/signin", creds{"email": "Ada@Example.com", "password": "Password-one1"}, 200, "", ""},
		{"sign in again", "/local-auth/signin", creds{"email": "ada@example.com", "password": "Password-one1"}, 200, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", tc.path, "", tc.body)
			if r.status != tc.want {
				t.Fatalf("%d %s, want %d", r.status, r.raw, tc.want)
			}
			if tc.want >= 400 && (r.body["error"] == nil || r.body["message"] == "" ||
				(tc.wantCode != "" && r.body["error"] != tc.wantCode) || (tc.wantMsg != "" && r.body["message"] != tc.wantMsg)) {
				t.Fatalf("error body %s, want code %q message %q", r.raw, tc.wantCode, tc.wantMsg)
			}
			if tc.want == 200 {
				if _, err := e.srv.signer.Verify(r.body["idToken"].(string)); err != nil {
					t.Fatalf("token does not verify: %v", err)
				}
			}
		})
	}
	t.Run("PostAuthentication made one subscription and one confirmation email", func(t *testing.T) {
		subs := e.srv.db.sns.Subscriptions("ada@example.com")
		u, err := e.srv.db.User("ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if len(subs) != 1 || subs[0].TopicArn != notify.TopicFor(LocalTopics(localShards), u.Sub) ||
			!notify.SamePolicy(subs[0].Attributes["FilterPolicy"], notify.FilterPolicy(u.Sub)) || !subs[0].Confirmed {
			t.Fatalf("subscriptions %+v", subs)
		}
		tok := e.signIn("ada@example.com")
		if got := e.emails(tok, KindConfirmation, ""); len(got) != 1 || got[0].To[0] != "ada@example.com" {
			t.Fatalf("confirmation emails %+v", got)
		}
	})
	t.Run("logs hold no password", func(t *testing.T) {
		if strings.Contains(e.logs.String(), "Password-one1") {
			t.Fatal("a password reached the logs")
		}
	})
}

// TestPipeline drives the three browser scenarios through HTTP with a
// fake wall clock.
func TestPipeline(t *testing.T) {
	for _, tc := range []struct {
		name       string
		act        func(t *testing.T, e *env, tok, id string)
		after      time.Duration
		wantStatus string
		wantEmails int
	}{
		{"expires at its deadline, one email", func(*testing.T, *env, string, string) {}, 6 * time.Second, "Expired", 1},
		{"completed before its deadline stays Done", func(t *testing.T, e *env, tok, id string) {
			if r := e.do("PATCH", "/tasks/"+id, tok, map[string]string{"status": "done"}); r.status != 200 {
				t.Fatalf("complete: %d %s", r.status, r.raw)
			}
		}, 6 * time.Second, "Done", 0},
		{"deadline moved later: not expired at the old time", func(t *testing.T, e *env, tok, id string) {
			due := e.clock.Now().Add(time.Minute).Format(time.RFC3339)
			if r := e.do("PATCH", "/tasks/"+id, tok, map[string]string{"dueAt": due}); r.status != 200 {
				t.Fatalf("move: %d %s", r.status, r.raw)
			}
		}, 30 * time.Second, "Pending", 0},
		{"deadline moved later: expired at the new time", func(t *testing.T, e *env, tok, id string) {
			due := e.clock.Now().Add(time.Minute).Format(time.RFC3339)
			if r := e.do("PATCH", "/tasks/"+id, tok, map[string]string{"dueAt": due}); r.status != 200 {
				t.Fatalf("move: %d %s", r.status, r.raw)
			}
		}, 61 * time.Second, "Expired", 1},
		{"deleted: no email, no schedule", func(t *testing.T, e *env, tok, id string) {
			if r := e.do("DELETE", "/tasks/"+id, tok, nil); r.status != 204 {
				t.Fatalf("delete: %d %s", r.status, r.raw)
			}
		}, 6 * time.Second, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tok := e.user("ada@example.com")
			id := e.create(tok, "water the plants", 5*time.Second)
			if got := e.schedules(tok); len(got) != 1 || got[0].TaskID != id {
				t.Fatalf("schedules after create %+v", got)
			}
			tc.act(t, e, tok, id)
			e.tick(time.Second)
			e.tick(tc.after - time.Second)
			e.tick(time.Second)
			if tc.wantStatus != "" {
				if got := e.status(tok, id); got != tc.wantStatus {
					t.Fatalf("status %s, want %s", got, tc.wantStatus)
				}
			}
			emails := e.emails(tok, KindTaskExpired, id)
			if len(emails) != tc.wantEmails {
				t.Fatalf("%d expiry emails %+v, want %d", len(emails), emails, tc.wantEmails)
			}
			if len(emails) == 1 && (len(emails[0].To) != 1 || emails[0].To[0] != "ada@example.com" ||
				emails[0].Subject != "Task expired: water the plants") {
				t.Fatalf("email %+v", emails[0])
			}
			if tc.wantStatus != "Pending" && len(e.schedules(tok)) != 0 {
				t.Fatalf("schedules left: %+v", e.schedules(tok))
			}
		})
	}
}

// TestRestartKeepsState writes, stops the server, starts another on the
// same folder and reads everything back; the schedule still fires.
func TestRestartKeepsState(t *testing.T) {
	dir := t.TempDir()
	clock := clock.NewFake(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	e := start(t, dir, clock)
	tok := e.user("ada@example.com")
	expired := e.create(tok, "expires first", 5*time.Second)
	pending := e.create(tok, "expires after the restart", time.Minute)
	done := e.create(tok, "done", time.Minute)
	if r := e.do("PATCH", "/tasks/"+done, tok, map[string]string{"status": "done"}); r.status != 200 {
		t.Fatalf("complete: %d %s", r.status, r.raw)
	}
	e.tick(6 * time.Second)
	e.stop()

	e = start(t, dir, clock)
	for _, tc := range []struct{ id, want string }{{expired, "Expired"}, {pending, "Pending"}, {done, "Done"}} {
		t.Run("after restart "+tc.want, func(t *testing.T) {
			// The same token still works: the signing key is kept too.
			if got := e.status(tok, tc.id); got != tc.want {
				t.Fatalf("status %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("schedule and outbox kept", func(t *testing.T) {
		if got := e.schedules(tok); len(got) != 1 || got[0].TaskID != pending {
			t.Fatalf("schedules %+v", got)
		}
		if got := e.emails(tok, KindTaskExpired, expired); len(got) != 1 {
			t.Fatalf("emails %+v", got)
		}
	})
	t.Run("the kept schedule fires", func(t *testing.T) {
		e.tick(time.Minute)
		if got := e.status(tok, pending); got != "Expired" {
			t.Fatalf("status %s", got)
		}
		if got := e.emails(tok, KindTaskExpired, ""); len(got) != 2 {
			t.Fatalf("emails %+v", got)
		}
	})
	t.Run("sign-in still works", func(t *testing.T) {
		r := e.do("POST", "/local-auth/signin", "", map[string]string{"email": "ada@example.com", "password": "Password-one1"})
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
	})
}

// TestReconcilerRepairs: a schedule lost while the server was down is
// made again by the reconciler, which the server runs at start, whatever
// the timer.
func TestReconcilerRepairs(t *testing.T) {
	for _, l := range timerkind.Names() {
		t.Run(string(l), func(t *testing.T) {
			e := startWith(t, clock.NewFake(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)), Config{DataDir: t.TempDir(), Timer: l})
			tok := e.user("ada@example.com")
			id := e.create(tok, "x", time.Minute)
			for _, sc := range e.srv.pipe.Timer.All() {
				if err := e.srv.pipe.Timer.Disarm(context.Background(), sc.Name, sc.At); err != nil {
					t.Fatal(err)
				}
			}
			if got := e.schedules(tok); len(got) != 0 {
				t.Fatalf("schedules after the loss %+v", got)
			}
			if err := e.srv.Reconcile(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := e.schedules(tok); len(got) != 1 || got[0].TaskID != id {
				t.Fatalf("schedules %+v", got)
			}
		})
	}
}

// TestOperatorRepairIsSaved: a repair through the operator's routes is
// saved at once, not only at the next step or at close; a read saves
// nothing.
func TestOperatorRepairIsSaved(t *testing.T) {
	e := newEnv(t)
	tok := e.user("ada@example.com")
	e.create(tok, "x", time.Minute)
	sc := e.srv.pipe.Timer.All()[0]
	if err := e.srv.pipe.Timer.Disarm(context.Background(), sc.Name, sc.At); err != nil {
		t.Fatal(err)
	}
	e.tick(0)
	saved := func() string {
		b, err := os.ReadFile(filepath.Join(e.dir, StateFile))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return string(doc["schedules"])
	}
	for _, tc := range []struct {
		method, route string
		want          bool // the schedule is saved afterwards
	}{
		{"GET", "drift", false},
		{"POST", "repair", true},
	} {
		if r := e.do(tc.method, ops.Prefix+tc.route+"?table="+OpsTable, "", nil); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.route, r.status, r.raw)
		}
		if got := strings.Contains(saved(), sc.Name); got != tc.want {
			t.Errorf("after %s, schedule saved %v, want %v", tc.route, got, tc.want)
		}
	}
}

func TestPages(t *testing.T) {
	e := newEnv(t)
	tok := e.user("ada@example.com")
	e.create(tok, "<script>alert(1)</script>", 5*time.Second)
	e.tick(6 * time.Second)
	for _, tc := range []struct {
		name, path, token, ctype string
		status                   int
		want                     []string
		not                      []string
	}{
		{"config", "/config.json", "", "application/json", 200, []string{`"mode":"local"`, `"apiUrl":""`}, nil},
		{"outbox page: a shell that holds no mail", "/outbox", "", "text/html; charset=utf-8", 200,
			[]string{`data-testid="outbox-signin"`, `<script src="/outbox.js">`, `href="/outbox.css"`, "/outbox.json"},
			[]string{"ada@example.com", "alert(1)"}},
		{"outbox script: the tab's session, mail as text", "/outbox.js", "", "text/javascript; charset=utf-8", 200,
			[]string{"unschedule.localSession", "/outbox.json", "textContent"},
			[]string{"ada@example.com", "alert(1)", "innerHTML"}},
		{"outbox JSON", "/outbox.json", tok, "application/json", 200,
			[]string{`"kind":"task-expired"`, `"subject":"Task expired: \u003cscript\u003ealert(1)\u003c/script\u003e"`}, []string{"<script>"}},
		{"schedules", "/debug/schedules.json", tok, "application/json", 200, []string{`{"schedules":[]}`}, nil},
		{"no web app", "/index.html", "", "application/json", 404, []string{`"error":"not_found"`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", tc.path, tc.token, nil)
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.raw, tc.status)
			}
			if ct := r.header.Get("Content-Type"); ct != tc.ctype {
				t.Fatalf("content type %q, want %q", ct, tc.ctype)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.raw, w) {
					t.Fatalf("%s lacks %q:\n%s", tc.path, w, r.raw)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(r.raw, n) {
					t.Fatalf("%s holds %q", tc.path, n)
				}
			}
		})
	}
}

// TestOutboxAndSchedulesNeedSignIn: the outbox and the schedule listing
// refuse a caller without a valid token, and show each user only their own
// mail and schedules.
func TestOutboxAndSchedulesNeedSignIn(t *testing.T) {
	e := newEnv(t)
	ada := e.user("ada@example.com")
	e.clock.Advance(time.Second) // local subscription ARNs are made from the clock
	bob := e.user("bob@example.com")
	adaExpired := e.create(ada, "ada expires", 5*time.Second)
	adaPending := e.create(ada, "ada pending", time.Hour)
	bobExpired := e.create(bob, "bob expires", 5*time.Second)
	bobPending := e.create(bob, "bob pending", time.Hour)
	e.tick(6 * time.Second)
	now := e.clock.Now()
	foreign, _ := NewSigner(keyB, time.Hour, func() time.Time { return now })
	foreignTok, _ := foreign.Sign(Claims{Sub: "sub-x", Email: "ada@example.com"})
	for _, path := range []string{"/outbox.json", "/debug/schedules.json"} {
		for _, tc := range []struct{ name, token string }{
			{"no token", ""},
			{"garbage", "not-a-token"},
			{"signed with another key", foreignTok},
		} {
			t.Run(path+" "+tc.name, func(t *testing.T) {
				r := e.do("GET", path, tc.token, nil)
				if r.status != http.StatusUnauthorized || r.body["error"] != "unauthorized" || strings.Contains(r.raw, "@example.com") {
					t.Fatalf("%d %s, want 401 JSON with no mail", r.status, r.raw)
				}
			})
		}
	}
	for _, tc := range []struct {
		name, tok, email   string
		expired, pending   string
		otherEx, otherPend string
	}{
		{"ada", ada, "ada@example.com", adaExpired, adaPending, bobExpired, bobPending},
		{"bob", bob, "bob@example.com", bobExpired, bobPending, adaExpired, adaPending},
	} {
		t.Run(tc.name+" sees only their own mail", func(t *testing.T) {
			all := append(e.emails(tc.tok, KindConfirmation, ""), e.emails(tc.tok, KindTaskExpired, "")...)
			if len(all) != 2 {
				t.Fatalf("%d emails %+v, want their confirmation and their expiry", len(all), all)
			}
			for _, m := range all {
				if len(m.To) != 1 || m.To[0] != tc.email {
					t.Fatalf("email to %v shown to %s", m.To, tc.email)
				}
			}
			if got := e.emails(tc.tok, KindTaskExpired, tc.expired); len(got) != 1 {
				t.Fatalf("own expiry email missing: %+v", all)
			}
			if got := e.emails(tc.tok, KindTaskExpired, tc.otherEx); len(got) != 0 {
				t.Fatalf("the other user's expiry email is shown: %+v", got)
			}
		})
		t.Run(tc.name+" sees only their own schedules", func(t *testing.T) {
			if got := e.schedules(tc.tok); len(got) != 1 || got[0].TaskID != tc.pending {
				t.Fatalf("schedules %+v, want only %s", got, tc.pending)
			}
		})
	}
}

// TestHostHeader: only loopback names and addresses (any port), and the
// configured extra hosts, are answered; any other Host (DNS rebinding) is
// a 421 JSON refusal, whatever the path.
func TestHostHeader(t *testing.T) {
	srv, err := Open(Config{DataDir: t.TempDir(), AllowedHosts: []string{"192.168.1.20", "devbox.lan"},
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	h := srv.Handler()
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:8080", 200},
		{"127.0.0.1", 200},
		{"localhost:8080", 200},
		{"LocalHost:1", 200},
		{"[::1]:8080", 200},
		{"127.0.0.2:9000", 200},
		{"192.168.1.20:8080", 200},
		{"DEVBOX.lan:8080", 200},
		{"evil.example:8080", 421},
		{"evil.example", 421},
		{"localhost.evil.example:8080", 421},
		{"127.0.0.1.nip.io:8080", 421},
		{"192.168.1.21:8080", 421},
		{"[::2]:8080", 421},
		{"", 421},
	} {
		for _, path := range []string{"/config.json", "/outbox.json", "/tasks"} {
			t.Run(tc.host+path, func(t *testing.T) {
				req := httptest.NewRequest("GET", path, nil)
				req.Host = tc.host
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				got := rec.Code
				if tc.want == 200 && got != 421 {
					return // answered (200, or 401 for the paths that need a token)
				}
				var body map[string]string
				_ = json.Unmarshal(rec.Body.Bytes(), &body)
				if got != tc.want || body["error"] != "misdirected_request" || !strings.Contains(body["message"], "-allow-remote") {
					t.Fatalf("%d %s, want %d", got, rec.Body, tc.want)
				}
			})
		}
	}
}
