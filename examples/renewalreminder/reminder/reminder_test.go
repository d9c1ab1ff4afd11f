package reminder

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/futureevents/futureevent"
)

func TestFor(t *testing.T) {
	charge := time.Date(2027, 6, 15, 10, 0, 0, 0, time.UTC)
	r, err := For(Subscription{Email: " Ann.Lee@Example.com ", FirstName: "Ann", ChargeAt: charge})
	if err != nil {
		t.Fatal(err)
	}
	if !r.At.Equal(charge.Add(-7 * 24 * time.Hour)) {
		t.Errorf("at %s", r.At)
	}
	if !futureevent.ValidName(r.Name) || !strings.HasPrefix(r.Name, "renewal-ann_lee_example_com-2027-") {
		t.Errorf("name %q", r.Name)
	}
	same, _ := For(Subscription{Email: "ann.lee@example.com", FirstName: "Ann", ChargeAt: charge})
	if same.Name != r.Name || string(same.Payload) != string(r.Payload) {
		t.Error("the same customer and year must give the same event (no second reminder)")
	}
	next, _ := For(Subscription{Email: "ann.lee@example.com", ChargeAt: charge.AddDate(1, 0, 0)})
	if next.Name == r.Name {
		t.Error("next year's charge needs its own reminder")
	}
	other, _ := For(Subscription{Email: "ann_lee@example.com", ChargeAt: charge})
	if other.Name == r.Name {
		t.Error("another customer whose email sanitizes alike shares the name: they would never be reminded")
	}
	for _, bad := range []Subscription{{Email: "nope", ChargeAt: charge}, {Email: "a@b.c"}} {
		if _, err := For(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("For(%+v) = %v", bad, err)
		}
	}
}

func TestMessage(t *testing.T) {
	got := Message(Payload{FirstName: "Ann", ChargeAt: time.Date(2027, 6, 15, 0, 0, 0, 0, time.UTC)})
	if got != "Hi Ann, your subscription renews on Tuesday 15 June 2027; we will charge you then." {
		t.Fatal(got)
	}
}

// TestLogFieldsHoldNoPersonalData: what the reminder function logs names
// neither the recipient's address nor their name (examples are copied).
func TestLogFieldsHoldNoPersonalData(t *testing.T) {
	p := Payload{Email: "ann.lee@example.com", FirstName: "Ann", ChargeAt: time.Date(2027, 6, 15, 10, 0, 0, 0, time.UTC)}
	got := fmt.Sprint(LogFields(p)...)
	for _, personal := range []string{"ann.lee", "example.com", "Ann"} {
		if strings.Contains(got, personal) {
			t.Errorf("LogFields = %s: holds %q", got, personal)
		}
	}
	if !strings.Contains(got, "2027-06-15") {
		t.Errorf("LogFields = %s: want the charge's day", got)
	}
}
