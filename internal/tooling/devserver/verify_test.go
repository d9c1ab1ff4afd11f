package devserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// claimsOf reads a token's claims without checking it (the server did).
func claimsOf(t *testing.T, tok string) Claims {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a token: %q", tok)
	}
	b, err := b64.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c Claims
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// A local sign-up is confirmed but its address unverified, as in an open
// pool; the code from the outbox verifies it (GetUserAttributeVerificationCode
// and VerifyUserAttribute), and the new token and every later sign-in say
// so, still without the proof of the address.
func TestVerifyEmail(t *testing.T) {
	e := newEnv(t, "example.com")
	tok := e.user("ada@example.com")
	if c := claimsOf(t, tok); c.EmailVerified || c.EmailProof != "" {
		t.Fatalf("a new sign-up's token: %+v; want unverified, no proof", c)
	}
	type body = map[string]string
	if r := e.do("POST", RouteVerifyEmailCode, "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("code without a token: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", RouteVerifyEmailCode, tok, nil); r.status != http.StatusOK {
		t.Fatalf("code: %d %s", r.status, r.raw)
	}
	code := codeIn(t, e, tok, EmailKindVerifyEmail)
	other := e.user("bob@example.com")

	for _, tc := range []struct {
		name, tok string
		in        any
		want      int
		wantCode  string
	}{
		{"no token", "", body{"code": code}, 401, "unauthorized"},
		{"another user's token", other, body{"code": code}, 400, "code_mismatch"},
		{"wrong code", tok, body{"code": "000000x"}, 400, "code_mismatch"},
		{"unknown field", tok, map[string]string{"code": code, "email": "x@example.com"}, 400, "bad_request"},
		{"right code", tok, body{"code": " " + code + " "}, 200, ""},
		{"a code works once", tok, body{"code": code}, 400, "code_mismatch"},
	} {
		r := e.do("POST", RouteVerifyEmail, tc.tok, tc.in)
		if r.status != tc.want || (tc.wantCode != "" && r.body["error"] != tc.wantCode) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.raw, tc.want, tc.wantCode)
		}
		if r.status == http.StatusOK {
			fresh, _ := r.body["idToken"].(string)
			if c := claimsOf(t, fresh); !c.EmailVerified || c.EmailProof != "" || c.Email != "ada@example.com" || r.body["emailVerified"] != true {
				t.Errorf("the answer's token: %+v (%s); want verified, no proof", c, r.raw)
			}
		}
	}
	if c := claimsOf(t, e.signIn("ada@example.com")); !c.EmailVerified || c.EmailProof != "" {
		t.Errorf("a later sign-in: %+v; want verified, no proof", c)
	}
	if c := claimsOf(t, e.signIn("bob@example.com")); c.EmailVerified {
		t.Errorf("another user became verified: %+v", c)
	}
	if strings.Contains(e.logs.String(), code) {
		t.Error("the verification code reached the logs")
	}
}
