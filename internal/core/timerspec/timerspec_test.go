package timerspec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
)

func TestExecutionNameIsStablePerItemAndDue(t *testing.T) {
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := ExecutionName("task-01J", due), ExecutionName("task-01J", due.Add(time.Second))
	if a != "task-01J-1798761600" || a == b || b != "task-01J-1798761601" {
		t.Fatalf("names %q %q", a, b)
	}
	for _, n := range []string{ExecutionName(strings.Repeat("x", 80), due), RestartName(ExecutionName(strings.Repeat("x", 64), due), due),
		RestartName(ExecutionName(strings.Repeat("x", 80), due), due)} {
		if len(n) > MaxExecutionName {
			t.Fatalf("name %q (%d characters) not fitted", n, len(n))
		}
	}
	if r := RestartName(a, due); r != "task-01J-1798761600-r1798761600" {
		t.Fatalf("restart name %q", r)
	}
}

func TestHorizonAndLateness(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if err := CheckHorizon(now.Add(MaxHorizon), now); err != nil {
		t.Fatal(err)
	}
	if err := CheckHorizon(now.Add(MaxHorizon+time.Second), now); !errors.Is(err, ErrBeyondHorizon) {
		t.Fatalf("%v; want ErrBeyondHorizon", err)
	}
	if err := CheckLateness(time.Hour); err == nil || !strings.Contains(err.Error(), "48h") {
		t.Fatalf("%v; want a refusal naming the bound", err)
	}
	if err := CheckLateness(72 * time.Hour); err != nil {
		t.Fatal(err)
	}
}

func TestParseExecutionAndRestartNames(t *testing.T) {
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	restarted := due.Add(-time.Hour)
	long := "item-" + strings.Repeat("x", contract.MaxScheduleName-len("item-"))
	for _, tc := range []struct {
		name, exec  string
		wantExec    bool // ParseExecutionName gives wantName, due
		wantRestart bool // ParseRestartName gives wantName, due, restarted
		wantName    string
	}{
		{"execution", ExecutionName("task-01J", due), true, false, "task-01J"},
		{"execution of a name with dashes", ExecutionName("item-a-b-7", due), true, false, "item-a-b-7"},
		{"execution of a name ending like a restart", ExecutionName("item-x-r5", due), true, false, "item-x-r5"},
		{"execution of a 64-character name", ExecutionName(long, due), true, false, long},
		{"restart", RestartName(ExecutionName("task-01J", due), restarted), false, true, "task-01J"},
		{"restart of a 57-character name", RestartName(ExecutionName(long[:57], due), restarted), false, true, long[:57]},
		{"hashed restart of a 58-character name", RestartName(ExecutionName(long[:58], due), restarted), false, false, ""},
		{"hashed execution", ExecutionName(strings.Repeat("x", 80), due), false, false, ""},
		{"no suffix", "task-01J", false, false, ""},
		{"empty", "", false, false, ""},
		{"only a suffix", "-1798761600", false, false, ""},
		{"empty suffix", "task-01J-", false, false, ""},
		{"leading zero", "task-01J-01798761600", false, false, ""},
		{"sign", "task-01J-+1798761600", false, false, ""},
		{"a name ending in a dash, not a negative due time", ExecutionName("task-01J-", due), true, false, "task-01J-"},
		{"not digits", "task-01J-17987616OO", false, false, ""},
		{"restart without the due time", "task-01J-r1798761600", false, false, ""},
		{"restart with leading zero", "task-01J-1798761600-r01798761600", false, false, ""},
		{"too long to be written", strings.Repeat("x", 70) + "-1798761600", false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, at, ok := ParseExecutionName(tc.exec)
			if ok != tc.wantExec || (ok && (name != tc.wantName || !at.Equal(due))) {
				t.Fatalf("ParseExecutionName(%q) = %q, %v, %v; want %q, %v, %v", tc.exec, name, at, ok, tc.wantName, due, tc.wantExec)
			}
			if ok && ExecutionName(name, at) != tc.exec {
				t.Fatalf("round trip of %q gives %q", tc.exec, ExecutionName(name, at))
			}
			name, at, r, ok := ParseRestartName(tc.exec)
			if ok != tc.wantRestart || (ok && (name != tc.wantName || !at.Equal(due) || !r.Equal(restarted))) {
				t.Fatalf("ParseRestartName(%q) = %q, %v, %v, %v; want %q, %v, %v, %v", tc.exec, name, at, r, ok,
					tc.wantName, due, restarted, tc.wantRestart)
			}
			if ok && RestartName(ExecutionName(name, at), r) != tc.exec {
				t.Fatalf("round trip of %q gives %q", tc.exec, RestartName(ExecutionName(name, at), r))
			}
		})
	}
}

// Every due time a schedule may have round-trips through its execution
// name, sub-second parts dropped (a schedule's due time is whole seconds:
// contract.Schema.ScheduleFor).
func TestExecutionNameRoundTrips(t *testing.T) {
	for _, due := range []time.Time{time.Unix(0, 0), time.Unix(1, 0), time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		time.Date(2286, 11, 20, 17, 46, 39, 0, time.UTC), time.Date(2027, 3, 1, 1, 2, 3, 0, time.FixedZone("x", 3600))} {
		for _, name := range []string{"a", "task-01J0000000000000000000000A", "item-" + strings.Repeat("f", 40)} {
			n, at, ok := ParseExecutionName(ExecutionName(name, due))
			if !ok || n != name || !at.Equal(due) || at.Location() != time.UTC {
				t.Fatalf("%s at %v: parsed %q %v %v", name, due, n, at, ok)
			}
		}
	}
}

// A restart's second is its closed link's stop second, and always after
// the second that named that link.
func TestRestartSecond(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		prev, stopped time.Time
		want          time.Time
	}{
		{"first link: its stop second", time.Time{}, base.Add(1500 * time.Millisecond), base.Add(time.Second)},
		{"later stop", base, base.Add(3 * time.Second), base.Add(3 * time.Second)},
		{"stop within the link's second", base, base.Add(900 * time.Millisecond), base.Add(time.Second)},
		{"stop before the link's second", base.Add(5 * time.Second), base.Add(2 * time.Second), base.Add(6 * time.Second)},
	} {
		if got := RestartSecond(tc.prev, tc.stopped); !got.Equal(tc.want) {
			t.Errorf("%s: RestartSecond(%s, %s) = %s; want %s", tc.name, tc.prev, tc.stopped, got, tc.want)
		}
	}
}
