package firefn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/fire/firetest"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

// An in-process Target (what an adopter hands Start) gets the payload of
// the item the claim took, exactly as a target function would; when it
// fails, the item stays claimed and undelivered, the invocation fails,
// an immediate retry finds the claim held (in progress), and a retry
// after the lease takes it over and delivers once, recorded.
func TestInProcessTarget(t *testing.T) {
	s := firetest.ConsumerSchema()
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	k := contract.Key{Partition: "t1", Sort: "j1"}
	a := s.Attrs(k)
	a[s.StateAttr], a[s.DueAttr] = "Queued", contract.FormatTime(due)
	items := inmem.NewItems(s)
	if err := items.Put(a); err != nil {
		t.Fatal(err)
	}
	clock := due.Add(10 * time.Second)
	now := func() time.Time { return clock }
	core, err := fire.New(fire.Config{Schema: s, Store: items, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var got []contract.Payload
	failing := true
	var target Target = TargetFunc(func(_ context.Context, p contract.Payload) error {
		got = append(got, p)
		if failing {
			return errors.New("smtp down")
		}
		return nil
	})
	var out bytes.Buffer
	h := newHandler(core, items, target, now, slog.New(slog.DiscardHandler), metrics.New(metrics.FunctionExpiry, &out))
	payload := json.RawMessage(s.EncodePayload(contract.Payload{Key: k, Due: due}))
	state := func() (string, bool) {
		attrs, _ := items.Attrs(k)
		return attrs[s.StateAttr], attrs[s.DeliveredAtAttr] != ""
	}

	for _, step := range []struct {
		name      string
		after     time.Duration // the clock moves on by this first
		failing   bool
		wantErr   error // nil: success
		wantCalls int
		wantState string
		delivered bool
	}{
		{"the target fails: claimed, not delivered, retried", 0, true, errors.New("any"), 1, "Done", false},
		{"an immediate retry: the claim is held", time.Second, false, fire.ErrInProgress, 1, "Done", false},
		{"a retry after the lease: taken over, delivered", fire.DefaultLease, false, nil, 2, "Done", true},
		{"one more firing: skipped, the target does not run", time.Minute, false, nil, 2, "Done", true},
	} {
		clock, failing = clock.Add(step.after), step.failing
		_, err := h.Invoke(context.Background(), payload)
		switch {
		case step.wantErr == nil && err != nil, step.wantErr != nil && err == nil:
			t.Fatalf("%s: err %v, want %v", step.name, err, step.wantErr)
		case errors.Is(step.wantErr, fire.ErrInProgress) && !errors.Is(err, fire.ErrInProgress):
			t.Fatalf("%s: err %v, want ErrInProgress", step.name, err)
		}
		if len(got) != step.wantCalls {
			t.Fatalf("%s: %d target calls, want %d", step.name, len(got), step.wantCalls)
		}
		for _, p := range got {
			if p.Key != k || !p.Due.Equal(due) || p.IsReminder() {
				t.Fatalf("%s: the target got %+v, want the claimed item's key and due time", step.name, p)
			}
		}
		if st, d := state(); st != step.wantState || d != step.delivered {
			t.Fatalf("%s: item %s delivered %v, want %s delivered %v", step.name, st, d, step.wantState, step.delivered)
		}
	}
	if !strings.Contains(out.String(), `"FireErrors":1`) || !strings.Contains(out.String(), `"ItemsFired":1`) {
		t.Fatalf("metrics %s lack the failed then the fired firing", out.String())
	}
}

// An in-process target rules out a target function, and needs none.
func TestLoadConfigInProcess(t *testing.T) {
	base := map[string]string{"TABLE_NAME": "jobs", contract.EnvVar: firetest.ConsumerSchema().EnvValue()}
	if c, err := loadConfig(func(k string) string { return base[k] }, true); err != nil || c.Target != "" || c.Table != "jobs" {
		t.Fatalf("in process without a target function: %+v, %v", c, err)
	}
	both := withEnv(base, envvars.TargetFunctionArn, "arn:fn")
	if _, err := loadConfig(func(k string) string { return both[k] }, true); err == nil || !strings.Contains(err.Error(), "FireEntry") {
		t.Fatalf("in process with a target function: %v, want an error saying to pick one", err)
	}
}
