package propcheck

import (
	"strings"
	"testing"
)

type sample struct {
	Name    *string
	Count   *float64
	Tags    []string
	Mode    string
	Enabled bool
}

func str(s string) *string   { return &s }
func num(f float64) *float64 { return &f }

func TestMerge(t *testing.T) {
	defaults := sample{Name: str("default"), Count: num(3), Tags: []string{"a"}, Mode: "fast"}
	for _, tc := range []struct {
		name string
		over *sample
		want sample
	}{
		{"nil keeps the defaults", nil, defaults},
		{"empty keeps the defaults", &sample{}, defaults},
		{"set fields win", &sample{Name: str("mine"), Mode: "slow"}, sample{Name: str("mine"), Count: num(3), Tags: []string{"a"}, Mode: "slow"}},
		{"a pointer zero is a value", &sample{Count: num(0)}, sample{Name: str("default"), Count: num(0), Tags: []string{"a"}, Mode: "fast"}},
		{"true bools and slices win", &sample{Tags: []string{"b"}, Enabled: true}, sample{Name: str("default"), Count: num(3), Tags: []string{"b"}, Mode: "fast", Enabled: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Merge(defaults, tc.over)
			if *got.Name != *tc.want.Name || *got.Count != *tc.want.Count || strings.Join(got.Tags, ",") != strings.Join(tc.want.Tags, ",") ||
				got.Mode != tc.want.Mode || got.Enabled != tc.want.Enabled {
				t.Errorf("Merge = %+v, want %+v", got, tc.want)
			}
		})
	}
	if *defaults.Name != "default" {
		t.Error("Merge changed the defaults")
	}
}

func TestNumberAndExclusive(t *testing.T) {
	if Number(nil, 3) != 3 || Number(num(0), 3) != 0 {
		t.Error("Number: nil takes the default, a pointer zero stays 0")
	}
	msg := func() (m string) {
		defer func() { m, _ = recover().(string) }()
		Exclusive("C", "ExistingTopics", true, "TopicProps", true)
		return ""
	}()
	if !strings.Contains(msg, "ExistingTopics and TopicProps are both set") || !strings.Contains(msg, "not both") {
		t.Errorf("Exclusive panic %q", msg)
	}
	Exclusive("C", "A", true, "B", false) // one alone is fine
}

func TestOr(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"unset string takes the default", Or("", "api"), "api"},
		{"set string stays", Or("v1", "api"), "v1"},
		{"zero number takes the default", Or(0.0, 50.0), 50.0},
		{"set number stays", Or(7.0, 50.0), 7.0},
		{"zero int takes the default", Or(0, 1), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Fatalf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}
