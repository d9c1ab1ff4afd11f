package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// FuzzPostAuth decodes arbitrary JSON as a PostAuthentication event and
// runs the trigger over the SNS model, healthy or failing: never a panic,
// never an error, and the event comes back unchanged.
func FuzzPostAuth(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, snsDown bool) {
		var ev, want events.CognitoEventUserPoolsPostAuthentication
		if json.Unmarshal(b, &ev) != nil || json.Unmarshal(b, &want) != nil {
			return
		}
		r := newRig(t)
		if snsDown {
			r.sns.Fail = func(string) error { return errors.New("sns down") }
		}
		out, err := r.h.handle(context.Background(), ev)
		if err != nil {
			t.Fatalf("handler returned %v: a sign-in would be blocked", err)
		}
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("event changed:\n got %+v\nwant %+v", out, want)
		}
	})
}
