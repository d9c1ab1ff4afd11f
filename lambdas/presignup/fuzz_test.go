package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/todo/todoenv"
)

// FuzzPreSignUp decodes arbitrary JSON as a PreSignUp event and runs the
// trigger with and without an allow-list: never a panic, a sign-up is
// auto-confirmed exactly when it is not refused and the pool is open (an
// allow-list always leaves the address to be verified by code), and no
// email is ever marked verified.
func FuzzPreSignUp(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, restricted bool) {
		var ev events.CognitoEventUserPoolsPreSignup
		if err := json.Unmarshal(b, &ev); err != nil {
			return
		}
		allowed := ""
		if restricted {
			allowed = "example.com"
		}
		env := map[string]string{todoenv.AllowedEmailDomains: allowed}
		h, err := configure(func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		out, err := h.handle(context.Background(), ev)
		if out.Response.AutoVerifyEmail {
			t.Fatal("an email was marked verified without proof")
		}
		confirmed := out.Response.AutoConfirmUser
		if (err == nil && !restricted) != confirmed {
			t.Fatalf("error %v with auto-confirm %v", err, out.Response.AutoConfirmUser)
		}
		if err != nil && (out.Response.AutoConfirmUser || out.Response.AutoVerifyEmail) {
			t.Fatal("a refused sign-up was confirmed")
		}
	})
}
