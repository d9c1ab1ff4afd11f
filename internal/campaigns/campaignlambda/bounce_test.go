package campaignlambda

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

type brokenList struct{ *memory.Suppressions }

func (brokenList) Add(context.Context, suppress.Entry) (bool, error) {
	return false, errors.New("throttled")
}

func TestBounceSuppresses(t *testing.T) {
	b, err := os.ReadFile("testdata/bounce.json")
	if err != nil {
		t.Fatal(err)
	}
	var bounce events.SNSEvent
	if err := json.Unmarshal(b, &bounce); err != nil {
		t.Fatal(err)
	}
	garbage := events.SNSEvent{Records: []events.SNSEventRecord{{SNS: events.SNSEntity{MessageID: "m", Message: "not json"}}}}
	transient := events.SNSEvent{Records: []events.SNSEventRecord{{SNS: events.SNSEntity{MessageID: "m",
		Message: `{"eventType":"Bounce","bounce":{"bounceType":"Transient","bouncedRecipients":[{"emailAddress":"recipient@example.com"}]},"mail":{"source":"sender@example.com"}}`}}}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		name       string
		event      events.SNSEvent
		broken     bool
		wantErr    bool
		suppressed bool
	}{
		{"a hard bounce suppresses the recipient", bounce, false, false, true},
		{"a transient bounce does not", transient, false, false, false},
		{"an unreadable event fails (to the alarmed failure queue)", garbage, false, true, false},
		{"a store failure fails (Lambda retries)", bounce, true, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewSuppressions()
			var list suppress.Store = mem
			if c.broken {
				list = brokenList{mem}
			}
			h := &Bounce{List: list, Log: log}
			for i := 0; i < 2; i++ { // SES and SNS deliver at least once
				if err := h.Handle(context.Background(), c.event); (err != nil) != c.wantErr {
					t.Fatalf("delivery %d: Handle = %v, want error %v", i+1, err, c.wantErr)
				}
			}
			if _, ok, _ := mem.Get(context.Background(), "recipient@example.com"); ok != c.suppressed {
				t.Errorf("suppressed = %v, want %v", ok, c.suppressed)
			}
		})
	}
}
