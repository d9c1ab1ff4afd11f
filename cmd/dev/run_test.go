package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
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
			return o.addr == "127.0.0.1:8080" && o.DataDir == ".dev-data" && o.WebDir == filepath.Join("web", "dist") &&
				o.AllowedEmailDomains == nil && o.StepEvery == 200*time.Millisecond && o.ReconcileEvery == 5*time.Minute && len(o.ExtraOrigins) == 2
		}, false},
		{"flags", []string{"-addr", "127.0.0.1:0", "-data", "/tmp/x", "-web", "dist", "-step", "1s", "-allow-vite=false"}, nil,
			func(o options) bool {
				return o.addr == "127.0.0.1:0" && o.DataDir == "/tmp/x" && o.WebDir == "dist" && o.StepEvery == time.Second && o.ExtraOrigins == nil
			}, false},
		{"allow-list from the environment", nil, map[string]string{todoenv.AllowedEmailDomains: "example.com, example.org"},
			func(o options) bool {
				return reflect.DeepEqual(o.AllowedEmailDomains, []string{"example.com", "example.org"})
			}, false},
		{"flag beats the environment", []string{"-allowed-email-domains", "example.net"}, map[string]string{todoenv.AllowedEmailDomains: "example.com"},
			func(o options) bool { return reflect.DeepEqual(o.AllowedEmailDomains, []string{"example.net"}) }, false},
		{"bad domain", []string{"-allowed-email-domains", "@example.com"}, nil, nil, true},
		{"no campaign senders by default", nil, nil, func(o options) bool { return o.CampaignSenders == nil }, false},
		{"campaign senders", []string{"-campaign-senders", "ada@example.com, @example.org,"}, nil,
			func(o options) bool {
				return reflect.DeepEqual(o.CampaignSenders, []string{"ada@example.com", "@example.org"})
			}, false},
		{"campaign sender without @", []string{"-campaign-senders", "example.com"}, nil, nil, true},
		{"campaign sender domain without a dot", []string{"-campaign-senders", "@localhost"}, nil, nil, true},
		{"localhost", []string{"-addr", "localhost:9000"}, nil, func(o options) bool { return o.addr == "localhost:9000" && !o.allowRemote }, false},
		{"IPv6 loopback", []string{"-addr", "[::1]:9000"}, nil, func(o options) bool { return o.addr == "[::1]:9000" }, false},
		{"another loopback address", []string{"-addr", "127.0.0.2:9000"}, nil, func(o options) bool { return true }, false},
		{"every interface, refused", []string{"-addr", "0.0.0.0:8080"}, nil, nil, true},
		{"every interface, no host, refused", []string{"-addr", ":8080"}, nil, nil, true},
		{"IPv6 every interface, refused", []string{"-addr", "[::]:8080"}, nil, nil, true},
		{"LAN address, refused", []string{"-addr", "192.168.1.20:8080"}, nil, nil, true},
		{"host name, refused", []string{"-addr", "devbox.lan:8080"}, nil, nil, true},
		{"every interface with -allow-remote", []string{"-addr", "0.0.0.0:8080", "-allow-remote"}, nil,
			func(o options) bool { return o.addr == "0.0.0.0:8080" && o.allowRemote }, false},
		{"LAN address with -allow-remote", []string{"-allow-remote", "-addr", "192.168.1.20:8080"}, nil,
			func(o options) bool { return o.allowRemote }, false},
		{"not host:port", []string{"-addr", "8080"}, nil, nil, true},
		{"zero step", []string{"-step", "0s"}, nil, nil, true},
		{"stray argument", []string{"serve"}, nil, nil, true},
		{"unknown flag", []string{"-port", "1"}, nil, nil, true},
		{"default timer", nil, nil, func(o options) bool { return o.Timer == timerspec.EventBridgeScheduler }, false},
		{"step functions timer", []string{"-timer=stepfunctions"}, nil, func(o options) bool { return o.Timer == timerspec.StepFunctions }, false},
		{"ttl timer with its delay", []string{"-timer", "ttl", "-ttl-max-delay", "5s"}, nil,
			func(o options) bool { return o.Timer == timerspec.TTL && o.TTLMaxDelay == 5*time.Second }, false},
		{"unknown timer", []string{"-timer", "cron"}, nil, nil, true},
		{"wall clock by default", nil, nil, func(o options) bool { return !o.fakeClock }, false},
		{"fake clock", []string{"-clock", "fake"}, nil, func(o options) bool { return o.fakeClock }, false},
		{"wall clock named", []string{"-clock=wall"}, nil, func(o options) bool { return !o.fakeClock }, false},
		{"unknown clock", []string{"-clock", "virtual"}, nil, nil, true},
		{"fake clock with -allow-remote, refused", []string{"-clock", "fake", "-allow-remote", "-addr", "0.0.0.0:8080"}, nil, nil, true},
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

