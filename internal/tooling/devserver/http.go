package devserver

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/core/httpapi"
	"github.com/unschedule/unschedule/internal/core/identity"
	"github.com/unschedule/unschedule/internal/todo/api"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/todo/webheaders"
)

// PostAuthBudget bounds the PostAuthentication work of one sign-in, as
// the trigger's own budget does (Cognito waits 5 s for a trigger).
const PostAuthBudget = 3 * time.Second

// maxAuthBody bounds a sign-up or sign-in body.
const maxAuthBody = 16 * 1024

// Handler serves the web app, /config.json, the task API, the local
// sign-in, the outbox and the debug listing, to requests whose Host is a
// loopback name or address or one of Config.AllowedHosts (others get 421).
// The outbox and the listing need the local sign-in and show the caller
// their own mail and schedules only. With Config.FakeClock it also serves
// the clock's endpoints (RouteClock, RouteClockAdvance).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /config.json", s.serveConfig)
	mux.HandleFunc("POST /local-auth/signup", s.signUp)
	mux.HandleFunc("POST /local-auth/signin", s.signIn)
	mux.HandleFunc("POST /local-auth/forgot-password", s.forgotPassword)
	mux.HandleFunc("POST /local-auth/reset-password", s.resetPassword)
	mux.HandleFunc("POST "+RouteVerifyEmailCode, s.sendVerificationCode)
	mux.HandleFunc("POST "+RouteVerifyEmail, s.verifyEmail)
	mux.HandleFunc(api.RouteTasks, s.serveAPI(api.RouteTasks))
	mux.HandleFunc(api.RouteTask, s.serveAPI(api.RouteTask))
	mux.HandleFunc(api.RouteNotifications, s.serveAPI(api.RouteNotifications))
	s.campaignRoutes(mux)
	s.clockRoutes(mux)
	s.opsRoutes(mux)
	mux.HandleFunc("GET /outbox", serveOutboxPage)
	mux.HandleFunc("GET /outbox.js", serveOutboxFile("text/javascript; charset=utf-8", outboxScript))
	mux.HandleFunc("GET /outbox.css", serveOutboxFile("text/css; charset=utf-8", outboxStyle))
	mux.HandleFunc("GET /outbox.json", s.serveOutboxJSON)
	mux.HandleFunc("GET /debug/schedules.json", s.serveSchedules)
	if s.cfg.WebDir != "" {
		mux.Handle("/", http.FileServer(http.Dir(s.cfg.WebDir)))
	} else {
		mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, http.StatusNotFound, "not_found", "no such page: this server was started without a web app")
		})
	}
	return withSecurityHeaders(guardHost(s.cfg.AllowedHosts, mux))
}

// securityHeaders are the hosted app's headers (webheaders.For): the page
// connects to this server only, so its connect-src is 'self'.
var securityHeaders = webheaders.For(nil)

// withSecurityHeaders sets securityHeaders on every answer, so the web app
// and the outbox run locally under the policy they get in the cloud.
func withSecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range securityHeaders {
			w.Header().Set(h.Name, h.Value)
		}
		next.ServeHTTP(w, r)
	})
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
	return s.serveHandler(route, s.api, task.MaxBodyBytes)
}

