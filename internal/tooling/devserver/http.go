package devserver

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
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

// endpoint is one of the server's own routes: it returns its answer,
// which serve sends never cached.
type endpoint func(r *http.Request) httpapi.Response

// Handler serves the web app, /config.json, the task and campaign APIs,
// the local sign-in, the outbox and the debug listing, to requests whose
// Host is a loopback name or address or one of Config.AllowedHosts
// (others get 421). The outbox and the listing show the signed-in caller
// their own mail and schedules only.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	routes := map[string]endpoint{
		"GET /config.json":                 serveConfig,
		"POST /local-auth/signup":          s.signUp,
		"POST /local-auth/signin":          s.signIn,
		"POST /local-auth/forgot-password": s.forgotPassword,
		"POST /local-auth/reset-password":  s.resetPassword,
		"POST " + RouteVerifyEmailCode:     s.asUser(s.sendVerificationCode),
		"POST " + RouteVerifyEmail:         s.asUser(s.verifyEmail),
		"GET /outbox.json":                 s.signedIn(s.serveOutboxJSON),
		"GET /debug/schedules.json":        s.signedIn(s.serveSchedules),
		RouteOutboxFeedback:                s.signedIn(s.serveOutboxFeedback),
		"GET /outbox":                      file("text/html; charset=utf-8", outboxPage),
		"GET /outbox.js":                   file("text/javascript; charset=utf-8", outboxScript),
		"GET /outbox.css":                  file("text/css; charset=utf-8", outboxStyle),
	}
	if s.fake != nil { // a server on the wall clock has no clock routes (404)
		routes[RouteClock] = s.readClock
		routes[RouteClockAdvance] = s.advanceClock
	}
	if s.cfg.WebDir != "" {
		mux.Handle("/", http.FileServer(http.Dir(s.cfg.WebDir)))
	} else {
		routes["/"] = func(*http.Request) httpapi.Response {
			return httpapi.Error(http.StatusNotFound, "not_found", "no such page: this server was started without a web app")
		}
	}
	for pattern, h := range routes {
		mux.HandleFunc(pattern, serve(h))
	}
	for _, route := range []string{api.RouteTasks, api.RouteTask, api.RouteNotifications} {
		mux.HandleFunc(route, s.serveHandler(route, s.api, task.MaxBodyBytes))
	}
	s.campaignRoutes(mux)
	s.opsRoutes(mux)
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

// write sends resp.
func write(w http.ResponseWriter, resp httpapi.Response) {
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// serve sends h's answers, never cached.
func serve(h endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		write(w, h(r))
	}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	write(w, httpapi.Error(status, code, msg))
}

// serveConfig is the web app's runtime config: local sign-in, API on the
// same origin.
func serveConfig(*http.Request) httpapi.Response {
	return httpapi.JSON(http.StatusOK, map[string]string{"mode": "local", "apiUrl": ""})
}

// servable is the task or campaign API handler, the one its Lambda runs.
type servable interface {
	Serve(ctx context.Context, r httpapi.Request) httpapi.Response
}

// serveHandler checks the token as the Cognito authorizer does, then
// hands the request (its body read up to maxBody+1 bytes, so the handler
// can refuse a longer one) to h with the token's claims, and saves what
// a write changed.
func (s *Server) serveHandler(route string, h servable, maxBody int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		claims, err := s.verify(r)
		if err != nil {
			writeError(w, http.StatusUnauthorized, "unauthorized", errUnauthorized)
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
		write(w, resp)
		if r.Method != http.MethodGet && resp.Status < 300 {
			if err := s.persist(); err != nil {
				s.log.ErrorContext(r.Context(), "saving state failed", "error", err.Error())
			}
		}
	}
}

const errUnauthorized = "Unauthorized: sign in again (the token is missing, invalid or expired)."

// verify checks the request's token as the Cognito authorizer does and
// returns its claims; a refusal is logged.
func (s *Server) verify(r *http.Request) (Claims, error) {
	claims, err := s.signer.Verify(BearerToken(r.Header.Get("Authorization")))
	if err != nil {
		s.log.InfoContext(r.Context(), "request refused: bad token", "path", r.URL.Path, "reason", err.Error())
	}
	return claims, err
}

// signedIn runs h for a caller whose token verifies, and answers 401
// otherwise.
func (s *Server) signedIn(h func(*http.Request, Claims) httpapi.Response) endpoint {
	return func(r *http.Request) httpapi.Response {
		c, err := s.verify(r)
		if err != nil {
			return httpapi.Error(http.StatusUnauthorized, "unauthorized", errUnauthorized)
		}
		return h(r, c)
	}
}

// asUser is signedIn with the caller's stored account (401 when it no
// longer exists).
func (s *Server) asUser(h func(*http.Request, User) httpapi.Response) endpoint {
	return s.signedIn(func(r *http.Request, c Claims) httpapi.Response {
		u, err := s.db.UserBySub(c.Sub)
		switch {
		case errors.Is(err, ErrUserNotFound):
			return httpapi.Error(http.StatusUnauthorized, "unauthorized", "Unauthorized: sign in again (the account no longer exists).")
		case err != nil:
			return s.internal(r, err)
		}
		return h(r, u)
	})
}

