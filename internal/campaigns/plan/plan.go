// Package plan turns a campaign's schedule rules (sends per day, weekdays,
// daily windows, an IANA time zone, a start date) into one send time per
// recipient. It is plain Go: no AWS, no clock, no randomness, so the same
// rules always give the same plan.
//
// Sends are spread evenly over the usable minutes of each allowed day's
// windows, at most SendsPerDay a day, over as many days as needed. A
// minute is usable only when its local wall time names exactly one
// instant: EventBridge Scheduler evaluates at() in the schedule's time
// zone, skips a one-time schedule whose local time does not exist (spring
// forward) and runs a repeated local time only once (fall back), see
// https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html#daylist-savings-time
// so the planner uses neither the gap nor either copy of a repeated hour.
// Sends are at whole minutes, the scheduler's precision: "All schedule
// types on EventBridge Scheduler invoke their targets with 60 second
// precision" (same page, the note at its top), so a plan with sends
// seconds apart would not run as planned.
package plan

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults and limits.
const (
	// DefaultSendsPerDay is SendsPerDay when it is 0.
	DefaultSendsPerDay = 20
	// MaxSendsPerDay: one send a minute at most (the scheduler's precision).
	MaxSendsPerDay = 24 * 60
	// MaxRecipients bounds one campaign, for the planner and the API
	// alike (see RecipientsProblem): the API writes every task of a
	// create within API Gateway's 29 s integration timeout.
	MaxRecipients = 10_000
	// MaxDays bounds how far a plan may reach (about five years).
	MaxDays = 5 * 366
)

// Clock is a local time of day at minute precision, "HH:MM"; 24:00 is
// allowed as a window's end (midnight at the end of the day).
type Clock int // minutes since local midnight

// ParseClock reads "HH:MM" (00:00 to 24:00).
func ParseClock(s string) (Clock, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || len(h) != 2 || len(m) != 2 || err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm > 59 || hh*60+mm > 24*60 {
		return 0, fmt.Errorf("time of day %q must be HH:MM between 00:00 and 24:00", s)
	}
	return Clock(hh*60 + mm), nil
}

func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", int(c)/60, int(c)%60) }

// Window is one daily sending window, [Start, End) in local time.
type Window struct {
	Start Clock `json:"start"`
	End   Clock `json:"end"`
}

func (w Window) String() string { return w.Start.String() + "-" + w.End.String() }

// Contains reports whether the local time of day c (minutes) is inside.
func (w Window) Contains(c Clock) bool { return c >= w.Start && c < w.End }

// Date is a civil date in the campaign's zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate reads "YYYY-MM-DD".
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("start date %q must be YYYY-MM-DD", s)
	}
	return Date{t.Year(), t.Month(), t.Day()}, nil
}

func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// AddDays is d plus n calendar days.
func (d Date) AddDays(n int) Date {
	t := time.Date(d.Year, d.Month, d.Day+n, 12, 0, 0, 0, time.UTC)
	return Date{t.Year(), t.Month(), t.Day()}
}

// Weekday of the date.
func (d Date) Weekday() time.Weekday {
	return time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC).Weekday()
}

// Rules are a campaign's schedule rules.
type Rules struct {
	// SendsPerDay caps the sends of one local calendar day.
	// Default: 20.
	SendsPerDay int `json:"sendsPerDay,omitempty"`
	// Weekdays are the days to send on.
	// Default: Monday to Friday.
	Weekdays []time.Weekday `json:"weekdays,omitempty"`
	// Windows are the daily windows, in local time; at least one, not
	// overlapping.
	Windows []Window `json:"windows"`
	// TimeZone is an IANA zone name, e.g. "Europe/Berlin".
	TimeZone string `json:"timeZone"`
	// Start is the first day that may hold a send.
	Start Date `json:"start"`
	// NotBefore, when set, drops every minute before it (provisioning
	// passes "now", so no send is planned in the past).
	// Default: no bound.
	NotBefore time.Time `json:"notBefore,omitzero"`
}

// Send is one planned send.
type Send struct {
	// Index is the recipient's position (0-based).
	Index int
	// At is the instant, UTC at a whole minute.
	At time.Time
	// Local is the wall time in the campaign's zone, the at() argument:
	// "2006-01-02T15:04:05".
	Local string
	// Day is the local calendar day of the send.
	Day Date
}

// LocalLayout is the layout of Send.Local (what at() takes).
const LocalLayout = "2006-01-02T15:04:05"

// ErrInvalid is wrapped by every validation error of Plan.
var ErrInvalid = errors.New("invalid campaign schedule")

// InvalidError lists every problem of a plan's input, each naming its
// field as the campaign API spells it and saying how to fix it. It wraps
// ErrInvalid; Problems carry no prefix, so a caller that collects them
// with its own says the prefix once.
type InvalidError struct{ Problems []string }

