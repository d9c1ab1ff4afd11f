// Package propcheck holds the small helpers every construct uses to fill
// defaults and validate numeric props, so messages read the same
// everywhere.
package propcheck

import (
	"fmt"
	"math"

	"github.com/aws/aws-cdk-go/awscdk/v2"
)

// CheckWhole panics unless v is a whole number in [lo, hi], naming the
// construct, the prop, the bad value and what the prop means. Unresolved
// tokens are not checked.
func CheckWhole(id, name string, v, lo, hi float64, unit string) {
	if *awscdk.Token_IsUnresolved(v) {
		return
	}
	if v < lo || v > hi || v != math.Trunc(v) {
		panic(fmt.Sprintf("%s: %s must be a whole number between %v and %v inclusive (given %v): set it in range (%s)",
			id, name, lo, hi, v, unit))
	}
}