// decode reads a JSON object of at most maxAuthBody bytes into v,
// refusing unknown fields; shape is what to send instead.
func decode(r *http.Request, v any, shape string) *httpapi.Response {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxAuthBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		bad := httpapi.Error(http.StatusBadRequest, "bad_request", "send a JSON object "+shape)
		return &bad
	}
	return nil
}

type credentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

const credentialsShape = `{"email": "...", "password": "..."}`

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
func (s *Server) signUp(r *http.Request) httpapi.Response {
	var c credentials
	if bad := decode(r, &c, credentialsShape); bad != nil {
		return *bad
	}
	c.Email = strings.TrimSpace(c.Email)
	if err := s.policy.Check(c.Email); err != nil {
		// The policy's errors are written for the person signing up.
		return httpapi.Error(http.StatusBadRequest, "signup_refused", err.Error())
	}
	if !validEmail(c.Email) {
		return httpapi.Error(http.StatusBadRequest, "invalid_parameter", "Enter a valid email address, such as ada@example.com.")
	}
	if err := CheckPasswordPolicy(c.Password); err != nil {
		return httpapi.Error(http.StatusBadRequest, "invalid_password", sentence(err))
	}
	hash, err := HashPassword(c.Password)
	if err != nil {
		return s.internal(r, err)
	}
	// A random UUID (version 4), the form of a Cognito sub.
	u := User{Sub: campaign.NewToken(), Email: c.Email, Password: hash, CreatedAt: s.cfg.Now().UTC()}
	if err := s.db.CreateUser(u); errors.Is(err, ErrUserExists) {
		return httpapi.Error(http.StatusConflict, "user_exists", "An account with this email already exists.")
	} else if err != nil {
		return s.internal(r, err)
	}
	s.log.InfoContext(r.Context(), "user signed up", "sub", u.Sub, "emailDomain", identity.EmailDomain(u.Email))
	return httpapi.JSON(http.StatusCreated, map[string]any{"email": u.Email, "confirmed": true})
}

// dummyHash is checked against when the email is unknown, so a sign-in
// takes as long whether or not the account exists.
var dummyHash, _ = HashPassword("dummy password for timing")

// signIn checks the password, runs the PostAuthentication rule
// (notify.Subscriber.OnSignIn, the code the postauth trigger runs; it
// never fails a sign-in) and returns a signed ID token.
func (s *Server) signIn(r *http.Request) httpapi.Response {
	var c credentials
	if bad := decode(r, &c, credentialsShape); bad != nil {
		return *bad
	}
	u, err := s.db.User(c.Email)
	switch {
	case errors.Is(err, ErrUserNotFound):
		CheckPassword(dummyHash, c.Password)
		return httpapi.Error(http.StatusUnauthorized, "not_authorized", "Incorrect email or password.")
	case err != nil:
		return s.internal(r, err)
	case !CheckPassword(u.Password, c.Password):
		return httpapi.Error(http.StatusUnauthorized, "not_authorized", "Incorrect email or password.")
	}
	ctx, cancel := context.WithTimeout(r.Context(), PostAuthBudget)
	s.subscriber.OnSignIn(ctx, u.Sub, u.Email)
	cancel()
	return s.token(r, u, map[string]any{})
}

// token answers fields with a new ID token for u.
func (s *Server) token(r *http.Request, u User, fields map[string]any) httpapi.Response {
	tok, err := s.signer.Sign(s.identity(u))
	if err != nil {
		return s.internal(r, err)
	}
	fields["idToken"], fields["expiresIn"] = tok, int(s.cfg.TokenTTL.Seconds())
	return httpapi.JSON(http.StatusOK, fields)
}

// internal logs err and answers as the API handlers do (httpapi.Internal).
func (s *Server) internal(r *http.Request, err error) httpapi.Response {
	return httpapi.Internal(r.Context(), s.log, err, "path", r.URL.Path)
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
func (s *Server) serveSchedules(_ *http.Request, c Claims) httpapi.Response {
	out := []scheduleJSON{}
	for _, sc := range s.pipe.Timer.All() {
		if sc.Payload.Key.Partition == c.Sub {
			out = append(out, scheduleJSON{Name: sc.Name, At: task.FormatTime(sc.At), TaskID: sc.Payload.Key.Sort,
				UserID: sc.Payload.Key.Partition, DueAt: task.FormatTime(sc.Payload.Due), RemindAt: task.FormatTime(sc.Payload.Remind)})
		}
	}
	return httpapi.JSON(http.StatusOK, map[string]any{"schedules": out})
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
func (s *Server) serveOutboxJSON(_ *http.Request, c Claims) httpapi.Response {
	emails := []Email{}
	for _, e := range s.db.Outbox() {
		if mine(e, c) {
			emails = append(emails, e)
		}
	}
	return httpapi.JSON(http.StatusOK, map[string]any{"emails": emails})
}

// The outbox page, its script and its style are three files: the
// policy (script-src and style-src 'self') allows nothing inline.
var (
	//go:embed outbox.html
	outboxPage []byte
	//go:embed outbox.js
	outboxScript []byte
	//go:embed outbox.css
	outboxStyle []byte
)

// file answers body as contentType.
func file(contentType string, body []byte) endpoint {
	return func(*http.Request) httpapi.Response {
		return httpapi.Response{Status: http.StatusOK, Body: body, Headers: map[string]string{"Content-Type": contentType}}
	}
}
