package identity_test

import (
	"testing"

	"github.com/unschedule/unschedule/internal/core/identity"
)

// TestProvenEmail: only a confirmation that followed a code sent to a
// verified address proves it; an auto-confirmed or administrator-confirmed
// sign-up with an unverified address proves nothing.
func TestProvenEmail(t *testing.T) {
	verified := map[string]string{"email": " Ann@Example.com", "email_verified": "true"}
	for _, tc := range []struct {
		name, source string
		attrs        map[string]string
		want         string
	}{
		{"sign-up confirmed with its code", identity.SourceConfirmSignUp, verified, "ann@example.com"},
		{"password reset confirmed with its code", identity.SourceConfirmForgotPassword, verified, "ann@example.com"},
		{"administrator confirmed, address unverified", identity.SourceConfirmSignUp, map[string]string{"email": "ann@example.com", "email_verified": "false"}, ""},
		{"no email_verified at all", identity.SourceConfirmSignUp, map[string]string{"email": "ann@example.com"}, ""},
		{"another trigger source", "PreSignUp_SignUp", verified, ""},
		{"no address", identity.SourceConfirmSignUp, map[string]string{"email_verified": "true"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := identity.ProvenEmail(tc.source, tc.attrs); got != tc.want {
				t.Fatalf("ProvenEmail = %q; want %q", got, tc.want)
			}
		})
	}
}

// TestEmailProven: email_verified alone (what an auto-confirming
// PreSignUp set before) is not proof; a proof of an earlier address is
// not proof of the current one.
func TestEmailProven(t *testing.T) {
	for _, tc := range []struct {
		name  string
		attrs map[string]string
		want  bool
	}{
		{"verified and proven", map[string]string{"email": "Ann@example.com", "email_verified": "true", identity.EmailProofAttribute: "ann@example.com"}, true},
		{"verified, never proven", map[string]string{"email": "ann@example.com", "email_verified": "true"}, false},
		{"proof of an earlier address", map[string]string{"email": "bob@example.com", "email_verified": "true", identity.EmailProofAttribute: "ann@example.com"}, false},
		{"proven, then unverified", map[string]string{"email": "ann@example.com", "email_verified": "false", identity.EmailProofAttribute: "ann@example.com"}, false},
		{"no address", map[string]string{"email_verified": "true", identity.EmailProofAttribute: ""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := identity.EmailProven(tc.attrs); got != tc.want {
				t.Fatalf("EmailProven = %v; want %v", got, tc.want)
			}
		})
	}
}
