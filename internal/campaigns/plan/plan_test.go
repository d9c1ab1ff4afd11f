package plan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the tests need these zones even on a machine without zoneinfo
)

func mustClock(t testing.TB, s string) Clock {
	t.Helper()
	c, err := ParseClock(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func win(t testing.TB, a, b string) Window { return Window{mustClock(t, a), mustClock(t, b)} }

var everyDay = []time.Weekday{0, 1, 2, 3, 4, 5, 6}

// transition is one DST change: the day, and the local minutes that do not
// exist (gap) or exist twice (repeat).
type transition struct {
	zone     string
	day      Date
	from, to string // local range that is unusable on that day
	kind     string
}

var transitions = []transition{
	{zone: "Europe/Berlin", day: Date{2026, 3, 29}, from: "02:00", to: "03:00", kind: "gap"},
	{zone: "Europe/Berlin", day: Date{2026, 10, 25}, from: "02:00", to: "03:00", kind: "repeat"},
	{zone: "America/New_York", day: Date{2026, 3, 8}, from: "02:00", to: "03:00", kind: "gap"},
	{zone: "America/New_York", day: Date{2026, 11, 1}, from: "01:00", to: "02:00", kind: "repeat"},
	{zone: "Australia/Lord_Howe", day: Date{2026, 4, 5}, from: "01:30", to: "02:00", kind: "repeat"},
	{zone: "Australia/Lord_Howe", day: Date{2026, 10, 4}, from: "02:00", to: "02:30", kind: "gap"},
}

// TestUniquePinsTransitions: exactly the gap and the repeated range are
// unusable on a transition day, and the rest of the day is usable.
func TestUniquePinsTransitions(t *testing.T) {
	for _, tr := range transitions {
		t.Run(tr.zone+"/"+tr.day.String(), func(t *testing.T) {
			loc, err := time.LoadLocation(tr.zone)
			if err != nil {
				t.Fatal(err)
			}
			from, to := mustClock(t, tr.from), mustClock(t, tr.to)
			seen := map[time.Time]bool{}
			for c := Clock(0); c < 24*60; c++ {
				at, ok := Unique(tr.day, c, loc)
				if want := c < from || c >= to; ok != want {
					t.Fatalf("%s usable=%v, want %v", c, ok, want)
				}
				if ok {
					if seen[at] {
						t.Fatalf("%s maps to an instant already used: %s", c, at)
					}
					seen[at] = true
				}
			}
			// The day before is a plain day.
			for c := Clock(0); c < 24*60; c++ {
				if _, ok := Unique(tr.day.AddDays(-1), c, loc); !ok {
					t.Fatalf("the day before: %s unusable", c)
				}
			}
		})
	}
}

// TestPlanOnTransitionDays: a window over the transition loses exactly the
// unusable minutes; one entirely inside it moves its sends to the next day.
func TestPlanOnTransitionDays(t *testing.T) {
	for _, tr := range transitions {
		t.Run(tr.zone+"/"+tr.kind, func(t *testing.T) {
			loc, _ := time.LoadLocation(tr.zone)
			inside := Rules{SendsPerDay: 30, Weekdays: everyDay, Windows: []Window{win(t, tr.from, tr.to)}, TimeZone: tr.zone, Start: tr.day}
			p, err := Plan(5, inside)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range p {
				if s.Day != tr.day.AddDays(1) {
					t.Fatalf("send %d on %s, want all on the next day (the window does not exist once on %s)", s.Index, s.Day, tr.day)
				}
			}
			around := inside
			around.Windows = []Window{win(t, "00:00", "05:00")}
			around.SendsPerDay = MaxSendsPerDay
			usable := UsableMinutes(tr.day, around.Windows, loc, time.Time{})
			gap := int(mustClock(t, tr.to) - mustClock(t, tr.from))
			if len(usable) != 300-gap {
				t.Fatalf("usable minutes %d, want %d", len(usable), 300-gap)
			}
			p, err = Plan(len(usable), around)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range p {
				if !s.At.Equal(usable[i]) || s.Day != tr.day {
					t.Fatalf("send %d at %s (%s), want every usable minute of the day once", i, s.Local, s.Day)
				}
			}
		})
	}
}

func TestPlanSpreadsEvenly(t *testing.T) {
	r := Rules{SendsPerDay: 4, Windows: []Window{win(t, "09:00", "11:00"), win(t, "14:00", "16:00")}, TimeZone: "Europe/Berlin", Start: Date{2026, 6, 5}} // a Friday
	p, err := Plan(6, r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p {
		got = append(got, s.Local)
	}
	want := []string{
		"2026-06-05T09:30:00", "2026-06-05T10:30:00", "2026-06-05T14:30:00", "2026-06-05T15:30:00",
		"2026-06-08T10:00:00", "2026-06-08T15:00:00", // the weekend skipped; 2 left, the middles of 240 minutes' halves
	}
	if !slices.Equal(got, want) {
		t.Fatalf("plan\n got %q\nwant %q", got, want)
	}
	if p[0].At != time.Date(2026, 6, 5, 7, 30, 0, 0, time.UTC) {
		t.Fatalf("first send at %s, want 07:30 UTC", p[0].At)
	}
}

func TestPlanDefaultsTwentyADayOnWeekdays(t *testing.T) {
	r := Rules{Windows: []Window{win(t, "09:00", "17:00")}, TimeZone: "UTC", Start: Date{2026, 6, 6}} // a Saturday
	p, err := Plan(45, r)
	if err != nil {
		t.Fatal(err)
	}
	perDay := map[Date]int{}
	for _, s := range p {
		perDay[s.Day]++
	}
	want := map[Date]int{{2026, 6, 8}: 20, {2026, 6, 9}: 20, {2026, 6, 10}: 5}
	if !reflect.DeepEqual(perDay, want) {
		t.Fatalf("per day %v, want %v", perDay, want)
	}
}

func TestPlanNotBefore(t *testing.T) {
	r := Rules{SendsPerDay: 10, Weekdays: everyDay, Windows: []Window{win(t, "09:00", "10:00")}, TimeZone: "UTC", Start: Date{2026, 6, 6},
		NotBefore: time.Date(2026, 6, 6, 9, 50, 0, 0, time.UTC)}
	p, err := Plan(12, r)
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	for _, s := range p {
		if s.At.Before(r.NotBefore) {
			t.Fatalf("send at %s before NotBefore", s.Local)
		}
		if s.Day == r.Start {
			first++
		}
	}
	if first != 10 || p[0].Local != "2026-06-06T09:50:00" {
		t.Fatalf("first day %d sends from %s, want 10 from 09:50 (the 10 minutes left)", first, p[0].Local)
	}
}

func TestValidationSaysHowToFix(t *testing.T) {
	ok := Rules{Windows: []Window{{540, 600}}, TimeZone: "UTC", Start: Date{2026, 1, 5}}
	cases := []struct {
		name  string
		edit  func(*Rules)
		n     int
		wants []string
	}{
		{"bad zone", func(r *Rules) { r.TimeZone = "Mars/Olympus" }, 1, []string{`schedule.timeZone "Mars/Olympus" is not an IANA zone name`}},
		{"Local zone", func(r *Rules) { r.TimeZone = "Local" }, 1, []string{"is not an IANA zone name"}},
		{"empty zone", func(r *Rules) { r.TimeZone = "" }, 1, []string{"schedule.timeZone is empty: set an IANA zone name"}},
		{"no windows", func(r *Rules) { r.Windows = nil }, 1, []string{"schedule.windows is empty: add at least one"}},
		{"end before start", func(r *Rules) { r.Windows = []Window{{600, 540}} }, 1, []string{"window 10:00-09:00 ends at or before it starts: make its end later"}},
		{"empty window", func(r *Rules) { r.Windows = []Window{{600, 600}} }, 1, []string{"ends at or before it starts"}},
		{"overlap", func(r *Rules) { r.Windows = []Window{{540, 700}, {600, 800}} }, 1, []string{"windows 09:00-11:40 and 10:00-13:20 overlap: merge them"}},
		{"outside day", func(r *Rules) { r.Windows = []Window{{540, 1500}} }, 1, []string{"outside 00:00-24:00"}},
		{"negative sends", func(r *Rules) { r.SendsPerDay = -1 }, 1, []string{"schedule.sendsPerDay must be between 1 and 1440 (given -1)"}},
		{"too many sends", func(r *Rules) { r.SendsPerDay = 2000 }, 1, []string{"(given 2000)"}},
		{"bad weekday", func(r *Rules) { r.Weekdays = []time.Weekday{9} }, 1, []string{"weekday 9 is not a day: use 0 (Sunday) to 6"}},
		{"no start", func(r *Rules) { r.Start = Date{} }, 1, []string{"schedule.startDate is empty"}},
		{"bad date", func(r *Rules) { r.Start = Date{2026, 2, 30} }, 1, []string{"schedule.startDate 2026-02-30 is not a calendar date"}},
		{"no recipients", func(*Rules) {}, 0, []string{"recipients: a campaign has 1 to 10000 recipients (given 0)"}},
		{"too long", func(r *Rules) { r.SendsPerDay = 1 }, 5000, []string{"raise sendsPerDay, add weekdays or widen the windows"}},
		{"several at once", func(r *Rules) { r.TimeZone = "x/y"; r.Windows = nil }, 1, []string{"schedule.timeZone", "schedule.windows is empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ok
			c.edit(&r)
			_, err := Plan(c.n, r)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v, want ErrInvalid", err)
			}
			if n := strings.Count(err.Error(), ErrInvalid.Error()); n != 1 {
				t.Fatalf("error %q says its prefix %d times, want once", err, n)
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := Plan(3, ok); err != nil {
		t.Fatalf("valid rules: %v", err)
	}
}

func TestParseClockAndDate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Clock
		ok   bool
	}{{"09:30", 570, true}, {"00:00", 0, true}, {"24:00", 1440, true}, {"24:01", 0, false}, {"9:30", 0, false}, {"09:60", 0, false}, {"ab:cd", 0, false}, {"", 0, false}} {
		got, err := ParseClock(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseClock(%q) = %v, %v", c.in, got, err)
		}
	}
	if d, err := ParseDate("2026-10-25"); err != nil || d != (Date{2026, 10, 25}) {
		t.Errorf("ParseDate = %v, %v", d, err)
	}
	if _, err := ParseDate("25.10.2026"); err == nil || !strings.Contains(err.Error(), "YYYY-MM-DD") {
		t.Errorf("ParseDate bad: %v", err)
	}
}

// randomRules draws rules around one of the DST transitions: a start date
// a few days before it, windows biased toward the early hours where the
// clocks change, random weekdays and caps.
func randomRules(rng *rand.Rand) (int, Rules) {
	tr := transitions[rng.IntN(len(transitions))]
	var ws []Window
	for c := Clock(rng.IntN(4 * 60)); c < 24*60 && len(ws) < 1+rng.IntN(3); {
		end := min(c+Clock(1+rng.IntN(240)), 24*60)
		ws = append(ws, Window{c, end})
		c = end + Clock(rng.IntN(300))
	}
	var days []time.Weekday
	for d := range time.Weekday(7) {
		if rng.IntN(3) > 0 {
			days = append(days, d)
		}
	}
	r := Rules{
		SendsPerDay: []int{0, 1, 3, 20, 60, 400}[rng.IntN(6)],
		Weekdays:    days,
		Windows:     ws,
		TimeZone:    tr.zone,
		Start:       tr.day.AddDays(-rng.IntN(4)),
	}
	if rng.IntN(4) == 0 {
		loc, _ := time.LoadLocation(tr.zone)
		r.NotBefore = time.Date(r.Start.Year, r.Start.Month, r.Start.Day, rng.IntN(24), rng.IntN(60), 0, 0, loc)
	}
	spd := r.SendsPerDay
	if spd == 0 {
		spd = DefaultSendsPerDay
	}
	return 1 + rng.IntN(min(300, spd*max(1, len(days))*20)), r
}

// checkPlan verifies every property of a plan; it returns the first
// violation.
func checkPlan(n int, r Rules, p []Send) error {
	nr, loc, err := r.Normalized()
	if err != nil {
		return err
	}
	if len(p) != n {
		return fmt.Errorf("%d sends for %d recipients", len(p), n)
	}
	perDay := map[Date][]int{} // usable-minute positions of each day's sends
	usableOn := map[Date][]time.Time{}
	usable := func(d Date) []time.Time {
		u, ok := usableOn[d]
		if !ok {
			u = UsableMinutes(d, nr.Windows, loc, r.NotBefore)
			usableOn[d] = u
		}
		return u
	}
	for i, s := range p {
		if s.Index != i {
			return fmt.Errorf("send %d has index %d", i, s.Index)
		}
		if s.At.Location() != time.UTC || s.At.Second() != 0 || s.At.Nanosecond() != 0 {
			return fmt.Errorf("send %d at %s: want UTC at a whole minute", i, s.At)
		}
		if got := s.At.In(loc).Format(LocalLayout); got != s.Local {
			return fmt.Errorf("send %d: Local %s but the instant is %s there", i, s.Local, got)
		}
		back, err := time.ParseInLocation(LocalLayout, s.Local, loc)
		if err != nil || !back.Equal(s.At) {
			return fmt.Errorf("send %d: local %s does not name its instant", i, s.Local)
		}
		if !nr.InWindow(s.At, loc) {
			return fmt.Errorf("send %d at %s (%s) is outside the windows, weekdays or at a DST-ambiguous minute", i, s.Local, s.At.In(loc).Weekday())
		}
		if s.At.Before(r.NotBefore) {
			return fmt.Errorf("send %d at %s before NotBefore %s", i, s.At, r.NotBefore)
		}
		if i > 0 && !s.At.After(p[i-1].At) {
			return fmt.Errorf("send %d at %s is not after send %d at %s", i, s.At, i-1, p[i-1].At)
		}
		l := s.At.In(loc)
		if (Date{l.Year(), l.Month(), l.Day()}) != s.Day {
			return fmt.Errorf("send %d: Day %s but local date %s", i, s.Day, l.Format(time.DateOnly))
		}
		perDay[s.Day] = append(perDay[s.Day], slices.IndexFunc(usable(s.Day), s.At.Equal))
	}
	// Every allowed day from the start to the last send's day is filled
	// as far as the cap and its usable minutes allow (as many days as
	// needed, no more), and each day's sends are evenly spaced.
	last := p[len(p)-1].Day
	for d := nr.Start; d != last.AddDays(1); d = d.AddDays(1) {
		pos := perDay[d]
		if !slices.Contains(nr.Weekdays, d.Weekday()) {
			if len(pos) > 0 {
				return fmt.Errorf("%d sends on %s, a %s, which is not allowed", len(pos), d, d.Weekday())
			}
			continue
		}
		L := len(usable(d))
		if len(pos) > nr.SendsPerDay {
			return fmt.Errorf("%d sends on %s, cap %d", len(pos), d, nr.SendsPerDay)
		}
		if d != last && len(pos) != min(nr.SendsPerDay, L) {
			return fmt.Errorf("%s holds %d sends, want %d (cap %d, %d usable minutes) before later days are used", d, len(pos), min(nr.SendsPerDay, L), nr.SendsPerDay, L)
		}
		if k := len(pos); k > 1 {
			lo, hi := L/k, (L+k-1)/k
			for j := 1; j < k; j++ {
				if g := pos[j] - pos[j-1]; g < lo || g > hi {
					return fmt.Errorf("%s: sends %d minutes apart in usable time, want %d..%d (%d sends over %d minutes)", d, g, lo, hi, k, L)
				}
			}
		}
	}
	return nil
}

// TestPlanPropertiesAroundDST: for many random rules around the DST
// transitions of Berlin, New York and Lord Howe, every property holds and
// the same input (in any order of windows and weekdays) gives the same
// plan. A failure names its seed. 2,000 seeds; 300 with -short or -race.
func TestPlanPropertiesAroundDST(t *testing.T) {
	seeds := 2000
	if testing.Short() || raceEnabled {
		seeds = 300
	}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		n, r := randomRules(rng)
		p, err := Plan(n, r)
		if err != nil {
			t.Fatalf("seed %d: rules %+v: %v", seed, r, err)
		}
		if err := checkPlan(n, r, p); err != nil {
			t.Fatalf("seed %d: rules %+v: %v", seed, r, err)
		}
		shuffled := r
		shuffled.Windows = slices.Clone(r.Windows)
		shuffled.Weekdays = slices.Clone(r.Weekdays)
		rng.Shuffle(len(shuffled.Windows), func(i, j int) { shuffled.Windows[i], shuffled.Windows[j] = shuffled.Windows[j], shuffled.Windows[i] })
		rng.Shuffle(len(shuffled.Weekdays), func(i, j int) {
			shuffled.Weekdays[i], shuffled.Weekdays[j] = shuffled.Weekdays[j], shuffled.Weekdays[i]
		})
		again, err := Plan(n, shuffled)
		if err != nil || !reflect.DeepEqual(p, again) {
			t.Fatalf("seed %d: the same rules gave another plan (err %v)", seed, err)
		}
	}
}

// TestCheckPlanCatches: the property checker fails on broken plans (so
// the property test can fail).
func TestCheckPlanCatches(t *testing.T) {
	r := Rules{SendsPerDay: 3, Weekdays: everyDay, Windows: []Window{{60, 240}}, TimeZone: "Europe/Berlin", Start: Date{2026, 10, 24}}
	p, err := Plan(6, r)
	if err != nil || checkPlan(6, r, p) != nil {
		t.Fatalf("valid plan: %v %v", err, checkPlan(6, r, p))
	}
	loc, _ := time.LoadLocation("Europe/Berlin")
	breaks := map[string]func([]Send){
		"in the repeated hour": func(p []Send) {
			p[3].At = time.Date(2026, 10, 25, 2, 30, 0, 0, loc).UTC()
			p[3].Local = "2026-10-25T02:30:00"
		},
		"outside the window": func(p []Send) {
			p[0].At = p[0].At.Add(-3 * time.Hour)
			p[0].Local = p[0].At.In(loc).Format(LocalLayout)
		},
		"duplicate instant": func(p []Send) { p[1] = p[0]; p[1].Index = 1 },
		"over the cap":      func(p []Send) { p[3].Day = p[2].Day },
	}
	for name, br := range breaks {
		q := slices.Clone(p)
		br(q)
		if checkPlan(6, r, q) == nil {
			t.Errorf("%s: not caught", name)
		}
	}
}

func BenchmarkPlan1000(b *testing.B) {
	r := Rules{SendsPerDay: 50, Windows: []Window{{540, 720}, {780, 1020}}, TimeZone: "Europe/Berlin", Start: Date{2026, 3, 20}}
	for b.Loop() {
		if _, err := Plan(1000, r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUsableMinutesFastPathAgrees: the stable-day shortcut gives exactly
// what Unique gives minute by minute, on the days around each transition.
func TestUsableMinutesFastPathAgrees(t *testing.T) {
	all := []Window{{0, 24 * 60}}
	for _, tr := range transitions {
		loc, _ := time.LoadLocation(tr.zone)
		for off := -4; off <= 4; off++ {
			d := tr.day.AddDays(off)
			var want []time.Time
			for c := Clock(0); c < 24*60; c++ {
				if at, ok := Unique(d, c, loc); ok {
					want = append(want, at)
				}
			}
			if got := UsableMinutes(d, all, loc, time.Time{}); !slices.EqualFunc(got, want, time.Time.Equal) {
				t.Fatalf("%s %s: fast path gives %d minutes, Unique %d", tr.zone, d, len(got), len(want))
			}
		}
	}
}

func TestAllows(t *testing.T) {
	r := Rules{Windows: []Window{{540, 600}}, TimeZone: "Europe/Berlin", Start: Date{2026, 6, 1}}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2026, 6, 1, 7, 0, 0, 0, time.UTC), true},    // Monday 09:00 Berlin
		{time.Date(2026, 6, 1, 7, 59, 59, 0, time.UTC), true},  // 09:59:59, the last minute
		{time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC), false},   // 10:00, the end
		{time.Date(2026, 6, 1, 6, 59, 59, 0, time.UTC), false}, // before
		{time.Date(2026, 6, 6, 7, 30, 0, 0, time.UTC), false},  // Saturday
	} {
		if got, err := r.Allows(c.at); err != nil || got != c.want {
			t.Errorf("Allows(%s) = %v, %v; want %v", c.at, got, err, c.want)
		}
	}
	if _, err := (Rules{}).Allows(time.Now()); !errors.Is(err, ErrInvalid) {
		t.Errorf("invalid rules: %v", err)
	}
}

func TestNextUsable(t *testing.T) {
	berlin := Rules{Weekdays: []time.Weekday{time.Sunday, time.Monday}, Windows: []Window{{120, 150}, {600, 610}}, TimeZone: "Europe/Berlin", Start: Date{2026, 3, 1}}
	for _, c := range []struct {
		name string
		r    Rules
		at   time.Time
		want string
	}{
		{"inside: the next whole minute", berlin, time.Date(2026, 3, 23, 9, 5, 30, 0, time.UTC), "2026-03-23T10:06:00"},
		{"at a minute: itself", berlin, time.Date(2026, 3, 23, 9, 5, 0, 0, time.UTC), "2026-03-23T10:05:00"},
		{"after the last window: next allowed day", berlin, time.Date(2026, 3, 23, 9, 10, 0, 0, time.UTC), "2026-03-29T10:00:00"},
		// 2026-03-29 is a Sunday whose 02:00-03:00 does not exist in Berlin.
		{"a window inside the gap is skipped", berlin, time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC), "2026-03-29T10:00:00"},
		{"between windows", berlin, time.Date(2026, 3, 30, 3, 0, 0, 0, time.UTC), "2026-03-30T10:00:00"},
	} {
		got, err := c.r.NextUsable(c.at)
		if err != nil || got.Local != c.want {
			t.Errorf("%s: %s, %v; want %s", c.name, got.Local, err, c.want)
		}
		if ok, _ := c.r.Allows(got.At); !ok {
			t.Errorf("%s: %s not allowed", c.name, got.Local)
		}
	}
}

// FuzzPlan: any rules either fail validation with ErrInvalid or give a
// plan with every property (go test -fuzz FuzzPlan ./internal/campaigns/plan/).
func FuzzPlan(f *testing.F) {
	f.Add(uint16(5), uint16(20), uint8(0x3e), uint16(540), uint16(1020), uint16(0), uint16(0), uint8(0), int16(0))
	f.Add(uint16(40), uint16(3), uint8(0x7f), uint16(60), uint16(240), uint16(600), uint16(700), uint8(1), int16(-3))
	f.Add(uint16(9), uint16(1), uint8(0x01), uint16(90), uint16(150), uint16(0), uint16(0), uint8(2), int16(0))
	zones := []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC", "Asia/Kathmandu", "Bad/Zone"}
	f.Fuzz(func(t *testing.T, n, spd uint16, days uint8, s1, e1, s2, e2 uint16, zone uint8, startOff int16) {
		tr := transitions[int(zone)%len(transitions)]
		r := Rules{SendsPerDay: int(spd % 1500), TimeZone: zones[int(zone)%len(zones)], Start: tr.day.AddDays(int(startOff % 400)),
			Windows: []Window{{Clock(s1 % 1500), Clock(e1 % 1500)}}}
		if s2 != 0 || e2 != 0 {
			r.Windows = append(r.Windows, Window{Clock(s2 % 1500), Clock(e2 % 1500)})
		}
		for d := range time.Weekday(7) {
			if days&(1<<d) != 0 {
				r.Weekdays = append(r.Weekdays, d)
			}
		}
		recipients := int(n%400) + 1
		p, err := Plan(recipients, r)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error without ErrInvalid: %v", err)
			}
			return
		}
		if err := checkPlan(recipients, r, p); err != nil {
			t.Fatalf("rules %+v: %v", r, err)
		}
	})
}
