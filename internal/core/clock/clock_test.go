package clock

import (
	"context"
	"testing"
	"time"
)

func TestFake(t *testing.T) {
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		move    func(c *Fake) error
		want    time.Time
		wantErr bool
	}{
		{"starts at start, in UTC", func(*Fake) error { return nil }, start.UTC(), false},
		{"advance", func(c *Fake) error { c.Advance(time.Minute); return nil }, start.Add(time.Minute).UTC(), false},
		{"advance by a negative duration stays", func(c *Fake) error { c.Advance(-time.Minute); return nil }, start.UTC(), false},
		{"set forward", func(c *Fake) error { c.Set(start.Add(time.Hour)); return nil }, start.Add(time.Hour).UTC(), false},
		{"set backward is ignored", func(c *Fake) error { c.Set(start.Add(-time.Hour)); return nil }, start.UTC(), false},
		{"sleep advances", func(c *Fake) error { return c.Sleep(context.Background(), time.Second) }, start.Add(time.Second).UTC(), false},
		{"sleep on an ended context stays", func(c *Fake) error { return c.Sleep(cancelled, time.Second) }, start.UTC(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewFake(start)
			err := tc.move(c)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if got := c.Now(); got != tc.want {
				t.Fatalf("now %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSystemAndFunc(t *testing.T) {
	if loc := (System{}).Now().Location(); loc != time.UTC {
		t.Fatalf("System reads %v, want UTC", loc)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var c Clock = Func(func() time.Time { return at })
	if !c.Now().Equal(at) {
		t.Fatalf("Func reads %v, want %v", c.Now(), at)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); err == nil {
		t.Fatal("Sleep on an ended context returned nil")
	}
}
