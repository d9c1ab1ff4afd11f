package campaign

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/plan"
)

func TestBuild(t *testing.T) {
	rules := plan.Rules{Windows: []plan.Window{{Start: 540, End: 600}}, TimeZone: "Europe/Berlin", Start: plan.Date{Year: 2026, Month: 6, Day: 1}}
	// 09:30 Berlin on the start day: the first send is not before it.
	at := time.Date(2026, 6, 1, 7, 30, 0, 0, time.UTC)
	d := Request{Subject: "News", Body: "Hello", Rules: rules, Recipients: []Recipient{{Email: "a@example.com"}, {Email: "b@example.com", Subject: "For B"}}}
	c, tasks, err := Build("c1", "u1", d, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != Draft || c.Total != 2 || len(tasks) != 2 || tasks[1].Subject != "For B" || tasks[0].Subject != "News" {
		t.Fatalf("%+v %+v", c, tasks)
	}
	if tasks[0].SendAt.Before(at) || tasks[0].Local != "2026-06-01T09:37:00" {
		t.Fatalf("first send %s (%s), want not before now", tasks[0].Local, tasks[0].SendAt)
	}
	cases := []struct {
		name string
		edit func(*Request)
		want []string
	}{
		{"bad email", func(d *Request) { d.Recipients[0].Email = "Alice <a@example.com>" }, []string{`recipients[0].email "Alice <a@example.com>" is not a plain email address`}},
		{"duplicate", func(d *Request) { d.Recipients[1].Email = "A@example.com" }, []string{"recipients[1].email A@example.com is also recipients[0]"}},
		{"no subject", func(d *Request) { d.Subject = " " }, []string{"subject must be 1-998 bytes"}},
		{"header injection", func(d *Request) { d.Recipients[0].Subject = "x\r\nBcc: z@example.com" }, []string{"recipients[0].subject must be at most"}},
		{"no body", func(d *Request) { d.Body = "" }, []string{"body must be 1-200000 bytes (given 0)"}},
		{"no recipients", func(d *Request) { d.Recipients = nil }, []string{"recipients: a campaign has 1 to 10000 recipients (given 0)"}},
		{"bad rules too", func(d *Request) { d.Rules.TimeZone = "Nowhere"; d.Body = "" }, []string{"body must be", `schedule.timeZone "Nowhere"`}},
		{"one recipient too many", func(d *Request) {
			d.Recipients = nil
			for i := range plan.MaxRecipients + 1 {
				d.Recipients = append(d.Recipients, Recipient{Email: fmt.Sprintf("r%d@example.com", i)})
			}
		}, []string{plan.RecipientsProblem(plan.MaxRecipients + 1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Request{Subject: "News", Body: "Hello", Rules: rules, Recipients: []Recipient{{Email: "a@example.com"}, {Email: "b@example.com"}}}
			tc.edit(&d)
			_, _, err := Build("c1", "u1", d, at, nil)
			var ie *InvalidError
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &ie) {
				t.Fatalf("error %v, want ErrInvalid", err)
			}
			// Said once, and only the schedule's problems name the schedule.
			if n := strings.Count(err.Error(), "invalid campaign"); n != 1 || errors.Is(err, plan.ErrInvalid) {
				t.Fatalf("error %q says its prefix %d times (or claims a schedule error)", err, n)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
