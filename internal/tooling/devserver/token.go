package devserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Token errors. Every one means "401": the caller learns no more than
// that the token was refused.
var (
	ErrTokenMalformed = errors.New("token is malformed")
	ErrTokenAlg       = errors.New("token algorithm is not HS256")
	ErrTokenSignature = errors.New("token signature does not verify")
	ErrTokenExpired   = errors.New("token has expired")
	ErrTokenClaims    = errors.New("token lacks a required claim")
)

// Issuer is the iss claim of local tokens.
const Issuer = "unschedule-dev"

// Claims are what a local ID token says, named as in a Cognito ID token.
type Claims struct {
	Sub   string `json:"sub"`
	Email string `json:"email"`
	// EmailVerified and Groups are what the campaign API decides on
	// (Config.CampaignSenders sets both).
	EmailVerified bool `json:"email_verified"`
	// EmailProof is the address last proved by a code, as the
	// PostConfirmation trigger writes it in the cloud; the campaign API
	// creates campaigns only when it names Email.
	EmailProof string   `json:"custom:email_proof,omitempty"`
	Groups     []string `json:"cognito:groups,omitempty"`
	Issuer     string   `json:"iss"`
	TokenUse   string   `json:"token_use"`
	IssuedAt   int64    `json:"iat"`
	Expires    int64    `json:"exp"`
}

// Signer makes and checks HMAC-SHA256 signed tokens in the compact JWT
// form (header.claims.signature, base64url without padding): the
// Cognito user pool (which signs) and the API Gateway authorizer (which
// verifies) of make dev.
type Signer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// NewSigner signs with key (at least 32 bytes); tokens live for ttl on
// the clock now.
func NewSigner(key []byte, ttl time.Duration, now func() time.Time) (*Signer, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("devserver: token key must be at least 32 bytes (given %d)", len(key))
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("devserver: token lifetime must be positive (given %s)", ttl)
	}
	return &Signer{key: append([]byte(nil), key...), ttl: ttl, now: now}, nil
}

var (
	b64       = base64.RawURLEncoding
	jwtHeader = b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
)

// Sign issues an ID token saying who: its Sub, Email, EmailVerified,
// EmailProof and Groups (the issuer, use and times are the signer's).
func (s *Signer) Sign(who Claims) (string, error) {
	if who.Sub == "" {
		return "", fmt.Errorf("sign: %w (sub)", ErrTokenClaims)
	}
	now := s.now()
	c, err := json.Marshal(Claims{Sub: who.Sub, Email: who.Email, EmailVerified: who.EmailVerified, EmailProof: who.EmailProof, Groups: who.Groups,
		Issuer: Issuer, TokenUse: "id", IssuedAt: now.Unix(), Expires: now.Add(s.ttl).Unix()})
	if err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	signed := jwtHeader + "." + b64.EncodeToString(c)
	return signed + "." + b64.EncodeToString(s.mac(signed)), nil
}

func (s *Signer) mac(signed string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// decodePart decodes one base64url JSON part of a token into v.
func decodePart(name, part string, v any) error {
	b, err := b64.DecodeString(part)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrTokenMalformed, name, err)
	}
	return nil
}

// Verify checks a token's form, algorithm, signature (in constant time),
// expiry, issuer and use, and returns its claims.
func (s *Signer) Verify(token string) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, ErrTokenMalformed
	}
	var h struct{ Alg string }
	if err := decodePart("header", parts[0], &h); err != nil {
		return Claims{}, err
	}
	if h.Alg != "HS256" {
		return Claims{}, fmt.Errorf("%w (given %q)", ErrTokenAlg, h.Alg)
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil {
		return Claims{}, fmt.Errorf("%w: signature: %w", ErrTokenMalformed, err)
	}
	if !hmac.Equal(sig, s.mac(parts[0]+"."+parts[1])) {
		return Claims{}, ErrTokenSignature
	}
	var c Claims
	if err := decodePart("claims", parts[1], &c); err != nil {
		return Claims{}, err
	}
	if c.Sub == "" || c.Issuer != Issuer || c.TokenUse != "id" {
		return Claims{}, ErrTokenClaims
	}
	if !s.now().Before(time.Unix(c.Expires, 0)) {
		return Claims{}, ErrTokenExpired
	}
	return c, nil
}

// BearerToken takes the token from an Authorization header: the bare token
// (as the web app and API Gateway's Cognito authorizer use it) or
// "Bearer <token>".
func BearerToken(authorization string) string {
	a := strings.TrimSpace(authorization)
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return a
}
