package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/identity"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
	"github.com/unschedule/unschedule/internal/tooling/devserver"
)

// options are the command line: the server's settings and the
// listener's.
type options struct {
	devserver.Config
	devserver.RunOptions
	addr        string
	allowRemote bool
	fakeClock   bool // -clock fake: the browser tests' controllable clock
}

// parseOptions reads the command line; a refusal is also written to stderr.
func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (port 0 picks a free one)")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow an -addr that other machines can reach (not a loopback address)")
	fs.StringVar(&o.DataDir, "data", ".dev-data", "folder of the saved state (tasks, schedules, users, outbox, campaigns)")
	fs.StringVar(&o.WebDir, "web", filepath.Join("web", "dist"), "the built web app (cd web && npm ci && npm run build)")
	domains := fs.String("allowed-email-domains", getenv(todoenv.AllowedEmailDomains),
		"comma-separated email domains allowed to sign up (default $"+todoenv.AllowedEmailDomains+"; empty: everyone)")
	senders := fs.String("campaign-senders", "",
		"comma-separated addresses (ada@example.com) or domains (@example.com) whose users may send campaigns (default: nobody; others get 403)")
	vite := fs.Bool("allow-vite", true, "also allow the Vite dev server's origins (http://localhost:5173) for CORS")
	fs.DurationVar(&o.TokenTTL, "token-ttl", 12*time.Hour, "how long a sign-in lasts")
	fs.DurationVar(&o.StepEvery, "step", 200*time.Millisecond, "how often the pipeline steps (schedules fire within this of their time)")
	fs.DurationVar(&o.ReconcileEvery, "reconcile-every", 5*time.Minute, "how often the reconciler runs (it also runs at start)")
	timer := fs.String("timer", "scheduler", "timer that fires the tasks: scheduler, stepfunctions or ttl (in-memory stand-ins)")
	fs.DurationVar(&o.TTLMaxDelay, "ttl-max-delay", time.Minute, "with -timer=ttl, the sweeper deletes a marker up to this long after its due time (AWS: up to about 48h)")
	clockName := fs.String("clock", "wall", "the server's clock: wall, or fake for browser tests (it runs with the wall clock and "+
		"POST /__dev/clock/advance {\"seconds\":N} moves it ahead and runs what became due; loopback only)")
	if err := fs.Parse(args); err != nil {
		return o, err // the flag set has written it
	}
	err := func() (err error) {
		switch *clockName {
		case "wall":
		case "fake":
			o.fakeClock = true
		default:
			return fmt.Errorf("-clock %q: use wall (the default) or fake (browser tests)", *clockName)
		}
		if o.Timer, err = timerkind.Parse(*timer); err != nil {
			return fmt.Errorf("-timer: %w", err)
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("unexpected arguments %q: every setting is a flag", fs.Args())
		}
		if err := checkListenAddr(o.addr, o.allowRemote); err != nil {
			return err
		}
		if o.fakeClock && o.allowRemote {
			return errors.New("-clock fake lets any caller move the server's time: it cannot be combined with -allow-remote")
		}
		if o.AllowedEmailDomains, err = identity.ParseDomains(*domains); err != nil {
			return fmt.Errorf("-allowed-email-domains: %w", err)
		}
		if o.CampaignSenders, err = parseSenders(*senders); err != nil {
			return fmt.Errorf("-campaign-senders: %w", err)
		}
		for name, d := range map[string]time.Duration{"-token-ttl": o.TokenTTL, "-step": o.StepEvery, "-reconcile-every": o.ReconcileEvery} {
			if d <= 0 {
				return fmt.Errorf("%s must be positive (given %s)", name, d)
			}
		}
		if *vite {
			o.ExtraOrigins = []string{"http://localhost:5173", "http://127.0.0.1:5173"}
		}
		return nil
	}()
	if err != nil {
		fmt.Fprintln(stderr, err)
	}
	return o, err
}

// parseSenders reads -campaign-senders: addresses ("ada@example.com") and
// whole domains ("@example.com"), comma-separated.
func parseSenders(csv string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(csv, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		at := strings.LastIndexByte(f, '@')
		if at < 0 || strings.ContainsAny(f, " \t<>") || !strings.Contains(f[at:], ".") || strings.HasSuffix(f, ".") {
			return nil, fmt.Errorf("%q is neither an address nor a domain: list addresses such as ada@example.com or domains such as @example.com", f)
		}
		out = append(out, f)
	}
	return out, nil
}

// checkListenAddr refuses a listen address that other machines can reach
// unless allowRemote: the dev server has no TLS, lets anyone sign up, and
// keeps everyone's tasks and mail.
func checkListenAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q is not host:port: use, for example, 127.0.0.1:8080", addr)
	}
	if allowRemote || devserver.LoopbackHost(host) {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "every interface"
	}
	return fmt.Errorf("-addr %s would listen on %s, which other machines can reach: anyone there could sign up and use this "+
		"unencrypted dev server; listen on a loopback address such as 127.0.0.1:8080, or pass -allow-remote to do it anyway", addr, shown)
}

// remoteHosts are the Host header values the server also answers to when
// remote access is allowed: the listen host, or, for an unspecified one
// (":8080", "0.0.0.0:8080"), every address of this machine's interfaces.
func remoteHosts(addr string, allowRemote bool, interfaceAddrs func() ([]net.Addr, error)) ([]string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !allowRemote || devserver.LoopbackHost(host) {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return []string{host}, nil
	}
	addrs, err := interfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list this machine's addresses for the Host check: %w", err)
	}
	var hosts []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			hosts = append(hosts, n.IP.String())
		}
	}
	return hosts, nil
}

// run serves until ctx ends, then shuts down: no new requests, a last
// pipeline step, state saved, store closed. It writes the ready line to
// stdout once the server accepts connections.
func run(ctx context.Context, o options, stdout io.Writer, log *slog.Logger) error {
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	defer ln.Close()
	url := "http://" + ln.Addr().String()
	web := o.WebDir
	if _, err := os.Stat(filepath.Join(web, "index.html")); err != nil {
		log.Warn("the web app is not built: serving the API only; run `make dev`, or `cd web && npm ci && npm run build`",
			"web", web)
		web = ""
	}
	hosts, err := remoteHosts(o.addr, o.allowRemote, net.InterfaceAddrs)
	if err != nil {
		return err
	}
	if o.allowRemote {
		log.Warn("listening beyond this machine (-allow-remote): anyone who can reach it can sign up and use it",
			"addr", ln.Addr().String(), "hosts", hosts)
	}
	cfg := o.Config
	cfg.WebDir = web
	cfg.PublicURL = url
	cfg.AllowedHosts = hosts
	cfg.Log = log
	if o.fakeClock {
		cfg.FakeClock = clock.NewFake(time.Now())
		log.Warn("fake clock (-clock fake): POST /__dev/clock/advance moves the server's time ahead; for browser tests only")
	}
	srv, err := devserver.Open(cfg)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	hs.RegisterOnShutdown(srv.StopStreams) // campaign progress streams stay open until then
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		srv.Run(runCtx, o.RunOptions)
	}()
	log.Info("dev server ready", "url", url, "data", o.DataDir, "web", web)
	fmt.Fprintf(stdout, "Unschedule dev server: %s\n", url)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shutErr := hs.Shutdown(shutCtx)
	stopRun()
	<-ran
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return errors.Join(serveErr, shutErr, srv.Close())
}
