package fire_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/fire/firetest"
	"github.com/unschedule/unschedule/internal/core/inmem"
)

// The firing core's rules, on a consumer's schema: the claim decides; a
// retry takes over only after the lease; a failed delivery is retried and
// not recorded; a failed record is the one duplicate window.
func TestFire(t *testing.T) {
	s := firetest.ConsumerSchema()
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	k := contract.Key{Partition: "t1", Sort: "j1"}
	p := contract.Payload{Key: k, Due: due}
	errDown := errors.New("target down")
	type attempt struct {
		at         time.Duration // after due
		deliverErr error
		failOp     string // a store operation that fails
		want       fire.Outcome
		wantErr    error
	}
	for _, tc := range []struct {
		name      string
		state     string
		attempts  []attempt
		wantCalls int
		delivered bool
	}{
		{"fires once", "Queued", []attempt{{at: 0, want: fire.Fired}, {at: time.Hour, want: fire.Skipped}}, 1, true},
		// EventBridge Scheduler fires within the minute: an early firing
		// is an error (Lambda retries it a minute later), never a success
		// that its self-deleting schedule would make the last firing.
		{"an early firing is retried, then fires once", "Queued", []attempt{
			{at: -59 * time.Second, wantErr: fire.ErrTooEarly},
			{at: -time.Second, wantErr: fire.ErrTooEarly},
			{at: time.Second, want: fire.Fired},
			{at: time.Minute, want: fire.Skipped},
		}, 1, true},
		{"not armed", "Cancelled", []attempt{{at: 0, want: fire.Skipped}}, 0, false},
		// The writer completed it with the fired state: no claim of the
		// library's, so no attempt, before or after a lease, runs it.
		{"in the fired state by a writer", "Done", []attempt{
			{at: 0, want: fire.Skipped}, {at: time.Hour, want: fire.Skipped},
		}, 0, false},
		{"a failed delivery is retried after the lease", "Queued", []attempt{
			{at: 0, deliverErr: errDown, wantErr: errDown},
			{at: 30 * time.Second, wantErr: fire.ErrInProgress},
			{at: 61 * time.Second, want: fire.Redelivered},
			{at: time.Hour, want: fire.Skipped},
		}, 2, true},
		{"a failed record is the duplicate window", "Queued", []attempt{
			{at: 0, failOp: "MarkDelivered", want: fire.Fired},
			{at: 61 * time.Second, want: fire.Redelivered},
		}, 2, true},
		{"a failed claim write is retried", "Queued", []attempt{
			{at: 0, failOp: "Claim", wantErr: errDown},
			{at: time.Second, want: fire.Fired},
		}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := inmem.NewItems(s)
			a := s.Attrs(k)
			a[s.StateAttr], a[s.DueAttr] = tc.state, contract.FormatTime(due)
			if err := items.Put(a); err != nil {
				t.Fatal(err)
			}
			var now time.Time
			core, err := fire.New(fire.Config{Schema: s, Store: items, Now: func() time.Time { return now },
				Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			for i, at := range tc.attempts {
				now = due.Add(at.at)
				items.Fail = func(op string) error {
					if op == at.failOp {
						return errDown
					}
					return nil
				}
				d := fire.DeliverFunc(func(context.Context, contract.Payload) error { calls++; return at.deliverErr })
				out, err := core.Fire(context.Background(), p, d)
				if at.wantErr != nil {
					if !errors.Is(err, at.wantErr) {
						t.Fatalf("attempt %d: %v, %v; want error %v", i, out, err, at.wantErr)
					}
					continue
				}
				if err != nil || out != at.want {
					t.Fatalf("attempt %d: %v, %v; want %v", i, out, err, at.want)
				}
			}
			got, _ := items.Attrs(k)
			if calls != tc.wantCalls || (got[s.DeliveredAtAttr] != "") != tc.delivered {
				t.Fatalf("%d deliveries, item %v; want %d, delivered %v", calls, got, tc.wantCalls, tc.delivered)
			}
		})
	}
	if _, err := fire.New(fire.Config{Schema: s}); err == nil {
		t.Fatal("New without a store succeeded")
	}
}

// recording is a target that records the delivery itself (the schema's
// MarkDelivered, written with the target's own store) when record is set.
type recording struct {
	items  *inmem.Items
	record bool
	calls  int
}

func (r *recording) Deliver(ctx context.Context, p contract.Payload) error {
	_, err := r.DeliverAndRecord(ctx, p)
	return err
}

func (r *recording) DeliverAndRecord(ctx context.Context, p contract.Payload) (bool, error) {
	r.calls++
	if !r.record {
		return false, nil
	}
	return true, r.items.MarkDelivered(ctx, p.Key, p.Due)
}

// A target that recorded the delivery itself spares the core its own
// record (no second, failing, conditional write); one that did not gets
// the core's record.
func TestFireSkipsTheRecordATargetWrote(t *testing.T) {
	s := firetest.ConsumerSchema()
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	k := contract.Key{Partition: "t1", Sort: "j1"}
	for _, tc := range []struct {
		name     string
		record   bool
		wantMark int // the core's MarkDelivered calls
	}{
		{"the target recorded it", true, 0},
		{"the target did not", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := inmem.NewItems(s)
			a := s.Attrs(k)
			a[s.StateAttr], a[s.DueAttr] = "Queued", contract.FormatTime(due)
			if err := items.Put(a); err != nil {
				t.Fatal(err)
			}
			target := &recording{items: items, record: tc.record}
			marks := 0
			core, err := fire.New(fire.Config{Schema: s, Store: markCounter{items, &marks}, Now: func() time.Time { return due }})
			if err != nil {
				t.Fatal(err)
			}
			out, err := core.Fire(context.Background(), contract.Payload{Key: k, Due: due}, target)
			got, _ := items.Attrs(k)
			if err != nil || out != fire.Fired || target.calls != 1 || marks != tc.wantMark || got[s.DeliveredAtAttr] == "" {
				t.Fatalf("Fire = %v, %v; %d target calls, %d core records, item %v; want fired once, %d core records, delivered",
					out, err, target.calls, marks, got, tc.wantMark)
			}
		})
	}
}

// markCounter counts the core's MarkDelivered calls on a store.
type markCounter struct {
	*inmem.Items
	n *int
}

func (m markCounter) MarkDelivered(ctx context.Context, k contract.Key, at time.Time) error {
	*m.n++
	return m.Items.MarkDelivered(ctx, k, at)
}
