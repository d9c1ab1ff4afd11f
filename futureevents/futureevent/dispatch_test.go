package futureevent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/logfield/logfieldtest"
)

type fakeInvoker struct {
	calls   []string
	payload []byte
	err     error
}

func (f *fakeInvoker) Invoke(_ context.Context, target string, payload []byte) error {
	f.calls = append(f.calls, target)
	f.payload = payload
	return f.err
}

// items is a Reader over attribute maps by name.
type items map[string]map[string]string

func (m items) Get(_ context.Context, name string) (Event, string, error) {
	a, ok := m[name]
	if !ok {
		return Event{}, "", ErrNotFound
	}
	return FromItem(a)
}

type counts map[string]float64

func (c counts) Add(name string, n float64) { c[name] += n }

const (
	registered = "arn:aws:lambda:eu-west-1:123456789012:function:remind"
	other      = "arn:aws:lambda:eu-west-1:123456789012:function:deleteEverything"
)

func TestDispatch(t *testing.T) {
	at := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	due := contract.FormatTime(at)
	fired := func(target, payload string) map[string]string {
		return map[string]string{"name": "ev", "at": due, "status": Fired, "target": target, "payload": payload}
	}
	core := Schema().EncodePayload(contract.Payload{Key: contract.Key{Partition: "ev"}, Due: at})
	boom := errors.New("boom")
	for _, tc := range []struct {
		name        string
		item        map[string]string // nil: none
		input       string            // default: core
		invokeErr   error
		wantErr     error
		wantCalls   int
		wantPayload string
		wantMetric  string // "": none
	}{
		{name: "registered target gets the payload unchanged", item: fired(registered, `{"email":"ann@example.com","n":1}`),
			wantCalls: 1, wantPayload: `{"email":"ann@example.com","n":1}`, wantMetric: "Delivered"},
		{name: "a qualified ARN of a registered function is allowed", item: fired(registered+":live", `{}`),
			wantCalls: 1, wantPayload: `{}`, wantMetric: "Delivered"},
		{name: "no payload passes {}", item: fired(registered, ""), wantCalls: 1, wantPayload: `{}`, wantMetric: "Delivered"},
		{name: "unregistered target is refused at runtime", item: fired(other, `{}`), wantErr: ErrRefused, wantMetric: "Refused"},
		{name: "a prefix of a registered ARN is refused", item: fired("arn:aws:lambda:eu-west-1:123456789012:function:rem", `{}`), wantErr: ErrRefused, wantMetric: "Refused"},
		{name: "not the core's payload", item: fired(registered, `{}`), input: `nope`, wantErr: ErrBadInput, wantMetric: "Refused"},
		{name: "an item without a target", item: map[string]string{"name": "ev", "at": due, "status": Fired}, wantErr: ErrBadInput, wantMetric: "Refused"},
		{name: "an item not claimed", item: map[string]string{"name": "ev", "at": due, "status": Scheduled, "target": registered}, wantErr: ErrBadInput, wantMetric: "Refused"},
		{name: "an item at another moment", item: map[string]string{"name": "ev", "at": "2027-01-02T00:00:00Z", "status": Fired, "target": registered}, wantErr: ErrBadInput, wantMetric: "Refused"},
		{name: "the item is gone: nothing to run", item: nil},
		{name: "target failure is a TargetError (retried)", item: fired(registered, `{}`), invokeErr: boom, wantErr: boom, wantCalls: 1, wantMetric: "Failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := &fakeInvoker{err: tc.invokeErr}
			m := counts{}
			store := items{}
			if tc.item != nil {
				store["ev"] = tc.item
			}
			log, lines := logfieldtest.New()
			d, err := NewDispatcher([]string{registered, " "}, store, inv, log, m)
			if err != nil {
				t.Fatal(err)
			}
			d.Delivered, d.Refused, d.Failed = "Delivered", "Refused", "Failed"
			input := tc.input
			if input == "" {
				input = core
			}
			err = d.Handle(context.Background(), []byte(input))
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			var te *TargetError
			if errors.As(err, &te) != (tc.invokeErr != nil) {
				t.Fatalf("TargetError = %v for %v", errors.As(err, &te), err)
			}
			if len(inv.calls) != tc.wantCalls {
				t.Fatalf("invoked %v", inv.calls)
			}
			if tc.wantPayload != "" && string(inv.payload) != tc.wantPayload {
				t.Fatalf("payload %s", inv.payload)
			}
			// Every outcome of the core's payload names the event's item
			// in logfield.Key (unschedule why --logs), and never logs its
			// payload (it may hold personal data).
			if input == core {
				got := lines.Lines(t)
				if len(got) != 1 {
					t.Fatalf("want one outcome line, got %v", got)
				}
				if got[0][logfield.Key] != "ev" {
					t.Errorf("%q has %s = %v, want ev", got[0]["msg"], logfield.Key, got[0][logfield.Key])
				}
				if b, _ := json.Marshal(got[0]); strings.Contains(string(b), "ann@example.com") {
					t.Errorf("the line logs the payload: %s", b)
				}
			}
			if tc.wantMetric == "" && len(m) != 0 || tc.wantMetric != "" && (m[tc.wantMetric] != 1 || len(m) != 1) {
				t.Fatalf("metrics %v, want one %q", m, tc.wantMetric)
			}
		})
	}
}
