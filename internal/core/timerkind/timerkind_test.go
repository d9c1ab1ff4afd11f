package timerkind

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// swap runs the test on an empty registry, and restores the registry
// after it.
func swap(t *testing.T) {
	mu.Lock()
	saved := kinds
	kinds = nil
	mu.Unlock()
	t.Cleanup(func() { mu.Lock(); kinds = saved; mu.Unlock() })
}

func kind(name string, spellings ...string) Kind {
	return Kind{Name: timerspec.Name(name), Spellings: spellings,
		Load:   func(*lambdaenv.Env) Settings { return Settings{} },
		New:    func(aws.Config, Settings) (Timer, error) { return nil, nil },
		Memory: func(MemoryOptions) Standin { return nil }}
}

// TestRegisterRefuses: a kind without a part, a name or spelling taken,
// and a second default panic, naming the kind.
func TestRegisterRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first []Kind
		k     Kind
		want  string
	}{
		{"no Load", nil, func() Kind { k := kind("A"); k.Load = nil; return k }(), "needs a Name, Load, New and Memory"},
		{"no name", nil, kind(""), "needs a Name"},
		{"a name taken", []Kind{kind("A")}, kind("A"), `"A" is already A`},
		{"a spelling taken, in another case", []Kind{kind("A", "alpha")}, kind("B", "ALPHA"), `"ALPHA" is already A`},
		{"two defaults", []Kind{func() Kind { k := kind("A"); k.Default = true; return k }()},
			func() Kind { k := kind("B"); k.Default = true; return k }(), "A is already the default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			swap(t)
			for _, k := range tc.first {
				Register(k)
			}
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, tc.want) {
					t.Fatalf("panic %q, want one with %q", r, tc.want)
				}
			}()
			Register(tc.k)
		})
	}
}

// TestParseAndNames: "" is the default kind, spellings are read in any
// case, the default is named first, and an unknown name lists the kinds.
func TestParseAndNames(t *testing.T) {
	swap(t)
	Register(kind("B", "bee"))
	d := kind("A")
	d.Default = true
	Register(d)
	for in, want := range map[string]timerspec.Name{"": "A", "a": "A", "B": "B", "BEE": "B"} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Parse("c"); err == nil || !strings.Contains(err.Error(), "A, B") {
		t.Errorf("Parse(c): %v, want an error naming A, B", err)
	}
	if n := Names(); len(n) != 2 || n[0] != "A" {
		t.Errorf("Names() = %v, want the default first", n)
	}
	if _, ok := Lookup("C"); ok {
		t.Error("Lookup(C) found a kind never registered")
	}
}

// TestInvoke: an event a kind decodes goes firing by firing to handle,
// and the first failure ends the batch in the kind's answer; any other
// event is the payload itself.
func TestInvoke(t *testing.T) {
	swap(t)
	k := kind("Batch")
	k.Decode = func(raw json.RawMessage) (Batch, bool) {
		var ps []json.RawMessage
		if json.Unmarshal(raw, &ps) != nil {
			return Batch{}, false
		}
		b := Batch{Answer: func(failed []string) any { return failed }}
		for i, p := range ps {
			b.Firings = append(b.Firings, Firing{ID: string(rune('1' + i)), Payload: p})
		}
		return b, true
	}
	Register(k)
	for _, tc := range []struct {
		raw     string
		handled []string
		answer  any
		err     bool
	}{
		{`{"a":1}`, []string{`{"a":1}`}, nil, false},
		{`"bad"`, []string{`"bad"`}, nil, true},
		{`[1,2,3]`, []string{"1", "2", "3"}, []string(nil), false},
		{`[1,"bad",3]`, []string{"1", `"bad"`}, []string{"2"}, false},
	} {
		var handled []string
		got, err := Invoke(context.Background(), json.RawMessage(tc.raw), func(_ context.Context, p json.RawMessage) error {
			handled = append(handled, string(p))
			if string(p) == `"bad"` {
				return context.Canceled
			}
			return nil
		}, nil)
		if (err != nil) != tc.err || strings.Join(handled, " ") != strings.Join(tc.handled, " ") {
			t.Errorf("%s: handled %q (%v), want %q", tc.raw, handled, err, tc.handled)
		}
		if a, ok := tc.answer.([]string); ok && strings.Join(got.([]string), " ") != strings.Join(a, " ") {
			t.Errorf("%s: answer %v, want %v", tc.raw, got, a)
		}
	}
}
