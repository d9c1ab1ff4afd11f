package pipelinetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/contract/pipelinetest"
)

// schema names every attribute, so the tests do not depend on the
// contract's defaults.
var schema = contract.Schema{
	PartitionKey: "tenant", SortKey: "job", DueAttr: "runAt", StateAttr: "state",
	ArmedStates: []string{"Queued"}, FiredState: "Ran", TokenAttr: "token", InlineAttr: "inline",
	FiredAtAttr: "ranAt", ClaimAtAttr: "claimedAt", DeliveredAtAttr: "deliveredAt", ScheduleNamePrefix: "job-",
}

var start = time.Date(2031, 5, 1, 8, 0, 0, 0, time.UTC)

func key(id string) contract.Key { return contract.Key{Partition: "acme", Sort: id} }

func job(id, state string, due time.Time) map[string]string {
	return map[string]string{"tenant": "acme", "job": id, "state": state, "runAt": contract.FormatTime(due), "kind": "report"}
}

// timers: each timer with a lateness, and where it fires an item due at
// due: the Scheduler on the whole minute at or after it plus the
// lateness, Step Functions at it, TTL the lateness after it.
var timers = []struct {
	timer pipelinetest.Timer
	late  time.Duration
	fires func(due time.Time) time.Time
}{
	{pipelinetest.Scheduler, 20 * time.Second, func(due time.Time) time.Time {
		if m := due.Truncate(time.Minute); !m.Equal(due) {
			due = m.Add(time.Minute)
		}
		return due.Add(20 * time.Second)
	}},
	{pipelinetest.StepFunctions, 0, func(due time.Time) time.Time { return due }},
	{pipelinetest.TTL, 90 * time.Minute, func(due time.Time) time.Time { return due.Add(90 * time.Minute) }},
}

// recorder is a target that fails its first fails runs.
type recorder struct{ fails int }

func (r *recorder) run(context.Context, contract.Payload) error {
	if r.fails > 0 {
		r.fails--
		return errors.New("target down")
	}
	return nil
}

// On every timer: an armed item fires once, at the timer's time, with the
// contract's payload; a delete or a move out of the armed states cancels
// it; a new due time moves it; a failing target is retried and the
// delivery is recorded only after it succeeded; a target that always
// fails ends in Failed, undelivered.
func TestTheTargetRunsOnceAtTheTimersTime(t *testing.T) {
	due := start.Add(time.Hour + 30*time.Second) // off the minute
	moved := start.Add(3 * time.Hour)
	for _, tm := range timers {
		for _, tc := range []struct {
			name  string
			fails int
			// write writes after the item was put at start, a minute later.
			write func(p *pipelinetest.Pipeline)
			// want is the due time of the one delivery (zero: none).
			want     time.Time
			calls    int
			failed   bool
			endState string
		}{
			{name: "fires", write: func(*pipelinetest.Pipeline) {}, want: due, calls: 1, endState: "Ran"},
			{name: "deleted", write: func(p *pipelinetest.Pipeline) { p.Delete(key("j1")) }},
			{name: "left the armed states", write: func(p *pipelinetest.Pipeline) { p.Put(job("j1", "Cancelled", due)) },
				endState: "Cancelled"},
			{name: "moved", write: func(p *pipelinetest.Pipeline) { p.Put(job("j1", "Queued", moved)) }, want: moved, calls: 1,
				endState: "Ran"},
			{name: "target fails once", fails: 1, write: func(*pipelinetest.Pipeline) {}, want: due, calls: 2, endState: "Ran"},
			{name: "target always fails", fails: 100, write: func(*pipelinetest.Pipeline) {}, calls: 3, failed: true,
				endState: "Ran"},
		} {
			t.Run(string(tm.timer)+"/"+tc.name, func(t *testing.T) {
				target := &recorder{fails: tc.fails}
				p := pipelinetest.New(t, pipelinetest.Config{Schema: schema, Target: target.run, Timer: tm.timer,
					Start: start, Late: tm.late})
				p.Put(job("j1", "Queued", due))
				p.Advance(time.Minute)
				tc.write(p)
				// Up to a second before the timer's time of the first due
				// time: nothing runs.
				p.Advance(tm.fires(due).Add(-time.Second).Sub(p.Now()))
				if calls := p.Calls(); len(calls) != 0 {
					t.Fatalf("the target ran before its time (%v): %+v", tm.fires(due), calls)
				}
				p.Advance(time.Second)
				if tc.fails > 0 {
					// The first run failed: no delivery is recorded yet.
					if calls := p.Calls(); len(calls) != 1 || calls[0].Err == nil || !calls[0].At.Equal(tm.fires(due)) {
						t.Fatalf("calls %+v, want one failed run at %v", calls, tm.fires(due))
					}
					if a, _ := p.Item(key("j1")); a["deliveredAt"] != "" {
						t.Fatalf("delivery recorded after a failed run: %v", a)
					}
				}
				p.Advance(moved.Add(4 * time.Hour).Sub(p.Now()))

				calls := p.Calls()
				if len(calls) != tc.calls {
					t.Fatalf("%d runs of the target, want %d: %+v", len(calls), tc.calls, calls)
				}
				var delivered []contract.Payload
				if !tc.want.IsZero() {
					delivered = []contract.Payload{{Key: key("j1"), Due: tc.want}}
					if last := calls[len(calls)-1]; !last.At.Equal(tm.fires(tc.want)) && tc.fails == 0 {
						t.Errorf("the target ran at %v, want %v", last.At, tm.fires(tc.want))
					}
				}
				if got := p.Delivered(); len(got) != len(delivered) || (len(got) == 1 && !got[0].Equal(delivered[0])) {
					t.Errorf("delivered %+v, want %+v", got, delivered)
				}
				if got := p.Failed(); (len(got) == 1 && got[0].Equal(contract.Payload{Key: key("j1"), Due: due})) != tc.failed ||
					len(got) > 1 {
					t.Errorf("failed %+v, want the item's payload: %v", got, tc.failed)
				}
				a, found := p.Item(key("j1"))
				if found != (tc.endState != "") || a["state"] != tc.endState || (a["deliveredAt"] != "") != (tc.want != time.Time{}) {
					t.Errorf("item %v (found %v), want state %q and a delivery recorded only when delivered", a, found, tc.endState)
				}
				if found && a["kind"] != "report" {
					t.Errorf("item %v lost its own attributes", a)
				}
			})
		}
	}
}

