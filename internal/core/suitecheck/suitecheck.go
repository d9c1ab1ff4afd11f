// Package suitecheck holds the few checks that the port conformance
// suites (timertest, queuetest, firetest and the adopters' own) share.
// Each fails the test at its caller's line.
package suitecheck

import (
	"errors"
	"reflect"
	"testing"
)

// Must fails t when a call that returns only an error failed.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Need is the value of a call that must succeed: Need(s.Get(...))(t)
// fails t on its error.
func Need[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		Must(t, err)
		return v
	}
}

// ErrOf is the error of a call that returns a value too.
func ErrOf[T any](_ T, err error) error { return err }

// WantErr fails t unless err is want (errors.Is).
func WantErr(t testing.TB, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error = %v, want %v", what, err, want)
	}
}

// Equal fails t unless got and want are deeply equal.
func Equal(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}
