package devserver

import (
	"net/http"
	"strings"

	"github.com/unschedule/unschedule/internal/core/httpapi"
)

// Email verification of a signed-in user, as Cognito's
// GetUserAttributeVerificationCode and VerifyUserAttribute: a code (with
// a reset code's rules) goes to the outbox, and the code marks the
// address verified and answers a new ID token saying so. Like
// VerifyUserAttribute, it writes no custom:email_proof, which only a flow
// that fires PostConfirmation writes.
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
