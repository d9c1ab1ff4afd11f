package unsubscribe_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

var secret = bytes.Repeat([]byte{7}, unsubscribe.MinSecretBytes)

func signer(t *testing.T, key []byte) *unsubscribe.Signer {
	t.Helper()
	s, err := unsubscribe.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSignerRefusesAShortSecret(t *testing.T) {
	if _, err := unsubscribe.NewSigner(secret[:unsubscribe.MinSecretBytes-1]); err == nil {
		t.Fatal("a 31-byte secret was taken")
	}
}

func TestTokenRoundTrip(t *testing.T) {
	s := signer(t, secret)
	for _, c := range []unsubscribe.Claims{
		{Sender: "news@x.io", Address: "bob@y.io", Campaign: "c1"},
		{Sender: "news@x.io", Address: "Bob+tag@Y.io", Campaign: ""},
		{Sender: "a@b.c", Address: "\"odd local\"@y.io", Campaign: "c-00001"},
	} {
		tok, err := s.Token(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Verify(tok)
		if err != nil || got != c {
			t.Errorf("Verify(Token(%+v)) = %+v, %v", c, got, err)
		}
	}
}

func TestVerifyRefuses(t *testing.T) {
	s := signer(t, secret)
	c := unsubscribe.Claims{Sender: "news@x.io", Address: "bob@y.io", Campaign: "c1"}
	tok, _ := s.Token(c)
	other, _ := signer(t, bytes.Repeat([]byte{8}, 32)).Token(c)
	enc, sig, _ := strings.Cut(tok, ".")
	forged := base64.RawURLEncoding.EncodeToString([]byte("v1\nnews@x.io\nalice@y.io\nc1")) + "." + sig // another address, the old MAC
	flipped := enc + "." + string(rune(sig[0]^1)) + sig[1:]
	for _, c := range []struct {
		name, token string
		want        error
	}{
		{"empty", "", unsubscribe.ErrMalformed},
		{"no dot", enc, unsubscribe.ErrMalformed},
		{"no signature", enc + ".", unsubscribe.ErrMalformed},
		{"not base64", "***." + sig, unsubscribe.ErrMalformed},
		{"a short signature", enc + "." + sig[:10], unsubscribe.ErrMalformed},
		{"another secret's token", other, unsubscribe.ErrBadSignature},
		{"another address under the old signature", forged, unsubscribe.ErrBadSignature},
		{"a flipped signature bit", flipped, unsubscribe.ErrBadSignature},
		{"a cut payload", enc[:len(enc)-2] + "." + sig, unsubscribe.ErrBadSignature},
	} {
		if _, err := s.Verify(c.token); !errors.Is(err, c.want) {
			t.Errorf("%s: Verify = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestTokenRefusesBadClaims(t *testing.T) {
	s := signer(t, secret)
	for _, c := range []unsubscribe.Claims{{Sender: "", Address: "b@y.io"}, {Sender: "a@x.io", Address: ""}, {Sender: "a@x.io", Address: "b@y.io\nc@y.io"}} {
		if _, err := s.Token(c); err == nil {
			t.Errorf("Token(%+v) succeeded", c)
		}
	}
}

func TestLinksHeadersFooter(t *testing.T) {
	sg := signer(t, secret)
	l := unsubscribe.Links{Base: "https://api.example.com/prod/unsubscribe", Keys: unsubscribe.StaticKeys(sg)}
	u, err := l.URL(context.Background(), unsubscribe.Claims{Sender: "news@x.io", Address: "bob@y.io", Campaign: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "https" || p.Path != "/prod/unsubscribe" {
		t.Fatalf("URL = %q (%v)", u, err)
	}
	if got, err := sg.Verify(p.Query().Get("token")); err != nil || got.Address != "bob@y.io" {
		t.Errorf("the URL's token = %+v, %v", got, err)
	}
	h := unsubscribe.Headers(u)
	if h[0] != [2]string{"List-Unsubscribe", "<" + u + ">"} || h[1] != [2]string{"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"} {
		t.Errorf("Headers = %v", h)
	}
	if f := unsubscribe.Footer("Hello\n\n", u); !strings.HasPrefix(f, "Hello\n\n--\n") || !strings.Contains(f, u) {
		t.Errorf("Footer = %q", f)
	}
	if _, err := (unsubscribe.Links{}).URL(context.Background(), unsubscribe.Claims{Sender: "a@x.io", Address: "b@y.io"}); err == nil {
		t.Error("URL without a base succeeded")
	}
}

type failingStore struct{ suppress.Store }

func (failingStore) Add(context.Context, suppress.Entry) (bool, error) {
	return false, errors.New("throttled")
}

func TestPage(t *testing.T) {
	s := signer(t, secret)
	good, _ := s.Token(unsubscribe.Claims{Sender: "news@x.io", Address: "Bob@Y.io", Campaign: "c1"})
	forged, _ := signer(t, bytes.Repeat([]byte{9}, 32)).Token(unsubscribe.Claims{Sender: "news@x.io", Address: "bob@y.io"})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name       string
		req        unsubscribe.Request
		broken     bool
		status     int
		body       string // a substring
		suppressed bool
	}{
		{"GET shows the page and a button that POSTs; nothing suppressed", unsubscribe.Request{Method: "GET", Token: good}, false, 200, `<form method="post"`, false},
		{"one-click POST suppresses", unsubscribe.Request{Method: "POST", Token: good}, false, 200, "Unsubscribed", true},
		{"POST as JSON", unsubscribe.Request{Method: "POST", Token: good, Accept: "application/json"}, false, 200, `"unsubscribed":true`, true},
		{"no token: 400 naming it", unsubscribe.Request{Method: "POST"}, false, 400, "token query parameter is required", false},
		{"forged token: 400, HTML", unsubscribe.Request{Method: "POST", Token: forged}, false, 400, "signature does not match", false},
		{"forged token: 400, JSON naming the field", unsubscribe.Request{Method: "GET", Token: forged, Accept: "application/json"}, false, 400, `"field":"token"`, false},
		{"malformed token", unsubscribe.Request{Method: "GET", Token: "abc"}, false, 400, "malformed", false},
		{"another method", unsubscribe.Request{Method: "DELETE", Token: good}, false, 405, "POST", false},
		{"the store fails: 503, retry", unsubscribe.Request{Method: "POST", Token: good}, true, 503, "try again", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewSuppressions()
			var store suppress.Store = mem
			if c.broken {
				store = failingStore{mem}
			}
			p := &unsubscribe.Page{Keys: unsubscribe.StaticKeys(s), Store: store, Clock: clock.NewFake(at), Log: log}
			res := p.Serve(context.Background(), c.req)
			if res.Status != c.status || !strings.Contains(res.Body, c.body) {
				t.Fatalf("Serve = %d %q, want %d with %q", res.Status, res.Body, c.status, c.body)
			}
			if res.Headers["Content-Type"] == "" {
				t.Error("no Content-Type")
			}
			e, ok, _ := mem.Get(context.Background(), "bob@y.io")
			if ok != c.suppressed {
				t.Fatalf("suppressed = %v, want %v", ok, c.suppressed)
			}
			if ok && (e.Reason != suppress.Unsubscribe || !e.At.Equal(at)) {
				t.Errorf("entry = %+v", e)
			}
		})
	}
	t.Run("a repeated POST answers 200 again", func(t *testing.T) {
		p := &unsubscribe.Page{Keys: unsubscribe.StaticKeys(s), Store: memory.NewSuppressions(), Clock: clock.NewFake(at), Log: log}
		for i := 0; i < 2; i++ {
			if res := p.Serve(context.Background(), unsubscribe.Request{Method: http.MethodPost, Token: good}); res.Status != 200 {
				t.Fatalf("POST #%d = %d", i+1, res.Status)
			}
		}
	})
}

func TestKeysLoadOnceAndRetryAfterAFailure(t *testing.T) {
	calls := 0
	fail := true
	k := unsubscribe.LoadKeys(func(context.Context) ([]byte, error) {
		calls++
		if fail {
			return nil, errors.New("AccessDenied")
		}
		return secret, nil
	})
	if _, err := k.Signer(context.Background()); !errors.Is(err, unsubscribe.ErrNoSecret) {
		t.Fatalf("first load = %v, want ErrNoSecret", err)
	}
	p := &unsubscribe.Page{Keys: k, Store: memory.NewSuppressions(), Clock: clock.NewFake(time.Now()), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if res := p.Serve(context.Background(), unsubscribe.Request{Method: "GET", Token: "a.b"}); res.Status != 503 {
		t.Errorf("without a secret the page answers %d, want 503", res.Status)
	}
	fail = false
	for i := 0; i < 3; i++ {
		if _, err := k.Signer(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 3 {
		t.Errorf("loaded %d times, want 3 (two failures, then once)", calls)
	}
	short := unsubscribe.LoadKeys(func(context.Context) ([]byte, error) { return []byte("short"), nil })
	if _, err := short.Signer(context.Background()); !errors.Is(err, unsubscribe.ErrNoSecret) {
		t.Errorf("a short secret = %v, want ErrNoSecret", err)
	}
}
