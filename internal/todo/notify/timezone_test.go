package notify

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/todo/task"
)

func TestCheckTimeZone(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"", true}, // none: UTC
		{"UTC", true},
		{"Europe/Berlin", true},
		{"America/Argentina/ComodRivadavia", true},
		{"America/Port-au-Prince", true},
		{"Etc/GMT+5", true},
		{"Asia/Calcutta", true}, // an old name some browsers still give
		{"Europe/Kyiv", true},   // a new one an old system database may lack
		{"Local", false},        // the server's zone
		{"Mars/Olympus_Mons", false},
		{"europe/berlin", false},
		{"../../etc/passwd", false},
		{"/usr/share/zoneinfo/UTC", false},
		{"Europe/Berlin ", false},
		{"CET\x00", false},
		{"Europe/" + string(make([]byte, 80)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTimeZone(tc.name)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckTimeZone(%q) = %v, want ok=%t", tc.name, err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrBadTimeZone) {
				t.Fatalf("error %v is not ErrBadTimeZone", err)
			}
			if loc := Location(tc.name); (tc.name == "" || !tc.ok) && loc != time.UTC {
				t.Fatalf("Location(%q) = %v, want UTC", tc.name, loc)
			}
		})
	}
}

func TestClock(t *testing.T) {
	at := time.Date(2026, 11, 30, 15, 55, 0, 0, time.UTC)
	for _, tc := range []struct{ zone, want string }{
		{"", "15:55 UTC"},
		{"UTC", "15:55 UTC"},
		{"Etc/UTC", "15:55 UTC"},
		{"Europe/Berlin", "16:55 CET (15:55 UTC)"},
		{"Europe/London", "15:55 GMT (15:55 UTC)"},
		{"America/New_York", "10:55 EST (15:55 UTC)"},
		{"Asia/Kathmandu", "21:40 UTC+5:45 (15:55 UTC)"},
		{"America/Sao_Paulo", "12:55 UTC-3 (15:55 UTC)"},
	} {
		t.Run(tc.zone, func(t *testing.T) {
			if got := Clock(at, Location(tc.zone)); got != tc.want {
				t.Fatalf("Clock in %q = %q, want %q", tc.zone, got, tc.want)
			}
		})
	}
}

type fakeSettings struct {
	st  Settings
	err error
	n   int
}

func (f *fakeSettings) LoadSettings(_ context.Context, userID string) (Settings, error) {
	f.n++
	s := f.st
	s.UserID = userID
	return s, f.err
}

type lastNotifier struct{ got []task.Notification }

func (l *lastNotifier) Publish(_ context.Context, n task.Notification) error {
	l.got = append(l.got, n)
	return nil
}

func TestInUserTimeZone(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings fakeSettings
		in       string // the notification's own zone
		want     string
		reads    int
	}{
		{"the user's zone", fakeSettings{st: Settings{TimeZone: "Europe/Berlin", Version: 1}}, "", "Europe/Berlin", 1},
		{"no zone stored: UTC", fakeSettings{st: Settings{Version: 1}}, "", "", 1},
		{"no settings record: UTC", fakeSettings{}, "", "", 1},
		{"a failed read still sends, in UTC", fakeSettings{err: errors.New("throttled")}, "", "", 1},
		{"a zone already set is kept, unread", fakeSettings{st: Settings{TimeZone: "Asia/Tokyo"}}, "America/Chicago", "America/Chicago", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := &lastNotifier{}
			n := InUserTimeZone(next, &tc.settings, slog.New(slog.DiscardHandler))
			if err := n.Publish(context.Background(), task.Notification{UserID: "u", TaskID: "t", TimeZone: tc.in}); err != nil {
				t.Fatal(err)
			}
			if len(next.got) != 1 || next.got[0].TimeZone != tc.want || next.got[0].TaskID != "t" {
				t.Fatalf("published %+v, want one with zone %q", next.got, tc.want)
			}
			if tc.settings.n != tc.reads {
				t.Fatalf("%d settings reads, want %d", tc.settings.n, tc.reads)
			}
		})
	}
}
