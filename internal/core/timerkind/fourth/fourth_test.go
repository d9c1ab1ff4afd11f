// Package fourth_test is a fourth timer kind that only tests know: it
// registers with one timerkind.Register call, and then runs the timer
// contract suites, the adopters' kit (contract/pipelinetest) and the
// simulation, none of which names it. That nothing else had to change
// is what shows the registry holds everything that varies by kind.
package fourth_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/contract/pipelinetest"
	"github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/tooling/sim"
)

// Fourth is the kind's name (UNSCHEDULE_TIMER=Fourth).
const Fourth timerspec.Name = "Fourth"

// fourthVar is the kind's own variable: the name of its timer resource.
const fourthVar = "FOURTH_TIMER"

// envelope is what the kind hands the firing function: the payload
// wrapped, so that only its decoder can read it.
type envelope struct {
	Fourth json.RawMessage `json:"fourthFiring"`
}

// The one registry line.
func init() { timerkind.Register(kind) }

// kind is the fourth timer: schedules fire at their due time, to the
// second, with the in-memory scheduler's semantics; its adapter is that
// stand-in too (there is no AWS service behind it).
var kind = timerkind.Kind{
	Name: Fourth, Spellings: []string{"fourth"},
	Load: func(e *lambdaenv.Env) timerkind.Settings {
		r := e.Require(fourthVar)
		s := e.Schema()
		return timerkind.Settings{Schema: s, Label: "fourth:" + r, Adapter: s}
	},
	New: func(_ aws.Config, s timerkind.Settings) (timerkind.Timer, error) {
		return standin(timerkind.MemoryOptions{Schema: s.Adapter.(contract.Schema)}), nil
	},
	Decode: func(raw json.RawMessage) (timerkind.Batch, bool) {
		var e envelope
		if json.Unmarshal(raw, &e) != nil || len(e.Fourth) == 0 {
			return timerkind.Batch{}, false
		}
		return timerkind.Batch{Firings: []timerkind.Firing{{ID: "1", Payload: e.Fourth}},
			Answer: func(failed []string) any { return map[string]any{"failed": failed} }}, true
	},
	Memory: func(o timerkind.MemoryOptions) timerkind.Standin { return standin(o) },
	Lateness: func(late time.Duration) error {
		if late != 0 {
			return errors.New("Fourth fires to the second: leave it 0")
		}
		return nil
	},
}

// exact is the kind's stand-in: the in-memory scheduler's semantics, but
// a type of its own, so nothing that knows the EventBridge Scheduler's
// stand-in (its whole-minute firing) takes it for that one.
type exact struct{ *inmem.Scheduler }

func standin(o timerkind.MemoryOptions) exact {
	s := inmem.NewScheduler()
	s.ListPrefix = o.Schema.ScheduleNamePrefix
	return exact{s}
}

// TestRegistered: the kind is found by its name and spelling, and after
// the built-in ones.
func TestRegistered(t *testing.T) {
	for _, v := range []string{"Fourth", "fourth"} {
		if got, err := timerkind.Parse(v); err != nil || got != Fourth {
			t.Fatalf("Parse(%q) = %v, %v", v, got, err)
		}
	}
	if n := timerkind.Names(); n[len(n)-1] != Fourth {
		t.Fatalf("Names() = %v, want Fourth last", n)
	}
}

