package queuetest

import (
	"reflect"
	"testing"
)

// The contracts' checks. Each fails the test at its caller's line.

// must fails t when a call that returns only an error failed.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// equal fails t unless got and want are deeply equal.
func equal(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}
