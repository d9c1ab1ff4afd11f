package inmem

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// The Step Functions stand-in stops only the execution a due time names,
// as awssfn does with one StopExecution: never the item's others.
func TestExecutionsStopOnlyTheNamedExecution(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	d1, d2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	s1 := armedSchedule("01J0000000000000000000000A", d1)
	s2 := s1
	s2.At, s2.Payload.Due = d2, d2
	name := s1.Name
	ctx := context.Background()
	type step struct {
		op   func(e *Executions) error
		want error
	}
	create := func(s contract.Schedule) step {
		return step{func(e *Executions) error { return e.Arm(ctx, s) }, nil}
	}
	del := func(at time.Time, want error) step {
		return step{func(e *Executions) error { return e.Disarm(ctx, name, at) }, want}
	}
	move := func(s contract.Schedule, from time.Time, want error) step {
		return step{func(e *Executions) error { return e.Move(ctx, s, from) }, want}
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  []string // running executions after
	}{
		{"cancel stops it", []step{create(s1), del(d1, nil)}, nil},
		{"cancel of another due time stops nothing", []step{create(s1), del(d2, timer.ErrNotFound)},
			[]string{timerspec.ExecutionName(name, d1)}},
		{"cancel without a due time stops nothing", []step{create(s1), del(time.Time{}, timer.ErrNotFound)},
			[]string{timerspec.ExecutionName(name, d1)}},
		{"move stops the old, starts the new", []step{create(s1), move(s2, d1, nil)}, []string{timerspec.ExecutionName(name, d2)}},
		{"move of nothing is not found", []step{move(s2, d1, timer.ErrNotFound)}, nil},
		{"a create that raced the move: the move still stops the old", []step{create(s1), create(s2), move(s2, d1, nil)},
			[]string{timerspec.ExecutionName(name, d2)}},
		{"re-armed after a cancel: a restart, which a later cancel stops", []step{create(s1), del(d1, nil), create(s1),
			del(d1, nil), del(d1, timer.ErrNotFound)}, nil},
		{"re-armed after a cancel, many times: one restart", []step{create(s1), del(d1, nil), create(s1), create(s1), create(s1)},
			[]string{timerspec.RestartName(timerspec.ExecutionName(name, d1), t0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewExecutions(func() time.Time { return t0 })
			for i, st := range tc.steps {
				if err := st.op(e); !errors.Is(err, st.want) || (st.want == nil && err != nil) {
					t.Fatalf("step %d: %v, want %v", i, err, st.want)
				}
			}
			var got []string
			for n := range e.Running(name) {
				got = append(got, n)
			}
			sort.Strings(got)
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Fatalf("running %v, want %v", got, tc.want)
			}
		})
	}
}

