// Package unsubscribe is the one-click unsubscribe of campaign emails
// (RFC 8058): a signed token naming a sender, a recipient address and a
// campaign; the List-Unsubscribe headers and body footer that carry its
// URL; and the page the URL serves. It is plain Go: no AWS SDK.
//
// A token is base64url(payload) "." base64url(HMAC-SHA256(secret,
// payload)), the payload "v1\n<sender>\n<address>\n<campaign>". Verify
// recomputes the MAC and compares in constant time (hmac.Equal); the
// address is kept as the message had it (the suppression list
// normalizes it).
package unsubscribe

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// MinSecretBytes is the shortest secret a Signer takes: HMAC-SHA256's
// output size, as RFC 2104 recommends for a key.
const MinSecretBytes = 32

// version starts every payload; a new format gets a new one.
const version = "v1"

// Errors of Verify. Neither says more than what is wrong with the token.
var (
	// ErrMalformed: not a token of this format (cut, re-encoded, empty).
	ErrMalformed = errors.New("the unsubscribe token is malformed")
	// ErrBadSignature: well formed, but not signed with this secret
	// (forged or altered).
	ErrBadSignature = errors.New("the unsubscribe token's signature does not match")
)

// Claims are what a token names.
type Claims struct {
	Sender, Address, Campaign string
}

// Signer signs and verifies tokens with one secret.
type Signer struct{ secret []byte }

// NewSigner returns a Signer; the secret must have MinSecretBytes at least.
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("unsubscribe: the secret has %d bytes, it needs %d at least", len(secret), MinSecretBytes)
	}
	return &Signer{secret: append([]byte(nil), secret...)}, nil
}

func (s *Signer) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write(payload)
	return m.Sum(nil)
}

var b64 = base64.RawURLEncoding

// Token signs c. A field must not hold a newline (an address or sender
// never does; campaign ids are [A-Za-z0-9-]).
func (s *Signer) Token(c Claims) (string, error) {
	for _, f := range []string{c.Sender, c.Address, c.Campaign} {
		if strings.ContainsAny(f, "\n\r") {
			return "", errors.New("unsubscribe: a claim holds a newline")
		}
	}
	if c.Sender == "" || c.Address == "" {
		return "", errors.New("unsubscribe: a token needs a sender and an address")
	}
	p := []byte(strings.Join([]string{version, c.Sender, c.Address, c.Campaign}, "\n"))
	return b64.EncodeToString(p) + "." + b64.EncodeToString(s.mac(p)), nil
}

// Verify returns the claims of a token this Signer made; ErrMalformed or
// ErrBadSignature otherwise.
func (s *Signer) Verify(token string) (Claims, error) {
	enc, sig, ok := strings.Cut(token, ".")
	if !ok || enc == "" || sig == "" {
		return Claims{}, ErrMalformed
	}
	p, err := b64.DecodeString(enc)
	if err != nil {
		return Claims{}, ErrMalformed
	}
	got, err := b64.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return Claims{}, ErrMalformed
	}
	if !hmac.Equal(got, s.mac(p)) {
		return Claims{}, ErrBadSignature
	}
	f := strings.Split(string(p), "\n")
	if len(f) != 4 || f[0] != version || f[1] == "" || f[2] == "" {
		return Claims{}, ErrMalformed // signed by us, but not a format we read
	}
	return Claims{Sender: f[1], Address: f[2], Campaign: f[3]}, nil
}

// Links makes the unsubscribe URL of each message: Base (the public
// unsubscribe endpoint, https in AWS) with ?token=.
type Links struct {
	Base string
	Keys *Keys
}

// URL is the unsubscribe URL of one message.
func (l Links) URL(ctx context.Context, c Claims) (string, error) {
	if l.Base == "" || l.Keys == nil {
		return "", errors.New("unsubscribe: links need a base URL and keys")
	}
	s, err := l.Keys.Signer(ctx)
	if err != nil {
		return "", err
	}
	t, err := s.Token(c)
	if err != nil {
		return "", err
	}
	sep := "?"
	if strings.Contains(l.Base, "?") {
		sep = "&"
	}
	return l.Base + sep + "token=" + url.QueryEscape(t), nil
}

// Header names and the one-click value of RFC 8058, section 3.1.
// https://www.rfc-editor.org/rfc/rfc8058#section-3.1
const (
	HeaderListUnsubscribe     = "List-Unsubscribe"
	HeaderListUnsubscribePost = "List-Unsubscribe-Post"
	OneClick                  = "List-Unsubscribe=One-Click"
)

// Headers are the two headers of a message whose unsubscribe URL is u.
func Headers(u string) [][2]string {
	return [][2]string{{HeaderListUnsubscribe, "<" + u + ">"}, {HeaderListUnsubscribePost, OneClick}}
}

// Footer appends the unsubscribe link to a plain-text body.
func Footer(body, u string) string {
	return strings.TrimRight(body, "\n") + "\n\n--\nTo stop receiving these emails, unsubscribe: " + u + "\n"
}
