package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/domain/notify"
	"github.com/unschedule/unschedule/internal/testfixture"
)

func fixture(t *testing.T, name string) events.CognitoEventUserPoolsPreSignup {
	return testfixture.Load[events.CognitoEventUserPoolsPreSignup](t, name)
}

func TestHandle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allowed string
		fixture string
		wantErr error
	}{
		{"open pool accepts", "", "signup.json", nil},
		{"allowed domain, other case", "example.com", "signup.json", nil},
		{"admin-created user in a listed domain", "example.com, example.org", "admin_create.json", nil},
		{"unlisted domain refused", "example.org", "signup.json", notify.ErrSignUpRestricted},
		{"subdomain refused", "mail.example.com", "signup.json", notify.ErrSignUpRestricted},
		{"no email refused", "", "signup_no_email.json", notify.ErrNoEmail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			env := map[string]string{EnvAllowedEmailDomains: tc.allowed}
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
			want.Response = events.CognitoEventUserPoolsPreSignupResponse{AutoConfirmUser: true, AutoVerifyEmail: true}
			if !reflect.DeepEqual(out, want) {
				t.Fatalf("event %+v, want %+v", out, want)
			}
			b, _ := json.Marshal(out)
			if !bytes.Contains(b, []byte(`"autoConfirmUser":true,"autoVerifyEmail":true,"autoVerifyPhone":false`)) {
				t.Fatalf("response JSON %s", b)
			}
		})
	}
}

func TestRestrictedMessageTellsTheUser(t *testing.T) {
	if msg := notify.ErrSignUpRestricted.Error(); !strings.Contains(msg, "sign-up is restricted") {
		t.Fatalf("message %q does not say sign-up is restricted", msg)
	}
}

func TestConfigureRefusesBadDomains(t *testing.T) {
	_, err := configure(func(string) string { return "example.com,@bad" }, slog.Default())
	if err == nil || !strings.Contains(err.Error(), EnvAllowedEmailDomains) {
		t.Fatalf("err %v, want one naming %s", err, EnvAllowedEmailDomains)
	}
}
