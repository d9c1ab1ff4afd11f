package devserver

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/core/httpapi"
)

// Password reset, as Cognito's ForgotPassword and ConfirmForgotPassword
// (cmd/dev/README.md): a code lives ResetCodeTTL and allows resetAttempts
// wrong tries; a new request replaces it.
const (
	ResetCodeTTL  = time.Hour
	resetAttempts = 5
	// EmailKindPasswordReset is the outbox kind of a reset code email.
	EmailKindPasswordReset = "password-reset"
)

type resetCode struct {
	code    string
	expires time.Time
	tries   int
}

// resetCodes holds the live codes by EmailKey (reset) or sub (email
// verification), in memory only: after a restart the user asks again.
type resetCodes struct {
	mu    sync.Mutex
	codes map[string]*resetCode
}

func (r *resetCodes) put(key string, c *resetCode) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.codes == nil {
		r.codes = map[string]*resetCode{}
	}
	r.codes[key] = c
}

// check reports whether code is the live code of key, counting a wrong
// try; a matching code is used up.
func (r *resetCodes) check(key, code string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.codes[key]
	if c == nil || now.After(c.expires) || c.tries >= resetAttempts {
		delete(r.codes, key)
		return false
	}
	if subtle.ConstantTimeCompare([]byte(c.code), []byte(code)) != 1 {
		c.tries++
		return false
	}
	delete(r.codes, key)
	return true
}

func newResetCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("reset code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// sentence turns a policy error ("the password needs ...") into a
// message: capital first letter, full stop.
func sentence(err error) string {
	s := err.Error()
	return strings.ToUpper(s[:1]) + strings.TrimSuffix(s[1:], ".") + "."
}

// forgotPassword sends a reset code to the outbox when the account exists,
// and answers the same either way, so the answer does not tell whether an
// address has an account.
func (s *Server) forgotPassword(r *http.Request) httpapi.Response {
	var in struct {
		Email string `json:"email"`
	}
	if bad := decode(r, &in, `{"email": "..."}`); bad != nil {
		return *bad
	}
	u, err := s.db.User(in.Email)
	switch {
	case errors.Is(err, ErrUserNotFound):
	case err != nil:
		return s.internal(r, err)
	default:
		if err := s.mailCode(&s.resets, EmailKey(u.Email), u, EmailKindPasswordReset, "Your Unschedule password reset code",
			"choose a new password", ": your password stays as it is."); err != nil {
			return s.internal(r, err)
		}
		s.log.InfoContext(r.Context(), "password reset code sent to the outbox", "sub", u.Sub)
	}
	return httpapi.JSON(http.StatusOK, map[string]any{"delivery": "email"})
}

// mailCode keeps a new code under key in codes and puts it in u's outbox
// (kind, subject): a code to do what, and the end of its last sentence.
func (s *Server) mailCode(codes *resetCodes, key string, u User, kind, subject, what, end string) error {
	code, err := newResetCode()
	if err != nil {
		return err
	}
	now := s.cfg.Now().UTC()
	codes.put(key, &resetCode{code: code, expires: now.Add(ResetCodeTTL)})
	s.db.AppendEmail(Email{Kind: kind, At: now, UserID: u.Sub, To: []string{u.Email}, Subject: subject,
		Body: fmt.Sprintf("Your code to %s is %s. It works once, for %d minutes.\n\nIf you did not ask for it, ignore this email%s",
			what, code, int(ResetCodeTTL.Minutes()), end)})
	return nil
}

var codeMismatch = httpapi.Error(http.StatusBadRequest, "code_mismatch", "That code is wrong or has expired. Ask for a new one.")

// resetPassword sets a new password given a live code.
func (s *Server) resetPassword(r *http.Request) httpapi.Response {
	var in struct {
		Email    string `json:"email"`
		Code     string `json:"code"`
		Password string `json:"password"`
	}
	if bad := decode(r, &in, `{"email": "...", "code": "...", "password": "..."}`); bad != nil {
		return *bad
	}
	if err := CheckPasswordPolicy(in.Password); err != nil {
		return httpapi.Error(http.StatusBadRequest, "invalid_password", sentence(err))
	}
	if !s.resets.check(EmailKey(in.Email), strings.TrimSpace(in.Code), s.cfg.Now()) {
		return codeMismatch
	}
	hash, err := HashPassword(in.Password)
	if err != nil {
		return s.internal(r, err)
	}
	if err := s.db.UpdateUser(in.Email, func(u *User) { u.Password = hash }); err != nil {
		return s.internal(r, err)
	}
	s.log.InfoContext(r.Context(), "password reset")
	return httpapi.JSON(http.StatusOK, map[string]any{"reset": true})
}

// Email verification of a signed-in user, as Cognito's
// GetUserAttributeVerificationCode and VerifyUserAttribute, with a reset
// code's rules; like them it writes no custom:email_proof (cmd/dev/README.md).
const (
	RouteVerifyEmailCode = "/local-auth/verify-email/code"
	RouteVerifyEmail     = "/local-auth/verify-email"
	// EmailKindVerifyEmail is the outbox kind of a verification code email.
	EmailKindVerifyEmail = "verify-email"
)

// sendVerificationCode puts a code for the caller's address in the outbox.
func (s *Server) sendVerificationCode(r *http.Request, u User) httpapi.Response {
	if err := s.mailCode(&s.verifies, u.Sub, u, EmailKindVerifyEmail, "Your Unschedule verification code",
		"verify this email address", "."); err != nil {
		return s.internal(r, err)
	}
	s.log.InfoContext(r.Context(), "email verification code sent to the outbox", "sub", u.Sub)
	return httpapi.JSON(http.StatusOK, map[string]any{"delivery": "email"})
}

// verifyEmail marks the caller's address verified given a live code, and
// answers a new ID token that says so.
func (s *Server) verifyEmail(r *http.Request, u User) httpapi.Response {
	var in struct {
		Code string `json:"code"`
	}
	if bad := decode(r, &in, `{"code": "..."}`); bad != nil {
		return *bad
	}
	if !s.verifies.check(u.Sub, strings.TrimSpace(in.Code), s.cfg.Now()) {
		return codeMismatch
	}
	if err := s.db.UpdateUser(u.Email, func(u *User) { u.EmailVerified = true }); err != nil {
		return s.internal(r, err)
	}
	u.EmailVerified = true
	s.log.InfoContext(r.Context(), "email verified", "sub", u.Sub)
	return s.token(r, u, map[string]any{"emailVerified": true})
}
