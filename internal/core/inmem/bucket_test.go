package inmem

import (
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
)

func TestBucket(t *testing.T) {
	c := clock.NewFake(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	b := NewBucket(c, 50, 10)
	n := 0
	for b.Take() {
		n++
	}
	if n != 10 {
		t.Fatalf("burst %d, want 10", n)
	}
	drain := func() int {
		n := 0
		for b.Take() {
			n++
		}
		return n
	}
	c.Advance(time.Second)
	if n := drain(); n != 10 { // refilled up to the burst, not 50
		t.Fatalf("after a second %d, want the burst 10", n)
	}
	c.Advance(100 * time.Millisecond)
	if n := drain(); n != 5 {
		t.Fatalf("100 ms at 50/s gave %d tokens, want 5", n)
	}
}
