package notify

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/unschedule/unschedule/internal/todo/task"
)

func TestFormatMessage(t *testing.T) {
	due := time.Date(2030, 3, 4, 17, 5, 0, 0, time.UTC)
	late := time.Date(2030, 3, 4, 23, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		n           task.Notification
		wantSubject string
		wantBody    []string
		notInBody   []string
		// wantLast is the body's last line.
		wantLast string
	}{
		{
			name:        "plain, no time zone: UTC alone",
			n:           task.Notification{UserID: "u", TaskID: "t", Title: "Pay rent", DueAt: due, Link: "https://app.example.com/#/tasks/t"},
			wantSubject: "Task expired: Pay rent",
			wantBody:    []string{`"Pay rent"`, "Due: Monday, 4 March 2030 at 17:05 UTC\n", "https://app.example.com/#/tasks/t"},
			notInBody:   []string{"(17:05 UTC)"},
			wantLast:    "Open the task: https://app.example.com/#/tasks/t",
		},
		{
			name:        "deadline given in another zone is shown in UTC when the user has none",
			n:           task.Notification{Title: "Call", DueAt: due.In(time.FixedZone("X", 3600))},
			wantSubject: "Task expired: Call",
			wantBody:    []string{"Due: Monday, 4 March 2030 at 17:05 UTC\n"},
			notInBody:   []string{"Open the task", "#/tasks/", "X"},
			wantLast:    "You receive this because you signed up for task reminders with this address.",
		},
		{
			name:        "the user's zone, then UTC",
			n:           task.Notification{Title: "Call", DueAt: due, TimeZone: "Europe/Berlin", Link: "https://a/#/tasks/t"},
			wantSubject: "Task expired: Call",
			wantBody:    []string{"Due: Monday, 4 March 2030 at 18:05 CET (17:05 UTC)\n"},
			wantLast:    "Open the task: https://a/#/tasks/t",
		},
		{
			name:     "summer time",
			n:        task.Notification{Title: "Call", DueAt: time.Date(2030, 7, 1, 14, 55, 0, 0, time.UTC), TimeZone: "Europe/Berlin"},
			wantBody: []string{"Due: Monday, 1 July 2030 at 16:55 CEST (14:55 UTC)\n"},
		},
		{
			name:     "local day differs from the UTC day",
			n:        task.Notification{Title: "Call", DueAt: late, TimeZone: "Asia/Tokyo"},
			wantBody: []string{"Due: Tuesday, 5 March 2030 at 08:30 JST (23:30 UTC on Monday, 4 March)\n"},
		},
		{
			name:     "zone with a numeric abbreviation",
			n:        task.Notification{Title: "Call", DueAt: due, TimeZone: "Asia/Dubai"},
			wantBody: []string{"at 21:05 UTC+4 (17:05 UTC)"},
		},
		{
			name:     "half-hour offset west of UTC",
			n:        task.Notification{Title: "Call", DueAt: due, TimeZone: "America/St_Johns"},
			wantBody: []string{"at 13:35 NST (17:05 UTC)"},
		},
		{
			name:      "a stored zone this build does not know: UTC",
			n:         task.Notification{Title: "Call", DueAt: due, TimeZone: "Mars/Olympus_Mons"},
			wantBody:  []string{"Due: Monday, 4 March 2030 at 17:05 UTC\n"},
			notInBody: []string{"Mars"},
		},
		{
			name:        "non-ASCII title: subject transliterated, body kept",
			n:           task.Notification{Title: "Kuchen für Zoë backen", DueAt: due},
			wantSubject: "Task expired: Kuchen fur Zoe backen",
			wantBody:    []string{`"Kuchen für Zoë backen"`},
		},
		{
			name:        "control characters: dropped from the subject, tab as a space",
			n:           task.Notification{Title: "Café\tnaïve\x07", DueAt: due},
			wantSubject: "Task expired: Cafe naive",
			wantBody:    []string{"Café\tnaïve"},
		},
		{
			name:        "a title with no Latin letter: fallback subject with the time in the user's zone",
			n:           task.Notification{Title: "牛乳を買う", DueAt: due, TimeZone: "Asia/Tokyo"},
			wantSubject: "Task expired: due at 02:05 JST (17:05 UTC)",
			wantBody:    []string{`"牛乳を買う"`},
		},
		{
			name:        "long title is cut",
			n:           task.Notification{Title: strings.Repeat("a", 200), DueAt: due},
			wantSubject: "Task expired: " + strings.Repeat("a", MaxSubjectLen-3-len("Task expired: ")) + "...",
			wantBody:    []string{strings.Repeat("a", 200)},
		},
		{
			name:        "description after the title, plainly, the link still last",
			n:           task.Notification{Title: "Pay rent", Description: "Transfer to the landlord.\r\nIBAN on the fridge.\x00\n", DueAt: due, Link: "https://a/#/tasks/t"},
			wantSubject: "Task expired: Pay rent",
			wantBody: []string{"so it has expired.\n\nTransfer to the landlord.\nIBAN on the fridge.\n\nDue: Monday",
				"Transfer to the landlord.\nIBAN on the fridge.\n\n"},
			notInBody: []string{"\r", "\x00"},
			wantLast:  "Open the task: https://a/#/tasks/t",
		},
		{
			name:      "blank description: no empty block",
			n:         task.Notification{Title: "Pay rent", Description: " \n\t", DueAt: due},
			wantBody:  []string{"so it has expired.\n\nDue: Monday"},
			notInBody: []string{"\n\n\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := FormatMessage(tc.n)
			if tc.wantSubject != "" && m.Subject != tc.wantSubject {
				t.Fatalf("subject %q, want %q", m.Subject, tc.wantSubject)
			}
			checkSubject(t, m.Subject)
			for _, w := range tc.wantBody {
				if !strings.Contains(m.Body, w) {
					t.Errorf("body lacks %q:\n%s", w, m.Body)
				}
			}
			if lines := strings.Split(strings.TrimRight(m.Body, "\n"), "\n"); tc.wantLast != "" && lines[len(lines)-1] != tc.wantLast {
				t.Errorf("last line %q, want %q:\n%s", lines[len(lines)-1], tc.wantLast, m.Body)
			}
			for _, w := range tc.notInBody {
				if strings.Contains(m.Body, w) {
					t.Errorf("body has %q:\n%s", w, m.Body)
				}
			}
		})
	}
}

