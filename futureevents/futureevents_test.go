package futureevents

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const (
	smArn  = "arn:aws:states:us-east-1:123456789012:stateMachine:FutureEvents"
	target = "arn:aws:lambda:us-east-1:123456789012:function:remind"
)

var now = time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)

func TestNewInputTimestamp(t *testing.T) {
	at := time.Date(2027, 5, 1, 9, 30, 15, 999, time.FixedZone("CEST", 2*3600))
	in, err := NewInput(now, at, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The Wait state's TimestampPath needs RFC 3339 with an uppercase T
	// and Z (https://docs.aws.amazon.com/step-functions/latest/dg/state-wait.html).
	if in.Timestamp != "2027-05-01T07:30:15Z" || string(in.Payload) != "{}" {
		t.Fatalf("got %+v", in)
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

func TestExecutionArn(t *testing.T) {
	got, err := ExecutionArn(smArn, "ann-2027")
	if err != nil || got != "arn:aws:states:us-east-1:123456789012:execution:FutureEvents:ann-2027" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := ExecutionArn("arn:aws:lambda:x", "a"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v", err)
	}
}
