package pagecursor_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/unschedule/unschedule/internal/core/pagecursor"
)

func sealer(t testing.TB, secret string) *pagecursor.Sealer {
	t.Helper()
	s, err := pagecursor.New([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var ctx = context.Background()

func seal(t testing.TB, s *pagecursor.Sealer, sc pagecursor.Scope, pos string) string {
	t.Helper()
	c, err := s.Seal(ctx, sc, pos)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const secret = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01"

var scope = pagecursor.Scope{Route: "/campaigns/{id}", Owner: "u1", Filter: "c1"}

func TestRoundTripIsOpaque(t *testing.T) {
	s := sealer(t, secret)
	for _, pos := range []string{"5", "eyJwayI6IkMjYzIifQ", "a\x00b", string(bytes.Repeat([]byte("k"), 4096))} {
		c := seal(t, s, scope, pos)
		if len(pos) >= 4 && bytes.Contains([]byte(c), []byte(pos)) || len(pos) >= 4 && bytes.Contains([]byte(c), []byte(base64.RawURLEncoding.EncodeToString([]byte(pos)))) {
			t.Errorf("cursor %q shows its position %q", c, pos)
		}
		got, err := s.Open(ctx, scope, c)
		if err != nil || got != pos {
			t.Errorf("Open(Seal(%q)) = %q, %v", pos, got, err)
		}
	}
	if c := seal(t, s, scope, ""); c != "" {
		t.Errorf("the end sealed to %q, want \"\"", c)
	}
	if p, err := s.Open(ctx, scope, ""); p != "" || err != nil {
		t.Errorf("Open(\"\") = %q, %v: want the first page", p, err)
	}
}

// Every cursor this sealer did not hand out for this scope is refused.
func TestOnlyIssuedCursorsOpen(t *testing.T) {
	s := sealer(t, secret)
	c := seal(t, s, scope, "the position")
	raw, _ := base64.RawURLEncoding.DecodeString(c)
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	cases := map[string]struct {
		scope  pagecursor.Scope
		cursor string
	}{
		"cut short by 4":                 {scope, c[:len(c)-4]},
		"cut short by 1":                 {scope, c[:len(c)-1]},
		"a byte changed (first)":         {scope, flip(0)},
		"a byte changed (nonce)":         {scope, flip(3)},
		"a byte changed (last)":          {scope, flip(len(raw) - 1)},
		"a character changed":            {scope, c[:10] + other(c[10]) + c[11:]},
		"never issued (a bare offset)":   {scope, "3"},
		"never issued (base64 of a key)": {scope, base64.RawURLEncoding.EncodeToString([]byte(`{"pk":"C#c2"}`))},
		"not base64":                     {scope, "%%%"},
		"padded base64":                  {scope, c + "=="},
		"another owner":                  {pagecursor.Scope{Route: scope.Route, Owner: "u2", Filter: scope.Filter}, c},
		"another filter":                 {pagecursor.Scope{Route: scope.Route, Owner: scope.Owner, Filter: "c2"}, c},
		"another route":                  {pagecursor.Scope{Route: "/campaigns", Owner: scope.Owner, Filter: scope.Filter}, c},
		"parts shifted":                  {pagecursor.Scope{Route: scope.Route + "u1", Owner: "", Filter: scope.Filter}, c},
		"another secret":                 {scope, seal(t, sealer(t, secret[1:]+"x"), scope, "the position")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if p, err := s.Open(ctx, tc.scope, tc.cursor); !errors.Is(err, pagecursor.ErrInvalid) {
				t.Fatalf("Open = %q, %v; want ErrInvalid", p, err)
			}
		})
	}
}

// other is another base64url character than b.
func other(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}

// A lazy sealer reads its secret on first use only, and again after a
// failed read.
func TestLazyReadsTheSecretOnFirstUse(t *testing.T) {
	reads, fail := 0, true
	s := pagecursor.Lazy(func(context.Context) ([]byte, error) {
		reads++
		if fail {
			return nil, errors.New("throttled")
		}
		return []byte(secret), nil
	})
	if c, err := s.Seal(ctx, scope, ""); c != "" || err != nil || reads != 0 {
		t.Fatalf("the last page read the secret: %q %v %d", c, err, reads)
	}
	if _, err := s.Seal(ctx, scope, "5"); err == nil || errors.Is(err, pagecursor.ErrInvalid) {
		t.Fatalf("a failed read: %v, want the load error", err)
	}
	fail = false
	c := seal(t, s, scope, "5")
	if p, err := s.Open(ctx, scope, c); p != "5" || err != nil || reads != 2 {
		t.Fatalf("Open = %q %v after %d reads, want 2", p, err, reads)
	}
	if p, _ := sealer(t, secret).Open(ctx, scope, c); p != "5" {
		t.Fatalf("the same secret did not open it: %q", p)
	}
}

func TestShortSecretIsRefused(t *testing.T) {
	if _, err := pagecursor.New([]byte("short")); err == nil {
		t.Fatal("a 5-byte secret was accepted")
	}
}

// FuzzOpen: no input panics Open, and whatever opens was sealed.
func FuzzOpen(f *testing.F) {
	s := sealer(f, secret)
	f.Add(seal(f, s, scope, "5"))
	f.Add("3")
	f.Add("")
	f.Add("AQ")
	f.Fuzz(func(t *testing.T, cursor string) {
		p, err := s.Open(ctx, scope, cursor)
		if err == nil && cursor != "" && p != "5" {
			t.Fatalf("a cursor never sealed opened: %q -> %q", cursor, p)
		}
	})
}
