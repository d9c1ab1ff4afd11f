package job

import (
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
)

func TestNext(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// 2027-03-01 is a Monday.
	for _, tc := range []struct {
		name string
		w    Weekly
		now  string
		want string
	}{
		{"Wednesday: the coming Monday", DefaultWeekly, "2027-03-03T15:00:00Z", "2027-03-08T03:00:00Z"},
		{"Monday before 03:00: the same day", DefaultWeekly, "2027-03-01T02:59:59Z", "2027-03-01T03:00:00Z"},
		{"a nanosecond before", DefaultWeekly, "2027-03-01T02:59:59.999999999Z", "2027-03-01T03:00:00Z"},
		{"exactly at the boundary: next week", DefaultWeekly, "2027-03-01T03:00:00Z", "2027-03-08T03:00:00Z"},
		{"just after: next week", DefaultWeekly, "2027-03-01T03:00:00.000000001Z", "2027-03-08T03:00:00Z"},
		{"Sunday late", DefaultWeekly, "2027-03-07T23:59:59Z", "2027-03-08T03:00:00Z"},
		{"across a year end", DefaultWeekly, "2027-12-29T10:00:00Z", "2028-01-03T03:00:00Z"},
		{"another time zone is read as UTC (02:30 UTC)", DefaultWeekly, "2027-03-01T04:30:00+02:00", "2027-03-01T03:00:00Z"},
		{"Sunday 23:30 weekly", Weekly{Weekday: time.Sunday, Hour: 23, Minute: 30}, "2027-03-07T23:30:00Z", "2027-03-14T23:30:00Z"},
		{"Sunday 23:30 weekly, from Saturday", Weekly{Weekday: time.Sunday, Hour: 23, Minute: 30}, "2027-03-06T00:00:00Z", "2027-03-07T23:30:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.w.Next(utc(tc.now))
			if !got.Equal(utc(tc.want)) || got.Location() != time.UTC {
				t.Fatalf("Next(%s) = %s, want %s", tc.now, got, tc.want)
			}
			if got.Sub(utc(tc.now)) > 7*24*time.Hour || !got.After(utc(tc.now)) {
				t.Fatalf("not within the next week: %s", got)
			}
		})
	}
}

func TestItemFor(t *testing.T) {
	mon := time.Date(2027, 3, 1, 3, 0, 0, 0, time.UTC)
	a, _ := ItemFor("shop-1", mon.Add(-48*time.Hour), DefaultWeekly)
	b, _ := ItemFor("shop-1", mon.Add(-time.Minute), DefaultWeekly)
	if a != b || !a.Window.Equal(mon) || a.WindowKey() != "2027-03-01T03:00:00Z" {
		t.Fatalf("one item per tenant and window: %+v %+v", a, b)
	}
	want := map[string]string{"tenantId": "shop-1", "window": "2027-03-01T03:00:00Z", "dueAt": "2027-03-01T03:00:00Z", "status": "Pending"}
	if got := a.Attrs(); len(got) != len(want) || got["tenantId"] != want["tenantId"] || got["window"] != want["window"] ||
		got["dueAt"] != want["dueAt"] || got["status"] != want["status"] {
		t.Fatalf("attrs %v, want %v", got, want)
	}
	it, err := Schema().ItemFrom(a.Attrs())
	if err != nil || !Schema().Armed(it) || !it.Due.Equal(mon) {
		t.Fatalf("the core reads the item as armed at the window: %+v %v", it, err)
	}
	c, _ := ItemFor("shop-1", mon, DefaultWeekly)
	if c == a {
		t.Fatal("activity at the run belongs to the next window")
	}
	if _, err := ItemFor(" ", mon, DefaultWeekly); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
	if _, err := ItemFor("x", mon, Weekly{Hour: 24}); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
}

func TestParseWeekly(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Weekly
		wantErr bool
	}{
		{"", DefaultWeekly, false},
		{"MONDAY 03:00", DefaultWeekly, false},
		{"sunday 23:30", Weekly{Weekday: time.Sunday, Hour: 23, Minute: 30}, false},
		{"Funday 03:00", Weekly{}, true},
		{"MONDAY 3", Weekly{}, true},
		{"MONDAY 24:00", Weekly{}, true},
	} {
		got, err := ParseWeekly(tc.in)
		if (err != nil) != tc.wantErr || !tc.wantErr && got != tc.want {
			t.Errorf("ParseWeekly(%q) = %v, %v", tc.in, got, err)
		}
		if !tc.wantErr && tc.in != "" {
			if back, _ := ParseWeekly(got.String()); back != got {
				t.Errorf("String/Parse round trip of %v", got)
			}
		}
	}
}

func TestParseJob(t *testing.T) {
	j, err := ParseJob(`{"tenantId":"shop-1","window":"2027-03-01T03:00:00Z"}`)
	if err != nil || j.Tenant != "shop-1" || j.Window.Unix() != time.Date(2027, 3, 1, 3, 0, 0, 0, time.UTC).Unix() {
		t.Fatal(j, err)
	}
	for _, bad := range []string{``, `{}`, `{"tenantId":"x"}`, `nope`} {
		if _, err := ParseJob(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseJob(%q) = %v", bad, err)
		}
	}
}

func TestSchemaIsValid(t *testing.T) {
	if err := Schema().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestFromPayload: the core's payload of an item (EncodePayload) is the
// tenant's job for that window; anything else is ErrInvalid.
func TestFromPayload(t *testing.T) {
	mon := time.Date(2027, 3, 1, 3, 0, 0, 0, time.UTC)
	it := Item{Tenant: "shop-1", Window: mon}
	good := Schema().EncodePayload(contract.Payload{Key: it.Key(), Due: mon})
	j, err := FromPayload([]byte(good))
	if err != nil || j.Tenant != "shop-1" || !j.Window.Equal(mon) {
		t.Fatalf("FromPayload(%s) = %+v, %v", good, j, err)
	}
	for _, bad := range []string{
		``, `nope`, `{}`,
		`{"tenantId":"shop-1","window":"2027-03-01T03:00:00Z"}`,                                // no due time
		`{"tenantId":"","window":"2027-03-01T03:00:00Z","dueAt":"2027-03-01T03:00:00Z"}`,       // no tenant
		`{"tenantId":"shop-1","window":"last week","dueAt":"2027-03-01T03:00:00Z"}`,            // window no time
		`{"tenantId":"shop-1","window":"2027-03-08T03:00:00Z","dueAt":"2027-03-01T03:00:00Z"}`, // window and due differ
	} {
		if _, err := FromPayload([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("FromPayload(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}
