package bench

import (
	"reflect"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), tc.in...)
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !reflect.DeepEqual(in, tc.in) {
			t.Errorf("Median changed its input: %v", tc.in)
		}
	}
}

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: github.com/x/y/internal/cancel
cpu: AMD EPYC
BenchmarkProcess100-2   	    5000	    231000 ns/op	   52000 B/op	     800 allocs/op
some log line from a benchmark
PASS
pkg: github.com/x/y/internal/reconcile
BenchmarkPass/100000-2   	       1	1500000000 ns/op	     100000 tasks/op	 9000000 B/op	  300000 allocs/op
ok  	github.com/x/y/internal/reconcile	3.1s
`
	got, err := ParseGoBench([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []GoBench{
		{Package: "github.com/x/y/internal/cancel", Name: "Process100", N: 5000, NsPerOp: 231000, BytesPerOp: 52000, AllocsPerOp: 800},
		{Package: "github.com/x/y/internal/reconcile", Name: "Pass/100000", N: 1, NsPerOp: 1.5e9, BytesPerOp: 9000000,
			AllocsPerOp: 300000, Extra: map[string]float64{"tasks/op": 100000}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestTable(t *testing.T) {
	tb := Table{Header: []string{"a", "bb"}, Rows: [][]string{{"x|y", "1"}, {"z"}}}
	if got, want := tb.Markdown(), "| a | bb |\n| --- | --- |\n| x\\|y | 1 |\n| z |  |\n"; got != want {
		t.Errorf("Markdown:\n%q\nwant\n%q", got, want)
	}
	if got, want := tb.Text(), "a    bb\nx|y  1 \nz      \n"; got != want {
		t.Errorf("Text:\n%q\nwant\n%q", got, want)
	}
}