// TestEnvironmentAndAdapter: UNSCHEDULE_TIMER=Fourth reads only the
// kind's variable, and builds its adapter.
func TestEnvironmentAndAdapter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		missing string
	}{
		{"set", map[string]string{envvars.TimerKind: "Fourth", fourthVar: "clock", envvars.ItemSchema: contract.Default().EnvValue()}, ""},
		{"its variable missing", map[string]string{envvars.TimerKind: "fourth", envvars.ItemSchema: contract.Default().EnvValue()}, fourthVar},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := func(k string) string { return tc.env[k] }
			e := lambdaenv.New(get)
			c, err := timers.Load(e, get)
			if err != nil || c.Timer != Fourth {
				t.Fatalf("Load = %+v, %v", c, err)
			}
			if tc.missing != "" {
				if e.Err() == nil || !strings.Contains(e.Err().Error(), tc.missing) {
					t.Fatalf("error %v, want one naming the missing %s", e.Err(), tc.missing)
				}
				return
			}
			if e.Err() != nil || c.Label != "fourth:clock" {
				t.Fatalf("Load = %+v, %v", c, e.Err())
			}
			if _, err := timers.New(aws.Config{}, c); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDecoder: what the kind hands the firing function reaches the
// handler as the payload; the built-in kinds' events still do.
func TestDecoder(t *testing.T) {
	var got []string
	handle := func(_ context.Context, p json.RawMessage) error { got = append(got, string(p)); return nil }
	if _, err := timerkind.Invoke(context.Background(), json.RawMessage(`{"fourthFiring":{"a":"b"}}`), handle, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := timerkind.Invoke(context.Background(), json.RawMessage(`{"a":"c"}`), handle, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != `{"a":"b"}` || got[1] != `{"a":"c"}` {
		t.Fatalf("handled %q", got)
	}
}

// TestContracts: the stand-in (its adapter too) keeps the timer and
// reader contracts.
func TestContracts(t *testing.T) {
	newTimer := func(*testing.T) timertest.ContractTimer {
		return timerkind.NewStandin(Fourth, timerkind.MemoryOptions{Schema: timertest.Schema})
	}
	t.Run("timer", func(t *testing.T) { timertest.TimerContract(t, timertest.TimerBackend{New: newTimer}) })
	t.Run("reader", func(t *testing.T) { timertest.ReaderContract(t, timertest.ReaderBackend{New: newTimer}) })
}

// TestAdoptersKit: an item fires its target once, at its due time to
// the second; a deleted one never does; a moved one fires at its new due
// time.
func TestAdoptersKit(t *testing.T) {
	schema := contract.Schema{PartitionKey: "tenant", SortKey: "job", DueAttr: "runAt", StateAttr: "state",
		ArmedStates: []string{"Queued"}, FiredState: "Ran", ScheduleNamePrefix: "job-"}
	var fired []contract.Payload
	var at []time.Time
	var p *pipelinetest.Pipeline
	p = pipelinetest.New(t, pipelinetest.Config{Schema: schema, Timer: pipelinetest.Timer(Fourth),
		Target: func(_ context.Context, pl contract.Payload) error {
			fired, at = append(fired, pl), append(at, p.Now())
			return nil
		}})
	due := p.Now().Add(time.Hour + 30*time.Second)
	job := func(id string, due time.Time) map[string]string {
		return map[string]string{"tenant": "acme", "job": id, "state": "Queued", "runAt": contract.FormatTime(due)}
	}
	p.Put(job("a", due))
	p.Put(job("b", due))
	p.Put(job("c", due))
	p.Delete(contract.Key{Partition: "acme", Sort: "b"})
	p.Put(job("c", due.Add(time.Hour)))
	p.Advance(3 * time.Hour)
	want := []contract.Payload{{Key: contract.Key{Partition: "acme", Sort: "a"}, Due: due},
		{Key: contract.Key{Partition: "acme", Sort: "c"}, Due: due.Add(time.Hour)}}
	if len(fired) != len(want) {
		t.Fatalf("fired %+v, want %+v", fired, want)
	}
	for i := range want {
		if !fired[i].Equal(want[i]) || !at[i].Equal(want[i].Due) {
			t.Fatalf("fired %+v at %v, want %+v at its due time", fired[i], at[i], want[i])
		}
	}
}

// TestSimulation: 300 seeds of the task workload with the fourth timer
// firing, under the faults every timer runs with.
func TestSimulation(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 20
	}
	s := sim.RunMany(sim.Config{Timer: Fourth, ConcurrentFires: true, AnyWriter: true}, 1, n, 0)
	for i, r := range s.Failed {
		if i == 5 {
			break
		}
		t.Errorf("seed %d: %s", r.Seed, r.Violations[0])
	}
	if s.Histories != n {
		t.Fatalf("%d histories, want %d", s.Histories, n)
	}
	// The simulation injects what the kind says of itself: no early
	// firing (FiresEarly unset), late and duplicate ones of its own
	// (FiresWithin zero, no DuplicateFault of its own).
	if s.Faults[sim.FaultFiredEarly] != 0 || s.Faults[sim.FaultFiredLate] == 0 || s.Faults[sim.FaultFiredTwice] == 0 {
		t.Errorf("faults %v: want no %s, some %s and %s", s.Faults, sim.FaultFiredEarly, sim.FaultFiredLate, sim.FaultFiredTwice)
	}
	t.Logf("%d histories, %d tasks, faults %v", s.Histories, s.Tasks, s.Faults)
}
