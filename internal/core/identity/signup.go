package identity

import (
	"errors"
	"fmt"
	"strings"
)

// Sign-up refusals. Cognito shows the message to the person signing up,
// so it says what happened and names neither the allow-list nor the email.
var (
	// ErrSignUpRestricted: the email's domain is not on the allow-list.
	ErrSignUpRestricted = errors.New("sign-up is restricted to approved email domains; ask your administrator for access")
	// ErrNoEmail: the sign-up carries no email address.
	ErrNoEmail = errors.New("an email address is required to sign up")
)

// SignUpPolicy is the PreSignUp rule: who may sign up, by the domain of
// the address typed at sign-up (only then: a later change of address is
// not checked here; the campaign sender check re-checks the current one).
// Accepting a sign-up proves nothing about the address: an open pool
// confirms the account at once but never marks the email verified; with
// an allow-list or RequireEmailVerification the user confirms with a code
// sent to it. Expiry notifications reach an address only after its owner
// confirms the SNS subscription.
type SignUpPolicy struct {
	// domains is the allow-list in lower case; empty lets everyone in.
	domains map[string]bool
}

// ParseDomains reads a comma-separated allow-list of email domains such
// as "example.com, example.org". Blank entries are ignored; "" is the
// empty list (everyone may sign up).
func ParseDomains(csv string) ([]string, error) {
	var out []string
	for _, d := range strings.Split(csv, ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		if strings.ContainsAny(d, "@ \t") || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") {
			return nil, fmt.Errorf("allowed email domain %q is not a domain: give bare domains such as example.com, comma-separated", d)
		}
		out = append(out, d)
	}
	return out, nil
}

// NewSignUpPolicy allows the given domains (exact, case-insensitive
// matches; a subdomain is not its parent). No domains allows everyone.
func NewSignUpPolicy(domains []string) SignUpPolicy {
	p := SignUpPolicy{domains: map[string]bool{}}
	for _, d := range domains {
		p.domains[strings.ToLower(strings.TrimSpace(d))] = true
	}
	return p
}

// Restricted reports whether an allow-list is set.
func (p SignUpPolicy) Restricted() bool { return len(p.domains) > 0 }

// Check accepts or refuses the email of a sign-up: ErrNoEmail without
// one, ErrSignUpRestricted when its domain is not allowed.
func (p SignUpPolicy) Check(email string) error {
	email = strings.TrimSpace(email)
	if email == "" {
		return ErrNoEmail
	}
	if !p.Restricted() {
		return nil
	}
	at := strings.LastIndexByte(email, '@')
	if at < 0 || !p.domains[strings.ToLower(email[at+1:])] {
		return ErrSignUpRestricted
	}
	return nil
}

// EmailDomain is the part of an email after its last '@', in lower case
// ("" without one): loggable where the address is not.
func EmailDomain(email string) string {
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(email[at+1:]))
}
