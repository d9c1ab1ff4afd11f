package futureevent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
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

type counts map[string]float64

func (c counts) Add(name string, n float64) { c[name] += n }

const (
	registered = "arn:aws:lambda:eu-west-1:123456789012:function:remind"
	other      = "arn:aws:lambda:eu-west-1:123456789012:function:deleteEverything"
)

func TestHandle(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name        string
		input       string
		invokeErr   error
		wantErr     error
		wantCalls   int
		wantPayload string
		wantMetric  string
	}{
		{name: "registered target gets the payload unchanged", input: `{"timestamp":"2027-01-01T00:00:00Z","target":"` + registered + `","payload":{"email":"ann@example.com","n":1}}`,
			wantCalls: 1, wantPayload: `{"email":"ann@example.com","n":1}`, wantMetric: "Delivered"},
		{name: "a qualified ARN of a registered function is allowed", input: `{"target":"` + registered + `:live","payload":{}}`,
			wantCalls: 1, wantPayload: `{}`, wantMetric: "Delivered"},
		{name: "no payload passes {}", input: `{"target":"` + registered + `"}`, wantCalls: 1, wantPayload: `{}`, wantMetric: "Delivered"},
		{name: "unregistered target is refused at runtime", input: `{"target":"` + other + `","payload":{}}`, wantErr: ErrRefused, wantMetric: "Refused"},
		{name: "a prefix of a registered ARN is refused", input: `{"target":"arn:aws:lambda:eu-west-1:123456789012:function:rem","payload":{}}`, wantErr: ErrRefused, wantMetric: "Refused"},
		{name: "not JSON", input: `nope`, wantErr: ErrBadInput, wantMetric: "Refused"},
		{name: "no target", input: `{"payload":{}}`, wantErr: ErrBadInput, wantMetric: "Refused"},
		{name: "target failure is a TargetError (retried)", input: `{"target":"` + registered + `"}`, invokeErr: boom, wantErr: boom, wantCalls: 1, wantMetric: "Failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := &fakeInvoker{err: tc.invokeErr}
			m := counts{}
			h, err := New([]string{registered, " "}, inv, slog.New(slog.NewTextHandler(io.Discard, nil)), m)
			if err != nil {
				t.Fatal(err)
			}
			h.Delivered, h.Refused, h.Failed = "Delivered", "Refused", "Failed"
			err = h.Handle(context.Background(), []byte(tc.input))
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
			if m[tc.wantMetric] != 1 || len(m) != 1 {
				t.Fatalf("metrics %v", m)
			}
		})
	}
}
