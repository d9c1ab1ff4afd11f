package futureevent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/timerspec"
)

const target = "arn:aws:lambda:us-east-1:123456789012:function:remind"

var now = time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)

// TestNewItem: the item is the core's contract item, its moment RFC 3339
// in UTC at whole seconds (contract.FormatTime), armed.
func TestNewItem(t *testing.T) {
	at := time.Date(2027, 5, 1, 9, 30, 15, 999, time.FixedZone("CEST", 2*3600))
	e, err := New(now, "ann-2027", at, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	item := e.Item()
	want := map[string]string{"name": "ann-2027", "at": "2027-05-01T07:30:15Z", "status": "Scheduled", "target": target, "payload": "{}"}
	for k, v := range want {
		if item[k] != v {
			t.Errorf("%s = %q, want %q", k, item[k], v)
		}
	}
	s := Schema()
	it, err := s.ItemFrom(item)
	if err != nil || !s.Armed(it) || !it.Due.Equal(e.At) || it.Key.Partition != "ann-2027" {
		t.Fatalf("the core reads %+v, %v: want an armed item due at %s", it, err, e.At)
	}
	back, status, err := FromItem(item)
	if err != nil || status != Scheduled || !back.Same(e) {
		t.Fatalf("FromItem = %+v, %q, %v", back, status, err)
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name, ev, target, payload string
		at                        time.Time
		wantText                  string
	}{
		{name: "past", ev: "a", target: target, at: now.Add(-time.Second), wantText: "not in the future"},
		{name: "now", ev: "a", target: target, at: now, wantText: "not in the future"},
		{name: "beyond the horizon", ev: "a", target: target, at: now.Add(MaxHorizon + time.Second), wantText: "364 days"},
		{name: "no target", ev: "a", at: now.Add(time.Hour), wantText: "AddTarget"},
		{name: "payload not JSON", ev: "a", target: target, at: now.Add(time.Hour), payload: "{", wantText: "not JSON"},
		{name: "invalid name", ev: "ann@example.com", target: target, at: now.Add(time.Hour), wantText: "futureevent.Name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(now, tc.ev, tc.at, tc.target, []byte(tc.payload))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("got %v, want ErrInvalid with %q", err, tc.wantText)
			}
		})
	}
	if _, err := New(now, "h", now.Add(MaxHorizon), target, nil); err != nil {
		t.Fatalf("exactly the horizon: %v", err)
	}
}

// TestHorizonIsTheTimers: the client's horizon is the one the core's Step
// Functions timer enforces (it rejects, never chains, a later due time).
func TestHorizonIsTheTimers(t *testing.T) {
	if MaxHorizon != timerspec.MaxHorizon || MaxHorizon >= timerspec.MaxExecution {
		t.Fatalf("MaxHorizon %s, timer's %s, execution %s", MaxHorizon, timerspec.MaxHorizon, timerspec.MaxExecution)
	}
	if err := timerspec.CheckHorizon(now.Add(MaxHorizon), now); err != nil {
		t.Fatalf("the timer refuses what the client accepts: %v", err)
	}
}

func TestSame(t *testing.T) {
	at := now.Add(time.Hour)
	a, _ := New(now, "n", at, target, []byte(`{"a":1,"b":2}`))
	for _, tc := range []struct {
		name string
		b    Event
		want bool
	}{
		{"key order and spaces aside", Event{Name: "n", At: at, Target: target, Payload: []byte(`{ "b":2, "a":1 }`)}, true},
		{"another moment", Event{Name: "n", At: at.Add(time.Second), Target: target, Payload: a.Payload}, false},
		{"another target", Event{Name: "n", At: at, Target: target + "2", Payload: a.Payload}, false},
		{"another payload", Event{Name: "n", At: at, Target: target, Payload: []byte(`{"a":1}`)}, false},
	} {
		if got := a.Same(tc.b); got != tc.want {
			t.Errorf("%s: Same = %v", tc.name, got)
		}
	}
}

func TestFromItemRejects(t *testing.T) {
	for _, attrs := range []map[string]string{
		{"at": "2027-01-01T00:00:00Z", "target": target},
		{"name": "n", "target": target},
		{"name": "n", "at": "2027-01-01T00:00:00Z"},
	} {
		if _, _, err := FromItem(attrs); !errors.Is(err, ErrBadInput) {
			t.Errorf("FromItem(%v) = %v, want ErrBadInput", attrs, err)
		}
	}
}

func TestName(t *testing.T) {
	long := strings.Repeat("x", 100) + "@example.com"
	for _, tc := range []struct {
		parts []string
		want  string // "" when only validity and determinism are checked
	}{
		{parts: []string{"ann", "2027"}, want: "ann-2027"},
		{parts: []string{"ann@example.com", "2027"}},
		{parts: []string{"a.b@example.com", "2027"}},
		{parts: []string{"a_b@example.com", "2027"}},
		{parts: []string{long, "2027"}},
		{parts: []string{"ünïcode mail@x.com", "2027"}},
	} {
		got := Name(tc.parts...)
		if !ValidName(got) {
			t.Errorf("Name(%q) = %q is not a valid name", tc.parts, got)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("Name(%q) = %q, want %q", tc.parts, got, tc.want)
		}
		if Name(tc.parts...) != got {
			t.Errorf("Name(%q) is not deterministic", tc.parts)
		}
	}
	if Name("a.b@example.com", "2027") == Name("a_b@example.com", "2027") {
		t.Error("two emails that sanitize alike got one name: one customer would never be reminded")
	}
	if Name("ann@example.com", "2027") == Name("ann@example.com", "2028") {
		t.Error("two years got one name")
	}
}
