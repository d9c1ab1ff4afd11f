package bench

import (
	"strings"
	"testing"
)

func TestParseLoadAvg(t *testing.T) {
	l, err := ParseLoadAvg([]byte("0.52 1.10 2.00 2/94 7781\n"))
	if err != nil || l.One != 0.52 || l.Five != 1.10 || l.Fifteen != 2 || !l.Read {
		t.Fatalf("got %+v, %v", l, err)
	}
	if l.String() != "0.52 1.10 2.00" {
		t.Errorf("String() = %q", l.String())
	}
	for _, bad := range []string{"", "1 2", "a b c"} {
		if _, err := ParseLoadAvg([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestLoadWarnings(t *testing.T) {
	at := func(one float64) LoadAverage { return LoadAverage{One: one, Read: true} }
	for _, tc := range []struct {
		name       string
		start, end LoadAverage
		want       []string
	}{
		{"idle", at(0.2), at(1.5), nil},
		{"busy at the start", at(1.2), at(1.5), []string{"busy at the start: 1-minute load 1.20 on 2 CPUs"}},
		{"busy at the end", at(0.1), at(2.5), []string{"busy at the end: 1-minute load 2.50"}},
		{"both", at(5), at(9), []string{"at the start", "at the end"}},
		{"not read", LoadAverage{}, LoadAverage{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Machine{NumCPU: 2, LoadStart: tc.start, LoadEnd: tc.end}.LoadWarnings()
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %d warnings", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q lacks %q", got[i], w)
				}
			}
		})
	}
}
