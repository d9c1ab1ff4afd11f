package devserver

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	keyA = bytes.Repeat([]byte("a"), 32)
	keyB = bytes.Repeat([]byte("b"), 32)
)

func signer(t *testing.T, key []byte, now *time.Time) *Signer {
	t.Helper()
	s, err := NewSigner(key, time.Hour, func() time.Time { return *now })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forge builds a token from raw header and claims JSON, signed with key
// by HMAC-SHA256 whatever the header says.
func forge(key []byte, header, claims string) string {
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return signed + "." + enc.EncodeToString(m.Sum(nil))
}

func TestTokens(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := signer(t, keyA, &now)
	good, err := s.Sign(Claims{Sub: "sub-1", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	otherClaims := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"sub-2","iss":"unschedule-dev","token_use":"id","exp":1999999999}`))
	exp := now.Add(time.Hour).Unix()
	claims := func(sub, iss, use string) string {
		return `{"sub":"` + sub + `","iss":"` + iss + `","token_use":"` + use + `","exp":` + strconv.FormatInt(exp, 10) + `}`
	}
	for _, tc := range []struct {
		name    string
		token   string
		at      time.Time
		wantErr error
	}{
		{"valid", good, now, nil},
		{"valid until just before exp", good, now.Add(time.Hour - time.Second), nil},
		{"expired at exp", good, now.Add(time.Hour), ErrTokenExpired},
		{"expired later", good, now.Add(48 * time.Hour), ErrTokenExpired},
		{"claims swapped (tampered)", parts[0] + "." + otherClaims + "." + parts[2], now, ErrTokenSignature},
		{"signature changed", parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString([]byte("x")), now, ErrTokenSignature},
		{"signed with another key", signer(t, keyB, &now).mustSign(t), now, ErrTokenSignature},
		{"alg none, no signature", b64.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + ".", now, ErrTokenAlg},
		{"alg HS512 header", forge(keyA, `{"alg":"HS512","typ":"JWT"}`, claims("sub-1", Issuer, "id")), now, ErrTokenAlg},
		{"alg RS256 header", forge(keyA, `{"alg":"RS256"}`, claims("sub-1", Issuer, "id")), now, ErrTokenAlg},
		{"no sub", forge(keyA, `{"alg":"HS256"}`, claims("", Issuer, "id")), now, ErrTokenClaims},
		{"other issuer", forge(keyA, `{"alg":"HS256"}`, claims("sub-1", "someone-else", "id")), now, ErrTokenClaims},
		{"access token, not id", forge(keyA, `{"alg":"HS256"}`, claims("sub-1", Issuer, "access")), now, ErrTokenClaims},
		{"forged well with the right key", forge(keyA, `{"alg":"HS256"}`, claims("sub-9", Issuer, "id")), now, nil},
		{"empty", "", now, ErrTokenMalformed},
		{"two parts", parts[0] + "." + parts[1], now, ErrTokenMalformed},
		{"four parts", good + ".x", now, ErrTokenMalformed},
		{"header not base64", "%%%." + parts[1] + "." + parts[2], now, ErrTokenMalformed},
		{"header not JSON", base64.RawURLEncoding.EncodeToString([]byte("nope")) + "." + parts[1] + "." + parts[2], now, ErrTokenMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.at
			c, err := signer(t, keyA, &at).Verify(tc.token)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err == nil && c.Sub == "" {
				t.Fatalf("claims %+v lack the sub", c)
			}
		})
	}
	t.Run("claims of a good token", func(t *testing.T) {
		c, err := s.Verify(good)
		if err != nil {
			t.Fatal(err)
		}
		want := Claims{Sub: "sub-1", Email: "ada@example.com", Issuer: Issuer, TokenUse: "id", IssuedAt: now.Unix(), Expires: exp}
		if !reflect.DeepEqual(c, want) {
			t.Fatalf("claims %+v, want %+v", c, want)
		}
	})
	t.Run("a sender's claims, named as Cognito's", func(t *testing.T) {
		tok, err := s.Sign(Claims{Sub: "sub-1", Email: "ada@example.com", EmailVerified: true, Groups: []string{"campaign-senders"}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Verify(tok)
		if err != nil || !c.EmailVerified || !reflect.DeepEqual(c.Groups, []string{"campaign-senders"}) {
			t.Fatalf("claims %+v, %v", c, err)
		}
		payload, _ := b64.DecodeString(strings.Split(tok, ".")[1])
		if !strings.Contains(string(payload), `"email_verified":true,"cognito:groups":["campaign-senders"]`) {
			t.Fatalf("payload %s", payload)
		}
	})
}

func (s *Signer) mustSign(t *testing.T) string {
	t.Helper()
	tok, err := s.Sign(Claims{Sub: "sub-1", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestNewSignerRefusesWeakSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  []byte
		ttl  time.Duration
	}{
		{"short key", []byte("short"), time.Hour},
		{"no key", nil, time.Hour},
		{"zero lifetime", keyA, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewSigner(tc.key, tc.ttl, nil); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc.def.ghi", "abc.def.ghi"},
		{"Bearer abc.def.ghi", "abc.def.ghi"},
		{"bearer  abc.def.ghi ", "abc.def.ghi"},
		{"", ""},
		{"Bearer", "Bearer"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := BearerToken(tc.in); got != tc.want {
				t.Fatalf("BearerToken(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestPasswords(t *testing.T) {
	h, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	h2, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(h.Salt, h2.Salt) || bytes.Equal(h.Hash, h2.Hash) {
		t.Fatal("two hashes of one password share a salt or hash")
	}
	tampered := h
	tampered.Hash = append([]byte(nil), h.Hash...)
	tampered.Hash[0] ^= 1
	otherAlg := h
	otherAlg.Algorithm = "md5"
	noIter := h
	noIter.Iterations = 0
	for _, tc := range []struct {
		name string
		hash PasswordHash
		pw   string
		want bool
	}{
		{"right password", h, "correct horse", true},
		{"right password, second hash", h2, "correct horse", true},
		{"wrong password", h, "correct horsf", false},
		{"empty password", h, "", false},
		{"case matters", h, "Correct horse", false},
		{"tampered hash", tampered, "correct horse", false},
		{"unknown algorithm", otherAlg, "correct horse", false},
		{"no iterations", noIter, "correct horse", false},
		{"zero record", PasswordHash{}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CheckPassword(tc.hash, tc.pw); got != tc.want {
				t.Fatalf("CheckPassword = %t, want %t", got, tc.want)
			}
		})
	}
}
