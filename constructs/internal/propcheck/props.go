package propcheck

import (
	"fmt"
	"math"
	"reflect"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/contract"
)

// Or returns v, or d when v is its type's zero value ("", 0): the default
// of a prop whose zero means unset (names, removal policies, limits).
func Or[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// Number returns *v, or d when v is nil: for optional numbers where zero
// is a meaningful value (a pointer, so unset and 0 differ).
func Number(v *float64, d float64) float64 {
	if v == nil {
		return d
	}
	return *v
}

// DurationOr returns v, or d when v is nil.
func DurationOr(v, d awscdk.Duration) awscdk.Duration {
	if v == nil {
		return d
	}
	return v
}

// SecondsOr returns v, or d seconds when v is nil.
func SecondsOr(v awscdk.Duration, d float64) awscdk.Duration {
	return DurationOr(v, awscdk.Duration_Seconds(jsii.Number(d)))
}

// Schema is the schema a construct works with: contract.Default() for a
// zero Schema (props that leave it unset), else s with its unset fields
// filled (contract.Schema.WithDefaults).
func Schema(s contract.Schema) contract.Schema {
	if reflect.DeepEqual(s, contract.Schema{}) {
		return contract.Default()
	}
	return s.WithDefaults()
}

// CheckSeconds panics unless d is a whole number of seconds in [lo, hi],
// naming the construct, the prop, the bad value and what bounds it.
// Unresolved durations are not checked.
func CheckSeconds(id, name string, d awscdk.Duration, lo, hi float64, why string) {
	if d == nil || *d.IsUnresolved() {
		return
	}
	s := *d.ToSeconds(&awscdk.TimeConversionOptions{Integral: jsii.Bool(false)})
	if s < lo || s > hi || s != math.Trunc(s) {
		panic(fmt.Sprintf("%s: %s must be a whole number of seconds between %v and %v inclusive (given %s): set it in range (%s)",
			id, name, lo, hi, *d.ToHumanString(), why))
	}
}

// Exclusive panics when both of two props are set, naming both: the
// Existing<X> / <X>Props pairs (an existing resource is not created, so
// props to create it would be silently ignored).
func Exclusive(id, a string, aSet bool, b string, bSet bool) {
	if aSet && bSet {
		panic(fmt.Sprintf("%s: %s and %s are both set: pass %s to use an existing resource, or %s to change the one this construct creates, not both",
			id, a, b, a, b))
	}
}

// Merge returns defaults with every field that over sets (a non-nil
// pointer, interface, slice or map, a non-empty string, a true bool)
// replacing the default: the <X>Props overrides of a construct, merged
// field by field over its defaults (one level deep; merge nested structs
// by calling Merge on them). over may be nil.
func Merge[T any](defaults T, over *T) T {
	if over == nil {
		return defaults
	}
	out := defaults
	dst, src := reflect.ValueOf(&out).Elem(), reflect.ValueOf(over).Elem()
	for i := 0; i < src.NumField(); i++ {
		if f := src.Field(i); !f.IsZero() && dst.Field(i).CanSet() {
			dst.Field(i).Set(f)
		}
	}
	return out
}

// TypedNil reports whether v holds a nil pointer inside a non-nil
// interface, such as a (*scheduleonwrite.TTLTimer)(nil) passed as a
// Timer: a plain v == nil misses it, and its first method call would
// panic with a bare nil-pointer dereference.
func TypedNil(v any) bool {
	r := reflect.ValueOf(v)
	return v != nil && r.Kind() == reflect.Pointer && r.IsNil()
}

// CheckTimer panics when a timer prop holds a typed nil, naming its type
// and what to pass instead; a nil interface is left to the caller (a
// default, or a required-prop message).
func CheckTimer(id, name string, v any, fix string) {
	if TypedNil(v) {
		panic(fmt.Sprintf("%s: %s is a nil %T: pass the timer its constructor returns (%s)", id, name, v, fix))
	}
}
