package devserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/api"
	"github.com/unschedule/unschedule/internal/boltstore"
	"github.com/unschedule/unschedule/internal/notify"
	"github.com/unschedule/unschedule/internal/task"
)

// PostAuthBudget bounds the PostAuthentication work of one sign-in, as
// the trigger's own budget does (Cognito waits 5 s for a trigger).
const PostAuthBudget = 3 * time.Second

// maxAuthBody bounds a sign-up or sign-in body.
const maxAuthBody = 16 * 1024

// Handler serves the web app, /config.json, the task API, the local
// sign-in, the outbox and the debug listing.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /config.json", s.serveConfig)
	mux.HandleFunc("POST /local-auth/signup", s.signUp)
	mux.HandleFunc("POST /local-auth/signin", s.signIn)
	mux.HandleFunc(api.RouteTasks, s.serveAPI(api.RouteTasks))
	mux.HandleFunc(api.RouteTask, s.serveAPI(api.RouteTask))
	mux.HandleFunc("GET /outbox", s.serveOutboxPage)
	mux.HandleFunc("GET /outbox.json", s.serveOutboxJSON)
	mux.HandleFunc("GET /debug/schedules.json", s.serveSchedules)
	if s.cfg.WebDir != "" {
		mux.Handle("/", http.FileServer(http.Dir(s.cfg.WebDir)))
	} else {
		mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, http.StatusNotFound, "not_found", "no such page: this server was started without a web app")
		})
	}
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal_error","message":"something went wrong"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"error": code, "message": msg})
}

// serveConfig is the web app's runtime config: local sign-in, API on the
// same origin.
func (s *Server) serveConfig(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"mode": "local", "apiUrl": ""})
}

// serveAPI checks the token as the Cognito authorizer does, then hands
// the request to the API handler with the token's sub as the user.
func (s *Server) serveAPI(route string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		claims, err := s.signer.Verify(BearerToken(r.Header.Get("Authorization")))
		if err != nil {
			s.log.InfoContext(r.Context(), "request refused: bad token", "path", r.URL.Path, "reason", err.Error())
			writeError(w, http.StatusUnauthorized, "unauthorized", "Unauthorized: sign in again (the token is missing, invalid or expired).")
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, task.MaxBodyBytes+1))
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", "the request body could not be read")
			return
		}
		query := map[string]string{}
		for k, v := range r.URL.Query() {
			query[k] = v[0]
		}
		resp := s.api.Serve(r.Context(), api.Request{Method: r.Method, Route: route, TaskID: r.PathValue("id"),
			UserID: claims.Sub, Query: query, Body: body, Origin: r.Header.Get("Origin")})
		for k, v := range resp.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(resp.Status)
		_, _ = w.Write(resp.Body)
		if r.Method != http.MethodGet && resp.Status < 300 {
			if err := s.persist(); err != nil {
				s.log.ErrorContext(r.Context(), "saving state failed", "error", err.Error())
			}
		}
	}
}

type credentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

func readCredentials(w http.ResponseWriter, r *http.Request) (credentials, bool) {
	var c credentials
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAuthBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", `send a JSON object {"email": "...", "password": "..."}`)
		return c, false
	}
	c.Email = strings.TrimSpace(c.Email)
	return c, true
}

// validEmail is a light shape check: something@something.something, no
// spaces, at most 254 characters.
func validEmail(e string) bool {
	at := strings.LastIndexByte(e, '@')
	return len(e) <= 254 && at > 0 && strings.Contains(e[at+1:], ".") && !strings.HasSuffix(e, ".") &&
		!strings.ContainsAny(e, " \t\r\n<>")
}

