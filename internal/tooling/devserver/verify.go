package devserver

import (
	"errors"
	"net/http"
	"strings"
)

// Email verification of a signed-in user, as Cognito's
// GetUserAttributeVerificationCode and VerifyUserAttribute (attribute
// "email") do it with the user's access token: a six-digit code goes to
// the address (here: the outbox, kind EmailKindVerifyEmail), and the code
// marks the address verified. The rules of a reset code hold (ResetCodeTTL,
// five tries, a new request replaces it). The answer carries a new ID
// token saying email_verified, as the web app's token refresh gets it in
// the cloud. Like VerifyUserAttribute, it writes no custom:email_proof:
// that needs a code flow that fires PostConfirmation (a password reset).
const (
	RouteVerifyEmailCode = "/local-auth/verify-email/code"
	RouteVerifyEmail     = "/local-auth/verify-email"
	// EmailKindVerifyEmail is the outbox kind of a verification code email.
	EmailKindVerifyEmail = "verify-email"
)

// signedInUser checks the token and reads its user; otherwise it answers
// (401, or 500) and reports false.
func (s *Server) signedInUser(w http.ResponseWriter, r *http.Request) (User, bool) {
	c, ok := s.signedIn(w, r)
	if !ok {
		return User{}, false
	}
	u, err := s.db.UserBySub(c.Sub)
	switch {
	case errors.Is(err, ErrUserNotFound):
		writeError(w, http.StatusUnauthorized, "unauthorized", "Unauthorized: sign in again (the account no longer exists).")
		return User{}, false
	case err != nil:
		s.internal(w, r, err)
		return User{}, false
	}
	return u, true
}

// sendVerificationCode puts a code for the caller's address in the outbox.
func (s *Server) sendVerificationCode(w http.ResponseWriter, r *http.Request) {
	u, ok := s.signedInUser(w, r)
	if !ok {
		return
	}
	if err := s.mailCode(&s.verifies, u.Sub, u, EmailKindVerifyEmail, "Your Unschedule verification code",
		"verify this email address", "."); err != nil {
		s.internal(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "email verification code sent to the outbox", "sub", u.Sub)
	writeJSON(w, http.StatusOK, map[string]any{"delivery": "email"})
}

// verifyEmail marks the caller's address verified given a live code, and
// answers a new ID token that says so.
func (s *Server) verifyEmail(w http.ResponseWriter, r *http.Request) {
	u, ok := s.signedInUser(w, r)
	if !ok {
		return
	}
	var in struct {
		Code string `json:"code"`
	}
	if !decodeStrict(w, r, &in, `{"code": "..."}`) {
		return
	}
	if !s.verifies.check(u.Sub, strings.TrimSpace(in.Code), s.cfg.Now()) {
		writeError(w, http.StatusBadRequest, "code_mismatch", "That code is wrong or has expired. Ask for a new one.")
		return
	}
	if err := s.db.UpdateUser(u.Email, func(u *User) { u.EmailVerified = true }); err != nil {
		s.internal(w, r, err)
		return
	}
	u.EmailVerified = true
	tok, err := s.signer.Sign(s.identity(u))
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "email verified", "sub", u.Sub)
	writeJSON(w, http.StatusOK, map[string]any{"emailVerified": true, "idToken": tok, "expiresIn": int(s.cfg.TokenTTL.Seconds())})
}