// TestRemoteAddressRefusal: the refusal names the flag to pass.
func TestRemoteAddressRefusal(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "10.0.0.5:8080", "devbox.lan:80"} {
		t.Run(addr, func(t *testing.T) {
			var stderr strings.Builder
			_, err := parseOptions([]string{"-addr", addr}, func(string) string { return "" }, &stderr)
			if err == nil || !strings.Contains(err.Error(), "-allow-remote") || !strings.Contains(err.Error(), "127.0.0.1:8080") ||
				!strings.Contains(stderr.String(), err.Error()) {
				t.Fatalf("err %v, stderr %q: want a refusal that names -allow-remote and a loopback address", err, stderr.String())
			}
		})
	}
}

func TestRemoteHosts(t *testing.T) {
	ifaces := func() ([]net.Addr, error) {
		return []net.Addr{&net.IPNet{IP: net.ParseIP("127.0.0.1"), Mask: net.CIDRMask(8, 32)},
			&net.IPNet{IP: net.ParseIP("192.168.1.20"), Mask: net.CIDRMask(24, 32)},
			&net.IPNet{IP: net.ParseIP("fe80::1"), Mask: net.CIDRMask(64, 128)}}, nil
	}
	for _, tc := range []struct {
		name, addr  string
		allowRemote bool
		want        []string
	}{
		{"loopback", "127.0.0.1:8080", false, nil},
		{"loopback, remote allowed", "127.0.0.1:8080", true, nil},
		{"LAN address", "192.168.1.20:8080", true, []string{"192.168.1.20"}},
		{"host name", "devbox.lan:8080", true, []string{"devbox.lan"}},
		{"every interface", "0.0.0.0:8080", true, []string{"127.0.0.1", "192.168.1.20", "fe80::1"}},
		{"no host", ":8080", true, []string{"127.0.0.1", "192.168.1.20", "fe80::1"}},
		{"IPv6 every interface", "[::]:8080", true, []string{"127.0.0.1", "192.168.1.20", "fe80::1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := remoteHosts(tc.addr, tc.allowRemote, ifaces)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%v %v, want %v", got, err, tc.want)
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
		port := strings.TrimPrefix(url, "http://127.0.0.1:")
		for _, tc := range []struct {
			path, host string
			status     int
			want       string
		}{
			{"/", "", 200, "<title>app</title>"},
			{"/config.json", "", 200, `"mode":"local"`},
			{"/config.json", "localhost:" + port, 200, `"mode":"local"`},
			{"/outbox.json", "", 401, `"error":"unauthorized"`},
			{"/config.json", "rebound.example:" + port, 421, `"error":"misdirected_request"`},
			{"/__dev/clock", "", 404, "not found"}, // the wall clock: no clock endpoints
		} {
			t.Run(tc.path+" "+tc.host, func(t *testing.T) {
				req, _ := http.NewRequest("GET", url+tc.path, nil)
				if tc.host != "" {
					req.Host = tc.host
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
					t.Fatalf("round %d: %d %s", round, resp.StatusCode, b)
				}
			})
		}
		if round == 0 {
			resp, err := http.Post(url+"/local-auth/signup", "application/json", strings.NewReader(`{"email":"ada@example.com","password":"Password-one1"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("sign-up: %d", resp.StatusCode)
			}
		} else {
			resp, err := http.Post(url+"/local-auth/signin", "application/json", strings.NewReader(`{"email":"ada@example.com","password":"Password-one1"}`))
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

// TestRunFakeClock: with -clock fake the command serves the clock's
// endpoints, and an advance moves the time it reports.
func TestRunFakeClock(t *testing.T) {
	o, err := parseOptions([]string{"-addr", "127.0.0.1:0", "-data", t.TempDir(), "-web", t.TempDir(), "-clock", "fake"},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
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
	go io.Copy(io.Discard, pr)
	url := strings.TrimPrefix(strings.TrimSpace(line), "Unschedule dev server: ")
	read := func(resp *http.Response, err error) time.Time {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Now time.Time }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d (%v)", resp.Request.URL.Path, resp.StatusCode, err)
		}
		return out.Now
	}
	before := read(http.Get(url + "/__dev/clock"))
	after := read(http.Post(url+"/__dev/clock/advance", "application/json", strings.NewReader(`{"seconds":3600}`)))
	if d := after.Sub(before); d < time.Hour || d > time.Hour+time.Minute {
		t.Errorf("advanced by %v, want an hour", d)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}