// LambdaTarget hands a Lambda handler the payload as the firing function
// invokes a target: the JSON of the item's key and due time, in the
// schema's names.
func TestLambdaTargetGetsTheContractsJSON(t *testing.T) {
	var got []string
	h := func(_ context.Context, raw []byte) error {
		got = append(got, string(raw))
		return nil
	}
	p := pipelinetest.New(t, pipelinetest.Config{Schema: schema, Start: start, Timer: pipelinetest.StepFunctions,
		Target: pipelinetest.LambdaTarget(schema, func(ctx context.Context, raw json.RawMessage) error { return h(ctx, raw) })})
	p.Put(job("j1", "Queued", start.Add(time.Hour)))
	p.Advance(2 * time.Hour)
	want := `{"job":"j1","runAt":"2031-05-01T09:00:00Z","tenant":"acme"}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("the handler got %q, want %q once", got, want)
	}
}

// fatal is a TB whose Fatalf stops the test function with its message.
type fatal struct{}

func (fatal) Helper() {}
func (fatal) Fatalf(format string, args ...any) {
	panic(fatalMsg(fmt.Sprintf(format, args...)))
}

type fatalMsg string

// A bad Config fails the test with what to fix.
func TestBadConfigSaysWhatToFix(t *testing.T) {
	run := func(context.Context, contract.Payload) error { return nil }
	for _, tc := range []struct {
		c    pipelinetest.Config
		want string
	}{
		{pipelinetest.Config{Schema: schema}, "Config.Target is nil"},
		{pipelinetest.Config{Schema: contract.Schema{ArmedStates: []string{"Done"}, FiredState: "Done"}, Target: run}, "FiredState"},
		{pipelinetest.Config{Schema: schema, Target: run, Timer: "cron"}, `Timer "cron" is unknown`},
		{pipelinetest.Config{Schema: schema, Target: run, Late: time.Minute}, "use 0 to 59s"},
		{pipelinetest.Config{Schema: schema, Target: run, Timer: pipelinetest.StepFunctions, Late: time.Second}, "leave it 0"},
		{pipelinetest.Config{Schema: schema, Target: run, Timer: pipelinetest.TTL, Late: -time.Second}, "use 0 or more"},
	} {
		got := func() (msg fatalMsg) {
			defer func() { msg, _ = recover().(fatalMsg) }()
			pipelinetest.New(fatal{}, tc.c)
			return ""
		}()
		if !strings.Contains(string(got), tc.want) {
			t.Errorf("New(%+v) failed with %q, want a message with %q", tc.c, got, tc.want)
		}
	}
}

// A timer lost to a fault is brought back by the reconciler on every
// timer: one lost ahead of its due time is armed again and fires on time;
// one lost past its due time fires at the reconciler's pass, once; and
// nothing fires twice.
func TestReconcileBringsBackALostTimer(t *testing.T) {
	for _, tm := range timers {
		t.Run(string(tm.timer), func(t *testing.T) {
			r := &recorder{}
			p := pipelinetest.New(t, pipelinetest.Config{Schema: schema, Target: r.run, Timer: tm.timer, Start: start, Late: tm.late})
			ahead, past := start.Add(3*time.Hour), start.Add(10*time.Minute)
			p.Put(job("ahead", "Queued", ahead))
			p.Put(job("past", "Queued", past))
			p.LoseTimer(key("ahead"))
			p.LoseTimer(key("past"))
			p.Advance(time.Hour)
			if got := p.Delivered(); len(got) != 0 {
				t.Fatalf("delivered %v with both timers lost", got)
			}
			p.Reconcile()
			if got := fmt.Sprint(p.Delivered()); got != fmt.Sprint([]contract.Payload{{Key: key("past"), Due: past}}) {
				t.Fatalf("after the pass delivered %s, want the overdue item once", got)
			}
			p.Advance(tm.fires(ahead).Sub(p.Now()))
			p.Reconcile()
			want := []contract.Payload{{Key: key("past"), Due: past}, {Key: key("ahead"), Due: ahead}}
			if got := fmt.Sprint(p.Delivered()); got != fmt.Sprint(want) {
				t.Fatalf("delivered %s, want %v", got, want)
			}
		})
	}
}

// jobIn is a target's own input type, decoded from the payload's JSON.
type jobIn struct {
	Tenant string `json:"tenant"`
	Job    string `json:"job"`
	RunAt  string `json:"runAt"`
}

// LambdaTarget takes every handler shape lambda.Start takes, decodes the
// payload into the handler's input, and fails the firing (retried) when
// the handler returns an error.
func TestLambdaTargetTakesEveryHandlerShape(t *testing.T) {
	var got []string
	note := func(s string) { got = append(got, s) }
	for _, tc := range []struct {
		name    string
		handler any
		want    string
	}{
		{"func(ctx, struct) (out, error)", func(_ context.Context, in jobIn) (string, error) { note(in.Job + "@" + in.RunAt); return "ok", nil },
			"j1@2031-05-01T09:00:00Z"},
		{"func(ctx, struct) error", func(_ context.Context, in jobIn) error { note(in.Tenant + "/" + in.Job); return nil }, "acme/j1"},
		{"func(ctx, json.RawMessage) error", func(_ context.Context, raw json.RawMessage) error { note(string(raw)); return nil },
			`{"job":"j1","runAt":"2031-05-01T09:00:00Z","tenant":"acme"}`},
		{"func(map) (out, error)", func(in map[string]string) (map[string]string, error) { note(in["job"]); return in, nil }, "j1"},
		{"func(ctx) error", func(context.Context) error { note("ctx only"); return nil }, "ctx only"},
		{"func() error", func() error { note("nothing"); return nil }, "nothing"},
		{"func()", func() { note("no result") }, "no result"},
		{"func(ctx, *struct) (*out, error)", func(_ context.Context, in *jobIn) (*jobIn, error) { note("ptr " + in.Job); return in, nil }, "ptr j1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			p := pipelinetest.New(t, pipelinetest.Config{Schema: schema, Start: start, Timer: pipelinetest.StepFunctions,
				Target: pipelinetest.LambdaTarget(schema, tc.handler)})
			p.Put(job("j1", "Queued", start.Add(time.Hour)))
			p.Advance(2 * time.Hour)
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("the handler saw %q, want %q once", got, tc.want)
			}
			if d := p.Delivered(); len(d) != 1 {
				t.Fatalf("delivered %v, want the one item", d)
			}
		})
	}
	t.Run("an error fails the firing", func(t *testing.T) {
		p := pipelinetest.New(t, pipelinetest.Config{Schema: schema, Start: start, Timer: pipelinetest.StepFunctions,
			Target: pipelinetest.LambdaTarget(schema, func(context.Context, jobIn) (string, error) { return "", errors.New("down") })})
		p.Put(job("j1", "Queued", start.Add(time.Hour)))
		p.Advance(2 * time.Hour)
		if len(p.Delivered()) != 0 || len(p.Failed()) != 1 {
			t.Fatalf("delivered %v, failed %v: want it failed", p.Delivered(), p.Failed())
		}
	})
}

// A handler lambda.Start refuses is refused at once, with what to change.
func TestLambdaTargetRefusesOtherShapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler any
		want    string
	}{
		{"nil", nil, "the handler is nil"},
		{"not a function", "run", "not a function"},
		{"three arguments", func(context.Context, jobIn, int) error { return nil }, "at most 2"},
		{"no context first", func(jobIn, jobIn) error { return nil }, "the first is not a context.Context"},
		{"an interface not a context", func(fmt.Stringer) error { return nil }, "not context.Context"},
		{"three results", func() (int, int, error) { return 0, 0, nil }, "returns 3 values"},
		{"no error second", func() (int, int) { return 0, 0 }, "the second is not an error"},
		{"one result, no error", func() int { return 0 }, "which is not an error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "pass a handler lambda.Start accepts") {
					t.Fatalf("panicked with %q, want %q and how to fix it", msg, tc.want)
				}
			}()
			pipelinetest.LambdaTarget(schema, tc.handler)
		})
	}
}

// Update sets and removes attributes as UpdateItem does, and the stream
// path follows: moving the due time moves the timer, leaving the armed
// states cancels it, removing the due attribute disarms it, and an
// update of a missing item creates it.
func TestUpdateSetsAndRemovesAsUpdateItem(t *testing.T) {
	due, moved := start.Add(time.Hour), start.Add(3*time.Hour)
	for _, tc := range []struct {
		name   string
		update func(p *pipelinetest.Pipeline)
		want   []contract.Payload
		attrs  map[string]string // the item after the update (nil: not checked)
	}{
		{"a new due time moves it", func(p *pipelinetest.Pipeline) {
			p.Update(key("j1"), map[string]string{"runAt": contract.FormatTime(moved)})
		}, []contract.Payload{{Key: key("j1"), Due: moved}}, nil},
		{"leaving the armed states cancels it, the other attributes stay", func(p *pipelinetest.Pipeline) {
			p.Update(key("j1"), map[string]string{"state": "Cancelled"}, "kind")
		}, nil, map[string]string{"tenant": "acme", "job": "j1", "state": "Cancelled", "runAt": contract.FormatTime(due)}},
		{"removing the due time disarms it", func(p *pipelinetest.Pipeline) { p.Update(key("j1"), nil, "runAt") }, nil,
			map[string]string{"tenant": "acme", "job": "j1", "state": "Queued", "kind": "report"}},
		{"a missing item is created, armed", func(p *pipelinetest.Pipeline) {
			p.Update(key("j2"), map[string]string{"state": "Queued", "runAt": contract.FormatTime(moved)})
		}, []contract.Payload{{Key: key("j1"), Due: due}, {Key: key("j2"), Due: moved}}, nil},
		{"an update that changes nothing fires it once", func(p *pipelinetest.Pipeline) {
			p.Update(key("j1"), map[string]string{"state": "Queued"}, "absent")
		}, []contract.Payload{{Key: key("j1"), Due: due}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pipelinetest.New(t, pipelinetest.Config{Schema: schema, Target: (&recorder{}).run, Start: start})
			p.Put(job("j1", "Queued", due))
			tc.update(p)
			if tc.attrs != nil {
				if got, _ := p.Item(key("j1")); fmt.Sprint(got) != fmt.Sprint(tc.attrs) {
					t.Fatalf("item %v, want %v", got, tc.attrs)
				}
			}
			p.Advance(4 * time.Hour)
			if got := p.Delivered(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("delivered %v, want %v", got, tc.want)
			}
		})
	}
}

// Update refuses what DynamoDB's UpdateItem refuses, never more lenient.
func TestUpdateRefusesWhatDynamoDBRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		k      contract.Key
		set    map[string]string
		remove []string
		want   string
	}{
		{"setting the partition key", key("j1"), map[string]string{"tenant": "other"}, nil, "cannot update attribute tenant: it is part of the key"},
		{"removing the sort key", key("j1"), nil, []string{"job"}, "cannot update attribute job"},
		{"set and removed", key("j1"), map[string]string{"kind": "x"}, []string{"kind"}, "two document paths overlap"},
		{"removed twice", key("j1"), nil, []string{"kind", "kind"}, "two document paths overlap"},
		{"an empty name", key("j1"), map[string]string{"": "x"}, nil, "an attribute name is empty"},
		{"an incomplete key", contract.Key{Partition: "acme"}, map[string]string{"kind": "x"}, nil, "the key attribute job is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pipelinetest.New(fatal{}, pipelinetest.Config{Schema: schema, Target: (&recorder{}).run, Start: start})
			p.Put(job("j1", "Queued", start.Add(time.Hour)))
			before, _ := p.Item(key("j1"))
			got := func() (msg fatalMsg) {
				defer func() { msg, _ = recover().(fatalMsg) }()
				p.Update(tc.k, tc.set, tc.remove...)
				return ""
			}()
			if !strings.Contains(string(got), tc.want) || !strings.Contains(string(got), "ValidationException") {
				t.Fatalf("Update failed with %q, want %q", got, tc.want)
			}
			if after, _ := p.Item(key("j1")); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("the item changed to %v", after)
			}
		})
	}
}
