package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/identity"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
	"github.com/unschedule/unschedule/internal/tooling/testfixture"
)

func fixture(t *testing.T, name string) events.CognitoEventUserPoolsPreSignup {
	return testfixture.Load[events.CognitoEventUserPoolsPreSignup](t, name)
}

func TestHandle(t *testing.T) {
	for _, tc := range []struct {
		name, allowed, byCode string
		fixture               string
		wantErr               error
		confirmed             bool
	}{
		// An open pool confirms at once, and leaves the address
		// unverified: only a code marks it verified.
		{"open pool accepts and confirms", "", "", "signup.json", nil, true},
		{"open pool, verification off", "", "false", "signup.json", nil, true},
		// An allow-list checks a domain only claimed: the address must
		// be verified by code, so nothing is confirmed or verified here.
		{"allowed domain, other case, verified by code", "example.com", "", "signup.json", nil, false},
		{"allow-list verifies by code even when told not to", "example.com", "false", "signup.json", nil, false},
		{"admin-created user in a listed domain", "example.com, example.org", "", "admin_create.json", nil, false},
		{"open pool verifying by code", "", "true", "signup.json", nil, false},
		{"unlisted domain refused", "example.org", "", "signup.json", identity.ErrSignUpRestricted, false},
		{"subdomain refused", "mail.example.com", "", "signup.json", identity.ErrSignUpRestricted, false},
		{"no email refused", "", "", "signup_no_email.json", identity.ErrNoEmail, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			env := map[string]string{todoenv.AllowedEmailDomains: tc.allowed, todoenv.VerifyEmailByCode: tc.byCode}
			h, err := configure(func(k string) string { return env[k] }, slog.New(slog.NewJSONHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			in := fixture(t, tc.fixture)
			out, err := h.handle(context.Background(), in)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				if out.Response.AutoConfirmUser || out.Response.AutoVerifyEmail {
					t.Fatalf("refused sign-up was confirmed: %+v", out.Response)
				}
				if !strings.Contains(logs.String(), `"level":"WARN"`) || strings.Contains(strings.ToLower(logs.String()), "ada@") {
					t.Fatalf("refusal log: %s", logs.String())
				}
				return
			}
			want := in
			want.Response = events.CognitoEventUserPoolsPreSignupResponse{AutoConfirmUser: tc.confirmed}
			if !reflect.DeepEqual(out, want) {
				t.Fatalf("event %+v, want %+v", out, want)
			}
			b, _ := json.Marshal(out)
			wantJSON := fmt.Sprintf(`"autoConfirmUser":%v,"autoVerifyEmail":false,"autoVerifyPhone":false`, tc.confirmed)
			if !bytes.Contains(b, []byte(wantJSON)) {
				t.Fatalf("response JSON %s, want %s", b, wantJSON)
			}
		})
	}
}

func TestRestrictedMessageTellsTheUser(t *testing.T) {
	if msg := identity.ErrSignUpRestricted.Error(); !strings.Contains(msg, "sign-up is restricted") {
		t.Fatalf("message %q does not say sign-up is restricted", msg)
	}
}

func TestConfigureRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct{ name, domains, byCode, want string }{
		{"bad domain", "example.com,@bad", "", todoenv.AllowedEmailDomains},
		{"verification not a boolean", "", "yes", todoenv.VerifyEmailByCode + ` must be true or false (given "yes")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{todoenv.AllowedEmailDomains: tc.domains, todoenv.VerifyEmailByCode: tc.byCode}
			_, err := configure(func(k string) string { return env[k] }, slog.Default())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one saying %s", err, tc.want)
			}
		})
	}
}
