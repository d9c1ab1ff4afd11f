package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(o options) bool
		wantErr bool
	}{
		{"defaults", nil, nil, func(o options) bool {
			return o.addr == "127.0.0.1:8080" && o.dataDir == ".dev-data" && o.webDir == filepath.Join("web", "dist") &&
				o.domains == nil && o.stepEvery == 200*time.Millisecond && o.reconcileEvery == 5*time.Minute && len(o.origins) == 2
		}, false},
		{"flags", []string{"-addr", "127.0.0.1:0", "-data", "/tmp/x", "-web", "dist", "-step", "1s", "-allow-vite=false"}, nil,
			func(o options) bool {
				return o.addr == "127.0.0.1:0" && o.dataDir == "/tmp/x" && o.webDir == "dist" && o.stepEvery == time.Second && o.origins == nil
			}, false},
		{"allow-list from the environment", nil, map[string]string{EnvAllowedEmailDomains: "example.com, example.org"},
			func(o options) bool { return reflect.DeepEqual(o.domains, []string{"example.com", "example.org"}) }, false},
		{"flag beats the environment", []string{"-allowed-email-domains", "example.net"}, map[string]string{EnvAllowedEmailDomains: "example.com"},
			func(o options) bool { return reflect.DeepEqual(o.domains, []string{"example.net"}) }, false},
		{"bad domain", []string{"-allowed-email-domains", "@example.com"}, nil, nil, true},
		{"zero step", []string{"-step", "0s"}, nil, nil, true},
		{"stray argument", []string{"serve"}, nil, nil, true},
		{"unknown flag", []string{"-port", "1"}, nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseOptions(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %t", err, tc.wantErr)
			}
			if err == nil && !tc.check(o) {
				t.Fatalf("options %+v", o)
			}
		})
	}
}

// TestRunServesAndStops starts the command on a free port with a web
// folder, waits for its ready line, uses it, stops it with the context
// (as SIGINT does) and checks it saved its state and released the folder.
func TestRunServesAndStops(t *testing.T) {
	web := t.TempDir()
	if err := os.WriteFile(filepath.Join(web, "index.html"), []byte("<!doctype html><title>app</title>"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	o, err := parseOptions([]string{"-addr", "127.0.0.1:0", "-data", data, "-web", web}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 { // the second run reopens the folder the first one released
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, o, pw, slog.New(slog.NewJSONHandler(io.Discard, nil)))
			pw.Close()
		}()
		line, err := bufio.NewReader(pr).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		url, ok := strings.CutPrefix(strings.TrimSpace(line), "Unschedule dev server: ")
		if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("ready line %q", line)
		}
		go io.Copy(io.Discard, pr)
		for _, tc := range []struct{ path, want string }{
			{"/", "<title>app</title>"},
			{"/config.json", `"mode":"local"`},
		} {
			t.Run(tc.path, func(t *testing.T) {
				resp, err := http.Get(url + tc.path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 || !strings.Contains(string(b), tc.want) {
					t.Fatalf("round %d: %d %s", round, resp.StatusCode, b)
				}
			})
		}
		if round == 0 {
			resp, err := http.Post(url+"/local-auth/signup", "application/json", strings.NewReader(`{"email":"ada@example.com","password":"password1"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("sign-up: %d", resp.StatusCode)
			}
		} else {
			resp, err := http.Post(url+"/local-auth/signin", "application/json", strings.NewReader(`{"email":"ada@example.com","password":"password1"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("sign-in after restart: %d", resp.StatusCode)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("run: %v", err)
		}
	}
}
