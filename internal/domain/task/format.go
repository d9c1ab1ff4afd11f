package task

import (
	"fmt"
	"time"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// TimeLayout is how instants are stored and exchanged: RFC 3339, UTC, whole
// seconds. Two equal instants always give equal strings, which the expiry
// condition relies on.
const TimeLayout = "2006-01-02T15:04:05Z"

// FormatTime renders t in TimeLayout ("" for the zero time).
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Truncate(time.Second).Format(TimeLayout)
}

// ParseTime reads a TimeLayout string ("" gives the zero time).
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s, err)
	}
	return t.UTC(), nil
}
