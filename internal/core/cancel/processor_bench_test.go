package cancel_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

type benchQueue struct{ sent int }

func (q *benchQueue) Enqueue(_ context.Context, msgs []cancel.Message) ([]cancel.Failed, error) {
	for _, m := range msgs {
		_ = m.Encode()
	}
	q.sent += len(msgs)
	return nil, nil
}

// BenchmarkProcess100 is the stream processor on a batch of 100 change
// records: every other one completes a task (a cancellation to send), the
// rest edit a title (nothing to send). `make bench` runs it.
func BenchmarkProcess100(b *testing.B) {
	due := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)
	changes := make([]changefeed.Change, 100)
	for i := range changes {
		o := contract.Item{Key: contract.Key{Partition: "user-1", Sort: fmt.Sprintf("01JBQ1R8ZK3W4X5Y6Z7A8B%04d", i)},
			State: "Pending", Due: due, Token: "TOKEN"}
		n := o // an edit of no contract attribute (a title)
		if i%2 == 0 {
			n.State = "Done"
		}
		changes[i] = changefeed.Change{EventID: fmt.Sprintf("ev-%03d", i), Kind: changefeed.Modify,
			Key: o.Key, Old: &o, New: &n}
	}
	q := &benchQueue{}
	p, err := cancel.NewProcessor(timertest.Schema, q, nil, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if f := p.Process(ctx, changes); len(f) != 0 {
			b.Fatalf("%d failures", len(f))
		}
	}
	if q.sent == 0 {
		b.Fatal("nothing sent")
	}
}
