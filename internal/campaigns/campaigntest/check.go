package campaigntest

import (
	"errors"
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

// need is the value of a call that must succeed: need(s.Get(...))(t)
// fails t on its error.
func need[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		must(t, err)
		return v
	}
}

// errOf is the error of a call that returns a value too.
func errOf[T any](_ T, err error) error { return err }

// wantErr fails t unless err is want (errors.Is).
func wantErr(t testing.TB, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error = %v, want %v", what, err, want)
	}
}

// equal fails t unless got and want are deeply equal.
func equal(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}