// checkSubject asserts what SNS asks of a subject: ASCII that begins with
// a letter, number or punctuation mark, no line breaks or control
// characters, fewer than 100 characters.
func checkSubject(t *testing.T, s string) {
	t.Helper()
	if len(s) == 0 || len(s) >= 100 || len(s) > MaxSubjectLen {
		t.Fatalf("subject %q is %d bytes; SNS takes 1 to 99", s, len(s))
	}
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			t.Fatalf("subject %q has %U", s, r)
		}
	}
	if s[0] == ' ' {
		t.Fatalf("subject %q begins with a space", s)
	}
}

func TestASCII(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Kuchen für Zoë backen", "Kuchen fur Zoe backen"},
		{"Straße", "Strasse"},
		{"Crème brûlée à la carte", "Creme brulee a la carte"},
		{"Æsir æble", "AEsir aeble"},
		{"Smørrebrød Øl", "Smorrebrod Ol"},
		{"Łódź, Kraków", "Lodz, Krakow"},
		{"Œuvre œuf", "OEuvre oeuf"},
		{"Dvořák Čapek Škoda Žižkov", "Dvorak Capek Skoda Zizkov"},
		{"Țară și Ștefan", "Tara si Stefan"},
		{"İstanbul ığdır", "Istanbul igdir"},
		{"Þórr", "Thorr"},
		{"e\u0301te\u0301 (combining)", "ete (combining)"},
		{"“quoted” ‘single’ „low“ «guillemets»", `"quoted" 'single' "low" <<guillemets>>`},
		{"A – B — C ‐ D − E", "A - B - C - D - E"},
		{"wait…", "wait..."},
		{"5 €", "5 EUR"},
		{"ＦＵＬＬ　ｗｉｄｔｈ１", "FULL width1"},
		{"no\u00a0break\u2009thin", "no break thin"},
		{"zero\u200bwidth\ufeff", "zerowidth"},
		{"line\nbreak\r\nand\ttab", "line break and tab"},
		{"bell\x07 nul\x00 del\x7f esc\x1b", "bell nul del esc"},
		{"  many    spaces  ", "many spaces"},
		{"Buy 牛乳 today", "Buy today"},
		{"Pay rent 🏠", "Pay rent"},
		{"Купить молоко", ""},
		{"牛乳を買う", ""},
		{"", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := ASCII(tc.in); got != tc.want {
				t.Fatalf("ASCII(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// Every table entry is printable ASCII, and the tables cover their ranges.
func TestASCIITables(t *testing.T) {
	if len(latin1) != 0x100-0xc0 || len(latinExtA) != 0x180-0x100 {
		t.Fatalf("table sizes %d, %d", len(latin1), len(latinExtA))
	}
	for r := rune(0x80); r < 0x3000; r++ {
		got := ASCII(string(r))
		for _, c := range got {
			if c <= 0x20 || c > 0x7e {
				t.Fatalf("ASCII(%U) = %q", r, got)
			}
		}
		if r >= 0xc0 && r < 0x180 && got == "" {
			t.Fatalf("ASCII(%U) is empty: the Latin tables should spell every letter", r)
		}
	}
}

func TestSubject(t *testing.T) {
	const prefix, fallback = "Task expired: ", "Task expired: due at 16:55 CET (15:55 UTC)"
	long := strings.Repeat("Zoë ", 40)
	for _, tc := range []struct{ name, title, want string }{
		{"transliterated", "Kuchen für Zoë backen", "Task expired: Kuchen fur Zoe backen"},
		{"nothing left: fallback", "牛乳を買う", fallback},
		{"only punctuation left: fallback", "🎉 — 🎉", fallback},
		{"digits are enough", "２０２６", "Task expired: 2026"},
		{"cut under 100 on a space", long, "Task expired: " + strings.TrimRight(strings.Repeat("Zoe ", 40)[:MaxSubjectLen-3-len(prefix)], " ") + "..."},
		{"cut with many multi-byte runes", strings.Repeat("ü", 300), "Task expired: " + strings.Repeat("u", MaxSubjectLen-3-len(prefix)) + "..."},
		{"exactly the limit is not cut", strings.Repeat("x", MaxSubjectLen-len(prefix)), prefix + strings.Repeat("x", MaxSubjectLen-len(prefix))},
		{"control characters removed", "a\x00b\x1fc\u0085d", "Task expired: abc d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Subject(prefix, tc.title, fallback)
			if got != tc.want {
				t.Fatalf("Subject(%q) = %q, want %q", tc.title, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("invalid UTF-8: %q", got)
			}
			checkSubject(t, got)
		})
	}
}

// FuzzSubject: whatever the title, the subject is what SNS accepts.
func FuzzSubject(f *testing.F) {
	for _, s := range []string{"Kuchen für Zoë backen", "牛乳", "\x00\n", strings.Repeat("é", 120), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, title string) {
		m := FormatMessage(task.Notification{Title: title, DueAt: time.Unix(1e9, 0), TimeZone: "Europe/Berlin"})
		checkSubject(t, m.Subject)
	})
}
