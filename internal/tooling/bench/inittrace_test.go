package bench

import (
	"reflect"
	"testing"
)

func TestParseInitTrace(t *testing.T) {
	in := []byte("init runtime @0.010 ms, 0.29 ms clock, 0 bytes, 0 allocs\n" +
		"some other line\n" +
		"init github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas @7.4 ms, 4.9 ms clock, 586696 bytes, 3151 allocs\n")
	want := []PkgInit{
		{Pkg: "runtime", ClockMs: 0.29},
		{Pkg: "github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas", ClockMs: 4.9, Bytes: 586696, Allocs: 3151},
	}
	if got := ParseInitTrace(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseInitTrace = %+v, want %+v", got, want)
	}
}

func TestMedianInitTrace(t *testing.T) {
	runs := [][]PkgInit{
		{{Pkg: "a", ClockMs: 1, Allocs: 10}, {Pkg: "b", ClockMs: 5}},
		{{Pkg: "a", ClockMs: 3, Allocs: 10}, {Pkg: "b", ClockMs: 6}},
		{{Pkg: "a", ClockMs: 2, Allocs: 10}},
	}
	want := []PkgInit{{Pkg: "b", ClockMs: 5}, {Pkg: "a", ClockMs: 2, Allocs: 10}}
	if got := MedianInitTrace(runs); !reflect.DeepEqual(got, want) {
		t.Fatalf("MedianInitTrace = %+v, want %+v", got, want)
	}
}

func TestWhyLinked(t *testing.T) {
	for pkg, want := range map[string]string{
		"github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas":       "the dynamodb client",
		"github.com/aws/aws-sdk-go-v2/service/sts/internal/endpoints": "config's credential chain (`LoadDefaultConfig`)",
		"github.com/aws/aws-sdk-go-v2/service/internal/checksum":      "shared by the service clients",
		"github.com/aws/aws-sdk-go-v2/config":                         "config (`LoadDefaultConfig`)",
		"github.com/aws/aws-sdk-go-v2/credentials/ssocreds":           "config (`LoadDefaultConfig`)",
		"github.com/aws/smithy-go/prelude":                            "SDK core",
		"net/http":                                                    "Go standard library / runtime",
	} {
		if got := WhyLinked(pkg); got != want {
			t.Errorf("WhyLinked(%s) = %q, want %q", pkg, got, want)
		}
	}
}
