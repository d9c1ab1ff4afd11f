package task

import (
	"fmt"
	"time"

	"github.com/unschedule/unschedule/contract"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// TimeLayout is how instants are stored and exchanged: the contract's
// (RFC 3339, UTC, whole seconds). Two equal instants always give equal
// strings, which the expiry condition relies on.
const TimeLayout = contract.TimeLayout

// FormatTime renders t in TimeLayout ("" for the zero time), as the
// contract does.
func FormatTime(t time.Time) string { return contract.FormatTime(t) }

// ParseTime reads a time attribute: the contract's reading of any RFC 3339
// spelling, which another writer of the table may use (contract.ParseTime).
func ParseTime(s string) (time.Time, error) { return contract.ParseTime(s) }