// The Step Functions stand-in reads as awssfn does: List gives every
// running execution (an item with a restart and a newer execution
// twice), by name then due time, in pages; Get with a due time reads the
// running link of the chain named for it, and without one the item's
// lookup.
func TestExecutionsReader(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	d1, d2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	at := func(id string, due time.Time) contract.Schedule {
		return armedSchedule(id, due)
	}
	a1, a2, b := at("01J0000000000000000000000A", d1), at("01J0000000000000000000000A", d2), at("01J0000000000000000000000B", d1)
	ctx := context.Background()
	e := NewExecutions(func() time.Time { return t0 })
	// a at d2, and a restart of a at d1 (stopped, armed again); b at d1.
	for _, op := range []func() error{
		func() error { return e.Arm(ctx, a2) },
		func() error { return e.Arm(ctx, a1) },
		func() error { return e.Disarm(ctx, a1.Name, d1) },
		func() error { return e.Arm(ctx, a1) },
		func() error { return e.Arm(ctx, b) },
	} {
		if err := op(); err != nil {
			t.Fatal(err)
		}
	}
	readable := func(s contract.Schedule) contract.Schedule { s.ClientToken = ""; return s }
	want := []contract.Schedule{readable(a1), readable(a2), readable(b)}
	for _, limit := range []int{1, 2, 3, 0} {
		var got []contract.Schedule
		page := timer.PageRequest{Limit: limit}
		for range 10 {
			p, err := e.List(ctx, page)
			if err != nil {
				t.Fatal(err)
			}
			if limit > 0 && len(p.Schedules) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(p.Schedules))
			}
			got = append(got, p.Schedules...)
			if page.Cursor = p.Cursor; p.Cursor == "" {
				break
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("limit %d: listed\n%+v\nwant\n%+v", limit, got, want)
		}
	}
	for _, tc := range []struct {
		name    string
		sname   string
		at      time.Time
		want    contract.Schedule
		wantErr error
	}{
		{"named for the due time", a2.Name, d2, readable(a2), nil},
		{"a running restart of the due time", a1.Name, d1, readable(a1), nil},
		{"another due time", b.Name, d2, contract.Schedule{}, timer.ErrNotFound},
		{"no such item", "task-none", d1, contract.Schedule{}, timer.ErrNotFound},
		{"no due time: the lookup", a1.Name, time.Time{}, readable(a2), nil},
		{"no due time, one execution", b.Name, time.Time{}, readable(b), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.Get(ctx, tc.sname, tc.at)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("get = %+v, %v; want %+v, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// The stand-in's restart chain is awssfn's: the restart of a stopped
// execution is named after its stop second (timerspec.RestartSecond), so
// re-arms at later seconds find it, a cancel stops it, the next re-arm
// starts the next link, and a chain of more than timerspec.MaxRestarts
// restarts is an error.
func TestExecutionsRestartChain(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	due := t0.Add(24 * time.Hour)
	s := armedSchedule("01J0000000000000000000000A", due)
	first := timerspec.ExecutionName(s.Name, due)
	ctx := context.Background()
	// link names the restart after cancels at the given seconds after t0.
	link := func(stops ...int) string {
		var prev time.Time
		for _, sec := range stops {
			prev = timerspec.RestartSecond(prev, t0.Add(time.Duration(sec)*time.Second))
		}
		return timerspec.RestartName(first, prev)
	}
	const arm, cancel = "arm", "cancel"
	chain := []string{arm}
	var stops []int
	for i := range timerspec.MaxRestarts {
		chain = append(chain, cancel, arm)
		stops = append(stops, 2*(i+1))
	}
	for _, tc := range []struct {
		name    string
		steps   []string // one a second, from t0+1s
		want    []string
		wantErr error
	}{
		{"re-armed three times: one restart", []string{arm, cancel, arm, arm, arm}, []string{link(2)}, nil},
		{"its cancel, then re-arms: the next link", []string{arm, cancel, arm, cancel, arm, arm}, []string{link(2, 4)}, nil},
		{"MaxRestarts re-arms: the last link", chain, []string{link(stops...)}, nil},
		{"one more: an error", append(slices.Clone(chain), cancel, arm), nil, timerspec.ErrRestartChain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := t0
			e := NewExecutions(func() time.Time { return clock })
			var err error
			for _, st := range tc.steps {
				clock = clock.Add(time.Second)
				if st == arm {
					err = e.Arm(ctx, s)
				} else {
					err = e.Disarm(ctx, s.Name, due)
				}
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("last step: %v; want %v", err, tc.wantErr)
			}
			// As awssfn refuses it: the cancel worker acknowledges it.
			var p interface{ Permanent() bool }
			if tc.wantErr != nil && (!errors.As(err, &p) || !p.Permanent()) {
				t.Errorf("%v does not report Permanent()", err)
			}
			var got []string
			for n := range e.Running(s.Name) {
				got = append(got, n)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("running %v; want %v", got, tc.want)
			}
			g, gerr := e.Get(ctx, s.Name, due)
			switch {
			case tc.wantErr != nil && !errors.Is(gerr, tc.wantErr):
				t.Errorf("get: %v; want %v", gerr, tc.wantErr)
			case tc.wantErr == nil && (gerr != nil || !g.At.Equal(due)):
				t.Errorf("get: %+v, %v; want the running restart", g, gerr)
			}
		})
	}
}

// armedSchedule is the schedule of an armed item of the default schema
// keyed u/id, due at due.
func armedSchedule(id string, due time.Time) contract.Schedule {
	s := contract.Default()
	return s.ScheduleFor(contract.Item{Key: contract.Key{Partition: "u", Sort: id}, State: contract.DefaultArmedState, Due: due})
}