// serveHandler checks the token, then hands the request (its body read up
// to maxBody+1 bytes, so the handler can refuse a longer one) to h.
func (s *Server) serveHandler(route string, h servable, maxBody int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		claims, ok := s.signedIn(w, r)
		if !ok {
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", "the request body could not be read")
			return
		}
		query := map[string]string{}
		for k, v := range r.URL.Query() {
			query[k] = v[0]
		}
		resp := h.Serve(r.Context(), httpapi.Request{Method: r.Method, Route: route, ID: r.PathValue("id"),
			UserID: claims.Sub, Query: query, Body: body, Origin: r.Header.Get("Origin"), Email: claims.Email,
			EmailVerified: claims.EmailVerified, EmailProof: claims.EmailProof, Groups: claims.Groups})
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

// signedIn checks the request's token as the Cognito authorizer does and
// returns its claims; otherwise it answers 401 JSON and reports false.
func (s *Server) signedIn(w http.ResponseWriter, r *http.Request) (Claims, bool) {
	claims, err := s.signer.Verify(BearerToken(r.Header.Get("Authorization")))
	if err != nil {
		s.log.InfoContext(r.Context(), "request refused: bad token", "path", r.URL.Path, "reason", err.Error())
		writeError(w, http.StatusUnauthorized, "unauthorized", "Unauthorized: sign in again (the token is missing, invalid or expired).")
		return Claims{}, false
	}
	return claims, true
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

// signUp runs the PreSignUp rule (identity.SignUpPolicy, the code the
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
	if err := CheckPasswordPolicy(c.Password); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_password", sentence(err))
		return
	}
	hash, err := HashPassword(c.Password)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	u := User{Sub: newSub(), Email: c.Email, Password: hash, CreatedAt: s.cfg.Now().UTC()}
	if err := s.db.CreateUser(u); err != nil {
		if errors.Is(err, ErrUserExists) {
			writeError(w, http.StatusConflict, "user_exists", "An account with this email already exists.")
			return
		}
		s.internal(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "user signed up", "sub", u.Sub, "emailDomain", identity.EmailDomain(u.Email))
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
	case errors.Is(err, ErrUserNotFound):
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
	tok, err := s.signer.Sign(s.identity(u))
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
	// RemindAt is set on a reminder schedule: the reminder time.
	RemindAt string `json:"remindAt,omitempty"`
}

// serveSchedules lists the caller's live schedules.
func (s *Server) serveSchedules(w http.ResponseWriter, r *http.Request) {
	c, ok := s.signedIn(w, r)
	if !ok {
		return
	}
	out := []scheduleJSON{}
	for _, sc := range s.pipe.Timer.All() {
		if sc.Payload.Key.Partition != c.Sub {
			continue
		}
		out = append(out, scheduleJSON{Name: sc.Name, At: task.FormatTime(sc.At), TaskID: sc.Payload.Key.Sort,
			UserID: sc.Payload.Key.Partition, DueAt: task.FormatTime(sc.Payload.Due), RemindAt: task.FormatTime(sc.Payload.Remind)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": out})
}

// mine reports whether an outbox email is the caller's: about them (their
// sub) or sent to their address, as their own mailbox would show it.
func mine(e Email, c Claims) bool {
	if e.UserID != "" && e.UserID == c.Sub {
		return true
	}
	for _, to := range e.To {
		if c.Email != "" && strings.EqualFold(to, c.Email) {
			return true
		}
	}
	return false
}

// serveOutboxJSON lists the caller's outbox emails, oldest first.
func (s *Server) serveOutboxJSON(w http.ResponseWriter, r *http.Request) {
	c, ok := s.signedIn(w, r)
	if !ok {
		return
	}
	emails := []Email{}
	for _, e := range s.db.Outbox() {
		if mine(e, c) {
			emails = append(emails, e)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"emails": emails})
}

// The outbox page, its script and its style are three files, as the
// policy (script-src and style-src 'self') allows no inline script or
// style.
var (
	//go:embed outbox.html
	outboxPage []byte
	//go:embed outbox.js
	outboxScript []byte
	//go:embed outbox.css
	outboxStyle []byte
)

// serveOutboxPage is the outbox page: it holds no mail itself. Its script
// takes the web app's local session in this tab (or signs in with its own
// form) and shows /outbox.json, which needs the token.
func serveOutboxPage(w http.ResponseWriter, r *http.Request) {
	serveOutboxFile("text/html; charset=utf-8", outboxPage)(w, r)
}

// serveOutboxFile answers with body as contentType, never cached.
func serveOutboxFile(contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(body)
	}
}
