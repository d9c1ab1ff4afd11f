package devserver

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestCheckPasswordPolicy(t *testing.T) {
	for _, tc := range []struct {
		pw   string
		want string // "" for accepted; else a part of the message
	}{
		{"Password-one1", ""},
		{"Correct horse 1", ""},  // an inner space is a symbol
		{"Kuchen für Zoë 1", ""}, // other letters are allowed, A-Z and a-z still needed
		{"password", "at least 12 characters, an uppercase letter (A-Z), a digit (0-9), a symbol"},
		{"PASSWORD-ONE1", "a lowercase letter"},
		{"Password-one", "a digit"},
		{"Passwordone1", "a symbol"},
		{" Password-one1", "no space at the start or end"},
		{"Password one1 ", "no space at the start or end"},
		{strings.Repeat("Aa1!", 65), "at most 256 characters"},
	} {
		err := CheckPasswordPolicy(tc.pw)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q refused: %v", tc.pw, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: got %v, want an error with %q", tc.pw, err, tc.want)
		}
	}
}

func TestPasswordReset(t *testing.T) {
	e := newEnv(t, "example.com")
	tok := e.user("ada@example.com")
	type body = map[string]string

	// Unknown addresses get the same answer and no email.
	if r := e.do("POST", "/local-auth/forgot-password", "", body{"email": "zed@example.com"}); r.status != http.StatusOK {
		t.Fatalf("forgot, unknown user: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/local-auth/forgot-password", "", body{"email": "ADA@example.com"}); r.status != http.StatusOK {
		t.Fatalf("forgot: %d %s", r.status, r.raw)
	}
	code := resetCodeIn(t, e, tok)

	for _, tc := range []struct {
		name     string
		in       body
		want     int
		wantCode string
	}{
		{"weak new password", body{"email": "ada@example.com", "code": code, "password": "password"}, 400, "invalid_password"},
		{"wrong code", body{"email": "ada@example.com", "code": "000000x", "password": "New-password-2"}, 400, "code_mismatch"},
		{"unknown field", map[string]string{"email": "ada@example.com", "code": code, "password": "New-password-2", "x": "y"}, 400, "bad_request"},
		{"right code", body{"email": "ada@example.com", "code": code, "password": "New-password-2"}, 200, ""},
		{"a code works once", body{"email": "ada@example.com", "code": code, "password": "New-password-3"}, 400, "code_mismatch"},
	} {
		r := e.do("POST", "/local-auth/reset-password", "", tc.in)
		if r.status != tc.want || (tc.wantCode != "" && r.body["error"] != tc.wantCode) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.status, r.raw, tc.want, tc.wantCode)
		}
	}
	if r := e.do("POST", "/local-auth/signin", "", body{"email": "ada@example.com", "password": "Password-one1"}); r.status != http.StatusUnauthorized {
		t.Errorf("old password still works: %d", r.status)
	}
	if r := e.do("POST", "/local-auth/signin", "", body{"email": "ada@example.com", "password": "New-password-2"}); r.status != http.StatusOK {
		t.Errorf("new password refused: %d %s", r.status, r.raw)
	}
	if strings.Contains(e.logs.String(), code) {
		t.Error("the reset code reached the logs")
	}
}

func TestPasswordResetCodeLocksAfterWrongTries(t *testing.T) {
	e := newEnv(t, "example.com")
	tok := e.user("ada@example.com")
	e.do("POST", "/local-auth/forgot-password", "", map[string]string{"email": "ada@example.com"})
	code := resetCodeIn(t, e, tok)
	for i := 0; i < resetAttempts; i++ {
		e.do("POST", "/local-auth/reset-password", "", map[string]string{"email": "ada@example.com", "code": "x", "password": "New-password-2"})
	}
	r := e.do("POST", "/local-auth/reset-password", "", map[string]string{"email": "ada@example.com", "code": code, "password": "New-password-2"})
	if r.status != http.StatusBadRequest {
		t.Fatalf("the right code after %d wrong tries: %d, want 400", resetAttempts, r.status)
	}
}

// resetCodeIn returns the code of the newest reset email in the user's outbox.
func resetCodeIn(t *testing.T, e *env, tok string) string {
	t.Helper()
	return codeIn(t, e, tok, EmailKindPasswordReset)
}

// codeIn returns the code of the newest email of kind in the user's outbox.
func codeIn(t *testing.T, e *env, tok, kind string) string {
	t.Helper()
	r := e.do("GET", "/outbox.json", tok, nil)
	emails, _ := r.body["emails"].([]any)
	code := ""
	for _, m := range emails {
		em, _ := m.(map[string]any)
		if em["kind"] == kind {
			code = regexp.MustCompile(`\b\d{6}\b`).FindString(em["body"].(string))
		}
	}
	if code == "" {
		t.Fatalf("no %s code in the outbox: %s", kind, r.raw)
	}
	return code
}

// TestCodeEmails: the reset and verification emails say what their code
// is for, how long it lives, and what to do if it was not asked for.
func TestCodeEmails(t *testing.T) {
	e := newEnv(t, "example.com")
	tok := e.user("ada@example.com")
	if r := e.do("POST", "/local-auth/forgot-password", "", map[string]string{"email": "ada@example.com"}); r.status != http.StatusOK {
		t.Fatalf("forgot: %d %s", r.status, r.raw)
	}
	if r := e.do("POST", RouteVerifyEmailCode, tok, nil); r.status != http.StatusOK {
		t.Fatalf("verification code: %d %s", r.status, r.raw)
	}
	for _, tc := range []struct{ kind, subject, body string }{
		{EmailKindPasswordReset, "Your Unschedule password reset code", "Your code to choose a new password is %s. It works once, for 60 minutes.\n\n" +
			"If you did not ask for it, ignore this email: your password stays as it is."},
		{EmailKindVerifyEmail, "Your Unschedule verification code", "Your code to verify this email address is %s. It works once, for 60 minutes.\n\n" +
			"If you did not ask for it, ignore this email."},
	} {
		got := e.emails(tok, tc.kind, "")
		if want := fmt.Sprintf(tc.body, codeIn(t, e, tok, tc.kind)); len(got) != 1 || got[0].Subject != tc.subject || got[0].Body != want {
			t.Errorf("%s emails %+v, want one %q: %q", tc.kind, got, tc.subject, want)
		}
	}
}
