package inproc

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
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// target counts its runs and fails while fail > 0.
type target struct{ runs, fail int }

func (t *target) Deliver(context.Context, contract.Payload) error {
	if t.fail > 0 {
		t.fail--
		return errors.New("target down")
	}
	t.runs++
	return nil
}

func newHooked(t *testing.T, h Hooks, shards int) (*Pipeline, *target) {
	t.Helper()
	s := contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt",
		ArmedStates: []string{"Queued"}, FiredState: "Done", ScheduleNamePrefix: "job-"}.WithDefaults()
	tg := &target{}
	p, err := NewForSchema(s, tg, Options{Start: t0, Hooks: h, StreamShards: shards, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return p, tg
}

func putJob(t *testing.T, p *Pipeline, id string, at time.Time) {
	t.Helper()
	if err := p.Items.Put(map[string]string{"tenantId": "acme", "jobId": id, "status": "Queued", "runAt": contract.FormatTime(at)}); err != nil {
		t.Fatal(err)
	}
}

// Each hook changes what one stage hands the next, and nothing else.
func TestHooks(t *testing.T) {
	ctx := context.Background()
	due := t0.Add(time.Hour)
	tests := []struct {
		name   string
		hooks  Hooks
		shards int
		run    func(t *testing.T, p *Pipeline, tg *target)
	}{
		{"deliveries late and twice: the second is skipped by the claim", Hooks{
			Deliveries: func(contract.Schedule) []time.Duration { return []time.Duration{2 * time.Minute, 3 * time.Minute} },
		}, 1, func(t *testing.T, p *Pipeline, tg *target) {
			if r := p.Step(ctx, due); r.Fired != 0 {
				t.Errorf("fired %d at the due time, want 0 (late)", r.Fired)
			}
			p.Step(ctx, due.Add(2*time.Minute))
			r := p.Step(ctx, due.Add(3*time.Minute))
			if tg.runs != 1 || r.Fired != 1 {
				t.Errorf("target ran %d times, last step fired %d; want 1 and 1 (the duplicate)", tg.runs, r.Fired)
			}
		}},
		{"no delivery drops the firing", Hooks{
			Deliveries: func(contract.Schedule) []time.Duration { return nil },
		}, 1, func(t *testing.T, p *Pipeline, tg *target) {
			p.Step(ctx, due.Add(time.Hour))
			if tg.runs != 0 || !p.Idle() {
				t.Errorf("target ran %d times (idle %v), want a dropped firing", tg.runs, p.Idle())
			}
		}},
		{"an early firing fails and its retry comes after the RetryDelay", Hooks{
			FireEarly:  func() time.Duration { return 30 * time.Second },
			RetryDelay: func(n int) time.Duration { return time.Duration(n) * time.Minute },
		}, 1, func(t *testing.T, p *Pipeline, tg *target) {
			p.Step(ctx, due.Add(-20*time.Second))
			if r := p.Retrying(); tg.runs != 0 || len(r) != 1 || !r[0].NextAttempt.Equal(due.Add(40*time.Second)) {
				t.Fatalf("early firing: runs %d, retrying %+v", tg.runs, r)
			}
			p.Step(ctx, due.Add(40*time.Second))
			if tg.runs != 1 {
				t.Errorf("target ran %d times after the retry, want 1", tg.runs)
			}
		}},
		{"a dead-lettered firing runs again after Redrive", Hooks{}, 1, func(t *testing.T, p *Pipeline, tg *target) {
			tg.fail = 3
			for i := range 3 {
				p.Step(ctx, due.Add(time.Duration(i)*time.Minute))
			}
			if len(p.DeadInvocations()) != 1 {
				t.Fatalf("dead %d, want 1", len(p.DeadInvocations()))
			}
			if got := p.Redrive(); len(got) != 1 || len(p.DeadInvocations()) != 0 {
				t.Fatalf("redrive moved %d", len(got))
			}
			p.Step(ctx, due.Add(time.Hour))
			if tg.runs != 1 {
				t.Errorf("target ran %d times after the redrive, want 1", tg.runs)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, tg := newHooked(t, tc.hooks, tc.shards)
			putJob(t, p, "j1", due)
			if _, err := p.Drain(ctx, t0); err != nil {
				t.Fatal(err)
			}
			tc.run(t, p, tg)
		})
	}
}

// The stream's and the queue's hooks: shards, replays, a lost
// checkpoint, a stalled worker and a crash before the acks.
func TestStreamAndQueueHooks(t *testing.T) {
	ctx := context.Background()
	due := t0.Add(time.Hour)
	t.Run("shards are pumped on their own", func(t *testing.T) {
		p, _ := newHooked(t, Hooks{}, 4)
		for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
			putJob(t, p, id, due)
		}
		first := p.PumpShard(ctx, 0).Records
		if first == 8 || p.Shards() != 4 || p.StreamDone() {
			t.Fatalf("shard 0 took %d of 8 records, %d shards", first, p.Shards())
		}
		if r := p.PumpStream(ctx); r.Records != 8-first || !p.StreamDone() {
			t.Errorf("the other shards took %d records, want %d", r.Records, 8-first)
		}
	})
	t.Run("replay and a lost checkpoint deliver records again", func(t *testing.T) {
		redeliver := true
		p, _ := newHooked(t, Hooks{
			StreamBatch: func(pos, waiting int) (int, int) { return 1, 1 },
			StreamHandled: func([]changefeed.Change, []cancel.Failure) bool {
				r := redeliver
				redeliver = false
				return r
			},
		}, 1)
		putJob(t, p, "a", due)
		putJob(t, p, "b", due)
		if r := p.PumpStream(ctx); r.Records != 1 || r.StreamAdvanced != 0 {
			t.Errorf("first batch %+v, want one record, checkpoint lost", r)
		}
		p.PumpStream(ctx) // a again, advances
		p.PumpStream(ctx) // a replayed (moved back one), then on to b
		if p.StreamDone() {
			t.Error("b was processed, want a replayed")
		}
		p.PumpStream(ctx) // a replayed again: the hook moves back one each time
		if r := p.PumpStream(ctx); r.Records != 1 {
			t.Errorf("batch %+v, want one record", r)
		}
	})
	t.Run("a stalled worker lets a second take the batch; a crash acks nothing", func(t *testing.T) {
		stall, crash := true, true
		p, _ := newHooked(t, Hooks{
			WorkerStall: func() time.Duration {
				if stall {
					stall = false
					return 31 * time.Second
				}
				return 0
			},
			BeforeWorker: func([]Received) int {
				if crash {
					crash = false
					return 0
				}
				return -1
			},
		}, 1)
		putJob(t, p, "a", due)
		p.PumpStream(ctx)
		r := p.DeliverQueue(ctx)
		if r.Delivered != 2 {
			t.Errorf("delivered %d, want the message twice (second worker, then the stalled one)", r.Delivered)
		}
		// The second worker crashed before its ack; the stalled one's
		// receipt is stale: the message is still queued.
		if p.Queue.Len() != 1 {
			t.Errorf("queued %d, want 1", p.Queue.Len())
		}
	})
}

// TestWireFiring: an engine wired with only its firing fires what its
// timer holds when the driver jumps the clock to the schedule, retries a
// failed firing at NextAttempt, dead-letters it after FireAttempts, and
// is Idle without a stream.
func TestWireFiring(t *testing.T) {
	e := NewEngine(Options{Start: t0, FireAttempts: 2, Log: slog.New(slog.DiscardHandler)})
	var fired []string
	fail := map[string]bool{"b": true}
	e.WireFiring(func(_ context.Context, s contract.Schedule) (string, error) {
		fired = append(fired, s.Name)
		if fail[s.Name] {
			return "", errors.New("send failed")
		}
		return "sent", nil
	})
	for _, n := range []string{"a", "b"} {
		if err := e.Timer.Arm(context.Background(), contract.Schedule{Name: n, At: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := e.NextAttempt(); ok || !e.Idle() {
		t.Fatalf("a fresh engine: NextAttempt %v, Idle %v", ok, e.Idle())
	}
	e.Clock.Set(t0.Add(time.Hour))
	if r := e.FireSchedules(context.Background()); r.Fired != 2 || r.Outcomes["sent"] != 1 {
		t.Fatalf("first firing: %+v", r)
	}
	next, ok := e.NextAttempt()
	if !ok || !next.Equal(t0.Add(time.Hour+time.Minute)) || e.Idle() {
		t.Fatalf("the retry waits until %s (%v), Idle %v: want a minute later", next, ok, e.Idle())
	}
	e.Clock.Set(next)
	e.FireSchedules(context.Background())
	if _, ok := e.NextAttempt(); ok || len(e.DeadInvocations()) != 1 || !e.Idle() {
		t.Fatalf("after the last attempt: waiting %v, dead %v", ok, e.DeadInvocations())
	}
	if want := []string{"a", "b", "b"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
}

// TestDeadLetterIsLogged: a firing that used up its attempts is logged
// as dead-lettered, once, at error level; one still retried is not.
func TestDeadLetterIsLogged(t *testing.T) {
	for _, attempts := range []int{1, 3} {
		var logs bytes.Buffer
		e := NewEngine(Options{Start: t0, FireAttempts: attempts, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
			Hooks: Hooks{RetryDelay: func(int) time.Duration { return 0 }}})
		e.WireFiring(func(context.Context, contract.Schedule) (string, error) { return "", errors.New("send failed") })
		if err := e.Timer.Arm(context.Background(), contract.Schedule{Name: "s", At: t0}); err != nil {
			t.Fatal(err)
		}
		for step := 1; step <= attempts+1; step++ {
			e.FireSchedules(context.Background())
			want := 0
			if step >= attempts {
				want = 1
			}
			if got := strings.Count(logs.String(), `"level":"ERROR","msg":"firing dead-lettered after its attempts","schedule":"s"`); got != want {
				t.Errorf("%d attempts, after step %d: %d dead-letter lines, want %d\n%s", attempts, step, got, want, logs.String())
			}
		}
	}
}
