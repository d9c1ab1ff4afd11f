package suppress_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/suppress"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFromSESEvent(t *testing.T) {
	at := time.Date(2017, 8, 5, 0, 41, 2, 669e6, time.UTC)
	for _, c := range []struct {
		name, raw string
		want      []suppress.Entry
		err       error
	}{
		{"hard bounce (AWS's example): the recipient, lower case, of the source's address", string(read(t, "bounce-permanent.json")),
			[]suppress.Entry{{Sender: "sender@example.com", Address: "recipient@example.com", Reason: suppress.Bounce, At: at,
				Source: "EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000/01000157c44f053b-61b59c11-9236-11e6-8f96-7be8aexample-000000"}}, nil},
		{"complaint (AWS's example)", string(read(t, "complaint.json")),
			[]suppress.Entry{{Sender: "sender@example.com", Address: "recipient@example.com", Reason: suppress.Complaint, At: at,
				Source: "EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000/01000157c44f053b-61b59c11-9236-11e6-8f96-7be8aexample-000000"}}, nil},
		{"identity feedback names it notificationType", `{"notificationType":"Complaint","complaint":{"complainedRecipients":[{"emailAddress":"a@x.io"}],"timestamp":"2017-08-05T00:41:02.669Z","feedbackId":"f"},"mail":{"source":"s@x.io","messageId":"m"}}`,
			[]suppress.Entry{{Sender: "s@x.io", Address: "a@x.io", Reason: suppress.Complaint, At: at, Source: "m/f"}}, nil},
		{"every bounced recipient", `{"eventType":"Bounce","bounce":{"bounceType":"Permanent","bouncedRecipients":[{"emailAddress":"a@x.io"},{"emailAddress":"b@x.io"}],"timestamp":"2017-08-05T00:41:02.669Z","feedbackId":"f"},"mail":{"source":"s@x.io","messageId":"m"}}`,
			[]suppress.Entry{{Sender: "s@x.io", Address: "a@x.io", Reason: suppress.Bounce, At: at, Source: "m/f"}, {Sender: "s@x.io", Address: "b@x.io", Reason: suppress.Bounce, At: at, Source: "m/f"}}, nil},
		{"a transient bounce suppresses nothing", `{"eventType":"Bounce","bounce":{"bounceType":"Transient","bouncedRecipients":[{"emailAddress":"a@x.io"}]},"mail":{"source":"s@x.io"}}`, nil, nil},
		{"an undetermined bounce suppresses nothing", `{"eventType":"Bounce","bounce":{"bounceType":"Undetermined","bouncedRecipients":[{"emailAddress":"a@x.io"}]},"mail":{"source":"s@x.io"}}`, nil, nil},
		{"a delivery suppresses nothing", `{"eventType":"Delivery","delivery":{},"mail":{"source":"s@x.io"}}`, nil, nil},
		{"not JSON", `Bounce`, nil, suppress.ErrMalformed},
		{"no event type", `{"mail":{}}`, nil, suppress.ErrMalformed},
		{"a bounce without its object", `{"eventType":"Bounce","mail":{"source":"s@x.io"}}`, nil, suppress.ErrMalformed},
		{"a hard bounce without a source", `{"eventType":"Bounce","bounce":{"bounceType":"Permanent","bouncedRecipients":[{"emailAddress":"a@x.io"}]},"mail":{}}`, nil, suppress.ErrMalformed},
		{"a complaint without recipients", `{"eventType":"Complaint","complaint":{"complainedRecipients":[]},"mail":{"source":"s@x.io"}}`, nil, suppress.ErrMalformed},
		{"a recipient without an address", `{"eventType":"Complaint","complaint":{"complainedRecipients":[{}]},"mail":{"source":"s@x.io"}}`, nil, suppress.ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := suppress.FromSESEvent([]byte(c.raw))
			if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("entry %d = %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"Bob@Example.COM": "bob@example.com", "  bob@example.com\t": "bob@example.com",
		"Bob <Bob@Example.com>": "bob@example.com", "": "", "not an address": "not an address",
	} {
		if got := suppress.Normalize(in); got != want {
			t.Errorf("suppress.Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
