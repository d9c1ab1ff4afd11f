package campaigntest

import (
	"context"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/suppress"
)

// SuppressionContract is what every suppression list does
// (memory.Suppressions, restored from a save in the dev server, and the
// DynamoDB store of internal/campaigns/adapters/ses):
// one list per store, keyed by the normalized address whatever sender
// added it (a changed From address forgets nobody), idempotent (a
// duplicate or later event keeps the first entry). s must be empty.
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
	// Mail from another From address (the sender renamed) finds the
	// address already suppressed: the list is not keyed by the sender.
	if added, err := s.Add(ctx, suppress.Entry{Sender: "renamed@x.io", Address: "bob@y.io", Reason: suppress.Unsubscribe}); err != nil || added {
		t.Fatalf("Add from another sender = %v, %v; want the first entry kept", added, err)
	}
	got, ok, err := s.Get(ctx, "BOB@y.io")
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v", ok, err)
	}
	if got.Sender != "news@x.io" || got.Address != "bob@y.io" || got.Reason != suppress.Bounce || !got.At.Equal(at) || got.Source != "m1/f1" {
		t.Errorf("Get = %+v, want the first entry, normalized", got)
	}
	if _, ok, err := s.Get(ctx, "alice@y.io"); err != nil || ok {
		t.Errorf("Get(alice@y.io) = %v, %v: the list is per address", ok, err)
	}
	if _, err := s.Add(ctx, suppress.Entry{Sender: "news@x.io", Address: "", Reason: suppress.Bounce}); err == nil {
		t.Error("Add without an address succeeded")
	}
}