func (e *InvalidError) Error() string {
	return ErrInvalid.Error() + ": " + strings.Join(e.Problems, "; ")
}

func (e *InvalidError) Unwrap() error { return ErrInvalid }

// RecipientsProblem is the one message for a recipient count outside 1 to
// MaxRecipients, or "" when n is inside.
func RecipientsProblem(n int) string {
	if n >= 1 && n <= MaxRecipients {
		return ""
	}
	return fmt.Sprintf("recipients: a campaign has 1 to %d recipients (given %d): split them over several campaigns", MaxRecipients, n)
}

// invalid wraps problems as an *InvalidError, or returns nil for none.
func invalid(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return &InvalidError{Problems: problems}
}

// Normalized returns the rules with defaults filled in and the windows
// sorted, and the loaded zone; or every validation error, each saying how
// to fix it.
func (r Rules) Normalized() (Rules, *time.Location, error) {
	var errs []string
	if r.SendsPerDay == 0 {
		r.SendsPerDay = DefaultSendsPerDay
	}
	if r.SendsPerDay < 1 || r.SendsPerDay > MaxSendsPerDay {
		errs = append(errs, fmt.Sprintf("schedule.sendsPerDay must be between 1 and %d (given %d)", MaxSendsPerDay, r.SendsPerDay))
	}
	if len(r.Weekdays) == 0 {
		r.Weekdays = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	} else {
		r.Weekdays = slices.Clone(r.Weekdays)
		slices.Sort(r.Weekdays)
		r.Weekdays = slices.Compact(r.Weekdays)
		for _, d := range r.Weekdays {
			if d < time.Sunday || d > time.Saturday {
				errs = append(errs, fmt.Sprintf("schedule.weekdays: weekday %d is not a day: use 0 (Sunday) to 6 (Saturday)", int(d)))
			}
		}
	}
	var loc *time.Location
	if r.TimeZone == "" {
		errs = append(errs, `schedule.timeZone is empty: set an IANA zone name such as "Europe/Berlin"`)
	} else if l, err := loadLocation(r.TimeZone); err != nil || r.TimeZone == "Local" {
		errs = append(errs, fmt.Sprintf(`schedule.timeZone %q is not an IANA zone name: use one such as "Europe/Berlin" or "America/New_York"`, r.TimeZone))
	} else {
		loc = l
	}
	if len(r.Windows) == 0 {
		errs = append(errs, `schedule.windows is empty: add at least one window, such as 09:00-12:00`)
	}
	r.Windows = slices.Clone(r.Windows)
	slices.SortFunc(r.Windows, func(a, b Window) int { return int(a.Start - b.Start) })
	for i, w := range r.Windows {
		switch {
		case w.Start < 0 || w.End > 24*60:
			errs = append(errs, fmt.Sprintf("schedule.windows: window %s is outside 00:00-24:00", w))
		case w.End <= w.Start:
			errs = append(errs, fmt.Sprintf("schedule.windows: window %s ends at or before it starts: make its end later than its start (a window cannot cross midnight; split it in two)", w))
		case i > 0 && w.Start < r.Windows[i-1].End:
			errs = append(errs, fmt.Sprintf("schedule.windows: windows %s and %s overlap: merge them or make them disjoint", r.Windows[i-1], w))
		}
	}
	if r.Start == (Date{}) {
		errs = append(errs, "schedule.startDate is empty: set the first day to send, YYYY-MM-DD")
	} else if got := r.Start.AddDays(0); got != r.Start {
		errs = append(errs, fmt.Sprintf("schedule.startDate %s is not a calendar date", r.Start))
	}
	if len(errs) > 0 {
		return r, nil, invalid(errs)
	}
	return r, loc, nil
}

// zones caches loaded zones: time.LoadLocation reads and parses the zone
// file on every call.
var zones sync.Map // name -> *time.Location

func loadLocation(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, l)
	return l, nil
}

// Plan gives one send per recipient, in increasing time.
func Plan(recipients int, r Rules) ([]Send, error) {
	if p := RecipientsProblem(recipients); p != "" {
		return nil, invalid([]string{p})
	}
	r, loc, err := r.Normalized()
	if err != nil {
		return nil, err
	}
	out := make([]Send, 0, recipients)
	for day := 0; len(out) < recipients; day++ {
		if day >= MaxDays {
			return nil, invalid([]string{fmt.Sprintf("schedule: %d recipients need more than %d days at %d a day on %d weekdays: raise sendsPerDay, add weekdays or widen the windows",
				recipients, MaxDays, r.SendsPerDay, len(r.Weekdays))})
		}
		d := r.Start.AddDays(day)
		if !slices.Contains(r.Weekdays, d.Weekday()) {
			continue
		}
		minutes := UsableMinutes(d, r.Windows, loc, r.NotBefore)
		n := min(recipients-len(out), r.SendsPerDay, len(minutes))
		for i := range n {
			// The middle of the i-th of n equal shares of the day's usable minutes.
			t := minutes[(2*i+1)*len(minutes)/(2*n)]
			out = append(out, Send{Index: len(out), At: t.UTC(), Local: t.Format(LocalLayout), Day: d})
		}
	}
	return out, nil
}

