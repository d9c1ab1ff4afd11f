package inproc

import (
	"slices"
	"testing"
	"time"
)

func bodies(rs []Received) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Body))
	}
	return out
}

func TestQueue(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		run  func(t *testing.T, c *Clock, q *Queue)
	}{
		{"a dedup id within the window is dropped", func(t *testing.T, c *Clock, q *Queue) {
			q.Send("g", "d1", []byte("a"))
			if _, dup := q.Send("g", "d1", []byte("a")); !dup {
				t.Error("second send not a duplicate")
			}
			c.Advance(5*time.Minute + time.Second)
			if _, dup := q.Send("g", "d1", []byte("a")); dup {
				t.Error("send after the window dropped")
			}
			if q.Len() != 2 {
				t.Errorf("Len = %d, want 2", q.Len())
			}
		}},
		{"a group is ordered and blocked while in flight", func(t *testing.T, c *Clock, q *Queue) {
			q.Send("a", "1", []byte("a1"))
			q.Send("b", "2", []byte("b1"))
			q.Send("a", "3", []byte("a2"))
			if got := bodies(q.Receive(1)); !slices.Equal(got, []string{"a1"}) {
				t.Fatalf("first receive %v", got)
			}
			if got := bodies(q.Receive(10)); !slices.Equal(got, []string{"b1"}) {
				t.Fatalf("while a1 is in flight, received %v, want only b1", got)
			}
		}},
		{"whole groups come in order in one batch", func(t *testing.T, c *Clock, q *Queue) {
			q.Send("a", "1", []byte("a1"))
			q.Send("b", "2", []byte("b1"))
			q.Send("a", "3", []byte("a2"))
			if got := bodies(q.Receive(10)); !slices.Equal(got, []string{"a1", "b1", "a2"}) {
				t.Fatalf("received %v", got)
			}
		}},
		{"an unacknowledged message comes back after the visibility timeout", func(t *testing.T, c *Clock, q *Queue) {
			q.Send("a", "1", []byte("a1"))
			first := q.Receive(10)
			c.Advance(29 * time.Second)
			if got := q.Receive(10); len(got) != 0 {
				t.Fatalf("redelivered before the timeout: %v", bodies(got))
			}
			c.Advance(time.Second)
			again := q.Receive(10)
			if len(again) != 1 || again[0].ReceiveCount != 2 {
				t.Fatalf("redelivery %+v", again)
			}
			if q.Ack(first[0]) {
				t.Error("a stale receipt acknowledged the message")
			}
			if !q.Ack(again[0]) || q.Len() != 0 {
				t.Error("ack of the current receipt failed")
			}
		}},
		{"too many receives move a message to the DLQ, and its group goes on", func(t *testing.T, c *Clock, q *Queue) {
			q.Send("a", "1", []byte("poison"))
			q.Send("a", "2", []byte("next"))
			for i := 0; i < 3; i++ {
				if got := bodies(q.Receive(1)); !slices.Equal(got, []string{"poison"}) {
					t.Fatalf("receive %d: %v", i, got)
				}
				c.Advance(30 * time.Second)
			}
			if got := bodies(q.Receive(1)); !slices.Equal(got, []string{"next"}) {
				t.Fatalf("after max receives got %v, want next", got)
			}
			if dlq := q.DLQ(); len(dlq) != 1 || string(dlq[0].Body) != "poison" || dlq[0].ReceiveCount != 3 {
				t.Errorf("DLQ = %+v", dlq)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClock(start)
			tt.run(t, c, NewQueue(c, QueueConfig{MaxReceiveCount: 3}))
		})
	}
}