// signUp runs the PreSignUp rule (notify.SignUpPolicy, the code the
// presignup trigger runs), then stores the user, confirmed at once as the
// trigger makes Cognito do.
func (s *Server) signUp(w http.ResponseWriter, r *http.Request) {
	c, ok := readCredentials(w, r)
	if !ok {
		return
	}
	if err := s.policy.Check(c.Email); err != nil {
		// The policy's errors are written for the person signing up.
		writeError(w, http.StatusBadRequest, "signup_refused", err.Error())
		return
	}
	if !validEmail(c.Email) {
		writeError(w, http.StatusBadRequest, "invalid_parameter", "Enter a valid email address, such as ada@example.com.")
		return
	}
	if len(c.Password) < MinPasswordLen || len(c.Password) > 256 {
		writeError(w, http.StatusBadRequest, "invalid_password", "The password must be 8 to 256 characters long.")
		return
	}
	hash, err := HashPassword(c.Password)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	u := boltstore.User{Sub: newSub(), Email: c.Email, Password: hash, CreatedAt: s.cfg.Now().UTC()}
	if err := s.db.CreateUser(u); err != nil {
		if errors.Is(err, boltstore.ErrUserExists) {
			writeError(w, http.StatusConflict, "user_exists", "An account with this email already exists.")
			return
		}
		s.internal(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "user signed up", "sub", u.Sub, "emailDomain", notify.EmailDomain(u.Email))
	writeJSON(w, http.StatusCreated, map[string]any{"email": u.Email, "confirmed": true})
}

// dummyHash is checked against when the email is unknown, so a sign-in
// takes as long whether or not the account exists.
var dummyHash, _ = HashPassword("dummy password for timing")

// signIn checks the password, runs the PostAuthentication rule
// (notify.Subscriber.OnSignIn, the code the postauth trigger runs; it
// never fails a sign-in) and returns a signed ID token.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	c, ok := readCredentials(w, r)
	if !ok {
		return
	}
	u, err := s.db.User(c.Email)
	switch {
	case errors.Is(err, boltstore.ErrUserNotFound):
		CheckPassword(dummyHash, c.Password)
		writeError(w, http.StatusUnauthorized, "not_authorized", "Incorrect email or password.")
		return
	case err != nil:
		s.internal(w, r, err)
		return
	case !CheckPassword(u.Password, c.Password):
		writeError(w, http.StatusUnauthorized, "not_authorized", "Incorrect email or password.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), PostAuthBudget)
	s.subscriber.OnSignIn(ctx, u.Sub, u.Email)
	cancel()
	tok, err := s.signer.Sign(u.Sub, u.Email)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"idToken": tok, "expiresIn": int(s.cfg.TokenTTL.Seconds())})
}

// newSub returns a random UUID (version 4), the form of a Cognito sub.
func newSub() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	s.log.ErrorContext(r.Context(), "internal error", "path", r.URL.Path, "error", err.Error())
	writeError(w, http.StatusInternalServerError, "internal_error", "Something went wrong on our side, try again.")
}

// scheduleJSON is one live schedule in /debug/schedules.json.
type scheduleJSON struct {
	Name   string `json:"name"`
	At     string `json:"at"`
	TaskID string `json:"taskId"`
	UserID string `json:"userId"`
	DueAt  string `json:"dueAt"`
}

// serveSchedules lists the live schedules (every user's: it is a debug
// page of a local server).
func (s *Server) serveSchedules(w http.ResponseWriter, _ *http.Request) {
	out := []scheduleJSON{}
	for _, sc := range s.pipe.Scheduler.All() {
		out = append(out, scheduleJSON{Name: sc.Name, At: task.FormatTime(sc.At), TaskID: sc.Payload.TaskID,
			UserID: sc.Payload.UserID, DueAt: sc.Payload.DueAt})
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": out})
}

func (s *Server) outbox(w http.ResponseWriter, r *http.Request) ([]boltstore.Email, bool) {
	emails, err := s.db.Outbox()
	if err != nil {
		s.internal(w, r, err)
		return nil, false
	}
	if emails == nil {
		emails = []boltstore.Email{}
	}
	return emails, true
}

func (s *Server) serveOutboxJSON(w http.ResponseWriter, r *http.Request) {
	if emails, ok := s.outbox(w, r); ok {
		writeJSON(w, http.StatusOK, map[string]any{"emails": emails})
	}
}

var outboxPage = template.Must(template.New("outbox").Funcs(template.FuncMap{
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"join": func(s []string) string { return strings.Join(s, ", ") },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>Outbox - Unschedule dev server</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}table{border-collapse:collapse;width:100%}
th,td{border:1px solid #ccc;padding:.4rem;text-align:left;vertical-align:top}pre{white-space:pre-wrap;margin:0}</style>
</head><body>
<h1>Outbox</h1>
<p>Every email the app would have sent, newest first. Nothing leaves this machine. This page reloads every 5 seconds; <a href="/outbox.json">JSON</a>.</p>
{{if .}}<table><thead><tr><th>#</th><th>When</th><th>Kind</th><th>To</th><th>Subject</th><th>Body</th></tr></thead><tbody>
{{range .}}<tr data-testid="outbox-email" data-task-id="{{.TaskID}}"><td>{{.Seq}}</td><td>{{when .At}}</td><td>{{.Kind}}</td>
<td>{{if .To}}{{join .To}}{{else}}<em>nobody (no confirmed subscription)</em>{{end}}</td><td>{{.Subject}}</td><td><pre>{{.Body}}</pre></td></tr>
{{end}}</tbody></table>{{else}}<p data-testid="outbox-empty">No email yet.</p>{{end}}
</body></html>
`))

func (s *Server) serveOutboxPage(w http.ResponseWriter, r *http.Request) {
	emails, ok := s.outbox(w, r)
	if !ok {
		return
	}
	for i, j := 0, len(emails)-1; i < j; i, j = i+1, j-1 {
		emails[i], emails[j] = emails[j], emails[i]
	}
	var b bytes.Buffer
	if err := outboxPage.Execute(&b, emails); err != nil {
		s.internal(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}
