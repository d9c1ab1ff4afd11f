package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/suppress"
)

// SuppressionContract is what every suppression list does (suppress.Memory,
// the DynamoDB store of internal/campaigns/adapters/ses): per sender and address,
// normalized, idempotent (a duplicate or later event keeps the first
// entry). s must be empty.
func SuppressionContract(t *testing.T, s suppress.Store) {
	ctx := context.Background()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	first := suppress.Entry{Sender: "News@X.io", Address: "Bob@Y.io", Reason: suppress.Bounce, At: at, Source: "m1/f1"}
	for i, want := range []bool{true, false, false} { // at-least-once: a duplicate event
		e := first
		if i == 2 {
			e.Reason, e.Source = suppress.Complaint, "m2/f2" // a later event keeps the first entry
		}
		added, err := s.Add(ctx, e)
		if err != nil || added != want {
			t.Fatalf("Add #%d = %v, %v; want %v", i+1, added, err, want)
		}
	}
	got, ok, err := s.Get(ctx, "news@x.io", "BOB@y.io")
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v", ok, err)
	}
	if got.Sender != "news@x.io" || got.Address != "bob@y.io" || got.Reason != suppress.Bounce || !got.At.Equal(at) || got.Source != "m1/f1" {
		t.Errorf("Get = %+v, want the first entry, normalized", got)
	}
	for _, other := range [][2]string{{"other@x.io", "bob@y.io"}, {"news@x.io", "alice@y.io"}} {
		if _, ok, err := s.Get(ctx, other[0], other[1]); err != nil || ok {
			t.Errorf("Get(%v) = %v, %v: the list is per sender and per address", other, ok, err)
		}
	}
	if _, err := s.Add(ctx, suppress.Entry{Sender: "news@x.io", Address: "", Reason: suppress.Bounce}); err == nil {
		t.Error("Add without an address succeeded")
	}
}