// UsableMinutes lists, in order, the instants of day d's windows whose
// local wall time exists and is not repeated, at or after notBefore.
func UsableMinutes(d Date, windows []Window, loc *time.Location, notBefore time.Time) []time.Time {
	var out []time.Time
	midnight := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
	// A day with no offset change from a day before to a day after maps
	// every wall minute to midnight plus that minute (the fast path).
	_, change := midnight.Add(-24 * time.Hour).ZoneBounds()
	stable := sameWall(midnight, d, 0) && (change.IsZero() || change.After(midnight.Add(72*time.Hour)))
	for _, w := range windows {
		for c := w.Start; c < w.End; c++ {
			t, ok := midnight.Add(time.Duration(c)*time.Minute), stable
			if !stable {
				t, ok = Unique(d, c, loc)
			}
			if ok && !t.Before(notBefore) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Unique returns the one instant whose wall time in loc is day d at c;
// false when that wall time does not exist (a gap) or names two instants
// (a repeated hour).
func Unique(d Date, c Clock, loc *time.Location) (time.Time, bool) {
	t := time.Date(d.Year, d.Month, d.Day, int(c)/60, int(c)%60, 0, 0, loc)
	if !sameWall(t, d, c) {
		return time.Time{}, false // normalized out of a gap
	}
	// Any other instant with the same wall time uses another offset in
	// force within a day of t: try the offsets before and after t's zone
	// period.
	start, end := t.ZoneBounds()
	_, off := t.Zone()
	naive := time.Date(d.Year, d.Month, d.Day, int(c)/60, int(c)%60, 0, 0, time.UTC)
	var edges []time.Time
	if !start.IsZero() {
		edges = append(edges, start.Add(-time.Second))
	}
	if !end.IsZero() {
		edges = append(edges, end)
	}
	for _, edge := range edges {
		_, o := edge.In(loc).Zone()
		if o == off {
			continue
		}
		other := naive.Add(-time.Duration(o) * time.Second).In(loc)
		if sameWall(other, d, c) && !other.Equal(t) {
			return time.Time{}, false
		}
	}
	return t, true
}

func sameWall(t time.Time, d Date, c Clock) bool {
	return t.Year() == d.Year && t.Month() == d.Month && t.Day() == d.Day && t.Hour()*60+t.Minute() == int(c)
}

// InWindow reports whether instant t falls on an allowed weekday inside a
// window, at a usable minute, under normalized rules.
func (r Rules) InWindow(t time.Time, loc *time.Location) bool {
	l := t.In(loc)
	d := Date{l.Year(), l.Month(), l.Day()}
	c := Clock(l.Hour()*60 + l.Minute())
	if !slices.Contains(r.Weekdays, d.Weekday()) {
		return false
	}
	for _, w := range r.Windows {
		if w.Contains(c) {
			_, ok := Unique(d, c, loc)
			return ok
		}
	}
	return false
}

// Allows reports whether the rules allow a send at t: t's minute is a
// usable minute of a window on an allowed weekday. Sends run within the
// minute they are scheduled for (the scheduler's precision), so t is
// judged by its whole minute.
func (r Rules) Allows(t time.Time) (bool, error) {
	nr, loc, err := r.Normalized()
	if err != nil {
		return false, err
	}
	return nr.InWindow(t.Truncate(time.Minute), loc), nil
}

// NextUsable is the first usable minute at or after t (rounded up to a
// whole minute) on an allowed weekday, in the rules' windows: where a
// send that missed its time goes. It looks a year ahead.
func (r Rules) NextUsable(t time.Time) (Send, error) {
	nr, loc, err := r.Normalized()
	if err != nil {
		return Send{}, err
	}
	from := t.Truncate(time.Minute)
	if from.Before(t) {
		from = from.Add(time.Minute)
	}
	l := from.In(loc)
	d := Date{l.Year(), l.Month(), l.Day()}
	for i := range 367 {
		day := d.AddDays(i)
		if !slices.Contains(nr.Weekdays, day.Weekday()) {
			continue
		}
		if m := UsableMinutes(day, nr.Windows, loc, from); len(m) > 0 {
			return Send{At: m[0].UTC(), Local: m[0].Format(LocalLayout), Day: day}, nil
		}
	}
	return Send{}, fmt.Errorf("%w: no usable minute within a year of %s", ErrInvalid, from.Format(time.RFC3339))
}
