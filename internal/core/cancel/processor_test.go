package cancel

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

type fakeQueue struct {
	calls  int
	sent   []Message
	reject map[string]error // by event id
	err    error
}

func (q *fakeQueue) Enqueue(_ context.Context, msgs []Message) ([]Failed, error) {
	q.calls++
	if q.err != nil {
		return nil, q.err
	}
	var failed []Failed
	for _, m := range msgs {
		if err := q.reject[m.EventID]; err != nil {
			failed = append(failed, Failed{Message: m, Err: err})
			continue
		}
		q.sent = append(q.sent, m)
	}
	return failed, nil
}

func TestProcess(t *testing.T) {
	done := with(func(t *contract.Item) { t.State = "Done" })
	inline := with(func(t *contract.Item) { t.Inline = true })
	ev := func(id string, c changefeed.Change) changefeed.Change { c.EventID = id; return c }
	changes := []changefeed.Change{
		ev("e1", change(changefeed.Insert, nil, inline)),
		ev("e2", change(changefeed.Modify, pending(), with(func(t *contract.Item) {}))),
		ev("e3", change(changefeed.Modify, pending(), done)),
		ev("e4", change(changefeed.Remove, done, nil)),
		ev("e5", change(changefeed.Remove, nil, nil)),
	}
	boom := errors.New("boom")
	tests := []struct {
		name       string
		q          *fakeQueue
		changes    []changefeed.Change
		wantSent   []string
		wantFailed []string
		wantCalls  int
	}{
		{"only transitions that matter are sent, in order", &fakeQueue{}, changes, []string{"e3", "e5"}, nil, 1},
		{"nothing to do makes no call", &fakeQueue{}, changes[:2], nil, nil, 0},
		{"a rejected message fails its record", &fakeQueue{reject: map[string]error{"e3": boom}}, changes, []string{"e5"}, []string{"e3"}, 1},
		{"a failed call fails every record with a message", &fakeQueue{err: boom}, changes, nil, []string{"e3", "e5"}, 1},
		{"a record without its key is skipped, not sent", &fakeQueue{}, []changefeed.Change{
			{EventID: "e6", Kind: changefeed.Remove},
			changes[2],
		}, []string{"e3"}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewProcessor(schema, tt.q, nil, quiet)
			if err != nil {
				t.Fatal(err)
			}
			failures := p.Process(context.Background(), tt.changes)
			var failedIDs, sentIDs []string
			for _, f := range failures {
				if f.Err == nil {
					t.Errorf("failure %s without a reason", f.EventID)
				}
				failedIDs = append(failedIDs, f.EventID)
			}
			for _, m := range tt.q.sent {
				sentIDs = append(sentIDs, m.EventID)
			}
			if !slices.Equal(failedIDs, tt.wantFailed) || !slices.Equal(sentIDs, tt.wantSent) || tt.q.calls != tt.wantCalls {
				t.Errorf("failed %v sent %v calls %d; want failed %v sent %v calls %d",
					failedIDs, sentIDs, tt.q.calls, tt.wantFailed, tt.wantSent, tt.wantCalls)
			}
		})
	}
}

func TestNewProcessorNeedsEnqueuer(t *testing.T) {
	if _, err := NewProcessor(schema, nil, nil, quiet); err == nil {
		t.Error("NewProcessor(nil) succeeded")
	}
}

// An armed item whose due time no RFC 3339 reading accepts is never
// scheduled, and says so: the Undeliverable metric (alarmed) and an error
// log naming the key. Every writer's spelling is scheduled, silently.
func TestProcessRefusesAnUnreadableDueTimeVisibly(t *testing.T) {
	s := schema
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		due       string
		scheduled bool
	}{
		{"2026-12-01T23:59:60Z", false},
		{"2026-12-01 08:00:00", false},
		{contract.WriterSpellings(at)[3], true},
		{contract.WriterSpellings(at)[9], true},
	} {
		t.Run(tc.due, func(t *testing.T) {
			it, err := s.ItemFrom(map[string]string{"owner": "u1", "itemId": "t1", "status": "Pending", "dueAt": tc.due})
			if err != nil {
				t.Fatal(err)
			}
			var logs, out bytes.Buffer
			m := metrics.New("streamprocessor", &out)
			q := &fakeQueue{}
			p, err := NewProcessor(s, q, m, slog.New(slog.NewJSONHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			p.Process(context.Background(), []changefeed.Change{{EventID: "e1", Kind: changefeed.Insert, Key: it.Key, New: &it}})
			if err := m.Flush(); err != nil {
				t.Fatal(err)
			}
			refused := strings.Contains(out.String(), `"Undeliverable":1`) && strings.Contains(logs.String(), `"key":"u1/t1"`)
			if (len(q.sent) == 1) != tc.scheduled || refused == tc.scheduled {
				t.Fatalf("sent %+v, refused visibly %v; want scheduled %v\nmetrics %s\nlogs %s", q.sent, refused, tc.scheduled, out.String(), logs.String())
			}
		})
	}
}
