package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	// The IANA time zone database, in the binary. Lambda's OS-only
	// runtime provided.al2023 documents no tzdata package
	// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-provided.html),
	// and it shipped without /usr/share/zoneinfo at first
	// (https://github.com/aws/aws-lambda-dotnet/issues/1620,
	// https://github.com/amazonlinux/amazon-linux-2023/issues/615).
	// time.LoadLocation falls back to this copy when the system has no
	// such zone. About 450 KB in each binary that imports this package.
	_ "time/tzdata"

	"github.com/unschedule/unschedule/internal/todo/task"
)

// ErrBadTimeZone: a time zone that is not an IANA name this build knows.
var ErrBadTimeZone = errors.New("not an IANA time zone name")

// maxTimeZoneLen bounds a stored zone name; the longest IANA name is 32
// characters ("America/Argentina/ComodRivadavia").
const maxTimeZoneLen = 64

// CheckTimeZone accepts "" (none: times in UTC) and IANA time zone names
// such as "Europe/Berlin" or "UTC". "Local" (the server's zone) and
// anything time.LoadLocation does not know are ErrBadTimeZone.
func CheckTimeZone(name string) error {
	_, err := loadZone(name)
	return err
}

// Location is the zone named, UTC for "" or a name CheckTimeZone refuses.
func Location(name string) *time.Location {
	loc, err := loadZone(name)
	if err != nil {
		return time.UTC
	}
	return loc
}

func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	bad := len(name) > maxTimeZoneLen || name == "Local"
	for _, r := range name {
		bad = bad || !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '/' || r == '_' || r == '-' || r == '+')
	}
	if bad {
		return nil, fmt.Errorf("%w: %q", ErrBadTimeZone, name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %q", ErrBadTimeZone, name)
	}
	return loc, nil
}

// Clock writes the time of day of t in loc, then in UTC:
// "16:55 CET (15:55 UTC)"; "15:55 UTC" alone when loc is UTC. A zone
// with no abbreviation shows its offset: "16:55 UTC+4 (12:55 UTC)".
func Clock(t time.Time, loc *time.Location) string {
	local, utc := t.In(loc), t.UTC()
	if isUTC(local) {
		return utc.Format("15:04") + " UTC"
	}
	return local.Format("15:04") + " " + zoneName(local) + " (" + utc.Format("15:04") + " UTC)"
}

// longDate is how the body writes a day.
const longDate = "Monday, 2 January 2006"

// dueLine writes the deadline t in loc, with the UTC time in brackets
// (and its day too when that differs): "Monday, 4 March 2030 at 18:05
// CET (17:05 UTC)".
func dueLine(t time.Time, loc *time.Location) string {
	local, utc := t.In(loc), t.UTC()
	if isUTC(local) {
		return utc.Format(longDate) + " at " + utc.Format("15:04") + " UTC"
	}
	s := local.Format(longDate) + " at " + local.Format("15:04") + " " + zoneName(local) + " (" + utc.Format("15:04") + " UTC"
	if local.Format("2006-01-02") != utc.Format("2006-01-02") {
		s += " on " + utc.Format("Monday, 2 January")
	}
	return s + ")"
}

func isUTC(t time.Time) bool {
	name, off := t.Zone()
	return off == 0 && (name == "UTC" || name == "")
}

// zoneName is the zone's abbreviation ("CET", "EDT"), or "UTC+4" /
// "UTC-3:30" where the database has only a number ("+04").
func zoneName(t time.Time) string {
	name, off := t.Zone()
	if name != "" && name[0] != '+' && name[0] != '-' {
		return name
	}
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	s := "UTC" + sign + strconv.Itoa(off/3600)
	if m := off % 3600 / 60; m != 0 {
		s += fmt.Sprintf(":%02d", m)
	}
	return s
}

// SettingsReader reads users' settings; every SettingsStore is one.
type SettingsReader interface {
	// LoadSettings: see SettingsStore.
	LoadSettings(ctx context.Context, userID string) (Settings, error)
}

// UserTimeZone returns n with the time zone of its owner's settings, so
// that FormatMessage shows the deadline in it. A notification that names
// a zone already is returned as it is; err is a failed read (n is then
// returned unchanged: its times show in UTC).
func UserTimeZone(ctx context.Context, settings SettingsReader, n task.Notification) (task.Notification, error) {
	if n.TimeZone != "" {
		return n, nil
	}
	st, err := settings.LoadSettings(ctx, n.UserID)
	if err != nil {
		return n, fmt.Errorf("read the time zone of %s: %w", n.UserID, err)
	}
	n.TimeZone = st.TimeZone
	return n, nil
}

// InUserTimeZone is next, with each notification's TimeZone read from its
// owner's settings first (UserTimeZone). A failed read is logged and the
// notification still goes out, in UTC: its times are still right, and
// failing would only delay the email to a retry.
func InUserTimeZone(next task.Notifier, settings SettingsReader, log *slog.Logger) task.Notifier {
	if log == nil {
		log = slog.Default()
	}
	return &zoned{next: next, settings: settings, log: log}
}

type zoned struct {
	next     task.Notifier
	settings SettingsReader
	log      *slog.Logger
}

// Publish implements task.Notifier.
func (z *zoned) Publish(ctx context.Context, n task.Notification) error {
	n, err := UserTimeZone(ctx, z.settings, n)
	if err != nil {
		z.log.WarnContext(ctx, "time zone unknown: the notification shows times in UTC", "taskId", n.TaskID, "error", err.Error())
	}
	return z.next.Publish(ctx, n)
}
