package reconcile_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timerkind"
)

// jobsSchema is an adopter's schema with names of its own, unlike the
// to-do app's: the reconciler must read items through it alone.
var jobsSchema = contract.Schema{PartitionKey: "tenant", SortKey: "job", DueAttr: "runAt", StateAttr: "phase",
	ArmedStates: []string{"Queued", "Held"}, FiredState: "Started"}.WithDefaults()

// recordingTarget records what the core delivered.
type recordingTarget struct{ got []contract.Payload }

func (r *recordingTarget) Deliver(_ context.Context, p contract.Payload) error {
	r.got = append(r.got, p)
	return nil
}

// TestRunRepairsAnySchemaOnEveryTimer: on each timer, with an adopter's
// own schema and the contract's item view (no index, no marks), a pass
// creates a missing schedule, moves a misplaced one, removes what the
// timer holds for a gone or finished item, and fires an overdue item and
// an undelivered firing through the core and the target, once.
func TestRunRepairsAnySchemaOnEveryTimer(t *testing.T) {
	ctx := context.Background()
	key := func(n string) contract.Key { return contract.Key{Partition: "acme", Sort: n} }
	item := func(k contract.Key, phase string, due time.Time) map[string]string {
		return map[string]string{"tenant": k.Partition, "job": k.Sort, "phase": phase, "runAt": contract.FormatTime(due)}
	}
	future, past := t0.Add(2*time.Hour), t0.Add(-time.Hour)
	for _, l := range timerkind.Names() {
		t.Run(string(l), func(t *testing.T) {
			c := clock.NewFake(t0)
			tm := inmem.NewTimer(l, c.Now, nil)
			if s, ok := tm.(*inmem.Scheduler); ok {
				s.ListPrefix = jobsSchema.ScheduleNamePrefix
			}
			items := inmem.NewItems(jobsSchema)
			put := func(attrs map[string]string) {
				if err := items.Put(attrs); err != nil {
					t.Fatal(err)
				}
			}
			sched := func(k contract.Key, due time.Time) contract.Schedule {
				it, _ := jobsSchema.ItemFrom(item(k, "Queued", due))
				return jobsSchema.ScheduleFor(it)
			}
			arm := func(s contract.Schedule) {
				if err := tm.Arm(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			put(item(key("missing"), "Queued", future))
			put(item(key("held"), "Held", future))
			put(item(key("misplaced"), "Queued", future))
			arm(sched(key("misplaced"), future.Add(time.Hour)))
			put(item(key("finished"), "Done", future))
			arm(sched(key("finished"), future))
			arm(sched(key("gone"), future))
			put(item(key("overdue"), "Queued", past))
			undelivered := item(key("undelivered"), "Started", past)
			undelivered[jobsSchema.ClaimAtAttr] = contract.FormatTime(past)
			put(undelivered)

			target := &recordingTarget{}
			core, err := fire.New(fire.Config{Schema: jobsSchema, Store: items, Now: c.Now})
			if err != nil {
				t.Fatal(err)
			}
			r, err := reconcile.New(reconcile.Config{}, reconcile.Deps{Schema: jobsSchema, Items: inmem.Armed{Items: items},
				Scheduler: tm, Schedules: tm, Firer: fire.Firing{Core: core, Target: target},
				Checkpoints: &memCheckpoints{}, Clock: c, Sleep: c.Sleep, Log: quiet})
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(ctx)
			if err != nil || !res.Completed || res.Errors != 0 {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			for _, n := range []string{"missing", "held", "misplaced"} {
				want := sched(key(n), future)
				if got, ok := tm.Lookup(want.Name); !ok || !got.At.Equal(want.At) || !got.Payload.Equal(want.Payload) {
					t.Errorf("%s: schedule %+v (%v), want at %s", n, got, ok, want.At)
				}
			}
			for _, n := range []string{"finished", "gone"} {
				if got, ok := tm.Lookup(sched(key(n), future).Name); ok {
					t.Errorf("%s: schedule %+v left", n, got)
				}
			}
			if got := fmt.Sprint(target.got); got != fmt.Sprint([]contract.Payload{
				{Key: key("overdue"), Due: past}, {Key: key("undelivered"), Due: past}}) {
				t.Errorf("delivered %s, want the overdue and the undelivered item once each", got)
			}
			again, err := r.Run(ctx)
			if err != nil || again.Repaired() != 0 || len(target.got) != 2 {
				t.Errorf("second pass = %+v, %v, %d deliveries: want nothing left to do", again, err, len(target.got))
			}
		})
	}
}

// TestRunStopsStaleExecutions: on the Step Functions timer an item may
// have an execution for an earlier due time beside its own (a move whose
// stop was lost); the pass stops the stale one and keeps the right one,
// and stops every execution of an item that is gone.
func TestRunStopsStaleExecutions(t *testing.T) {
	ctx := context.Background()
	c := clock.NewFake(t0)
	tm := inmem.NewExecutions(c.Now)
	items := inmem.NewItems(jobsSchema)
	due := t0.Add(2 * time.Hour)
	kept := contract.Key{Partition: "acme", Sort: "kept"}
	gone := contract.Key{Partition: "acme", Sort: "gone"}
	if err := items.Put(map[string]string{"tenant": "acme", "job": "kept", "phase": "Queued", "runAt": contract.FormatTime(due)}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []contract.Key{kept, gone} {
		for _, at := range []time.Time{due.Add(-time.Hour), due, due.Add(time.Hour)} {
			name := jobsSchema.ScheduleName(k)
			if err := tm.Arm(ctx, contract.Schedule{Name: name, At: at, Payload: contract.Payload{Key: k, Due: at}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	core, err := fire.New(fire.Config{Schema: jobsSchema, Store: items, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	r, err := reconcile.New(reconcile.Config{}, reconcile.Deps{Schema: jobsSchema, Items: inmem.Armed{Items: items},
		Scheduler: tm, Schedules: tm, Firer: fire.Firing{Core: core, Target: &recordingTarget{}},
		Checkpoints: &memCheckpoints{}, Clock: c, Sleep: c.Sleep, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := r.Run(ctx); err != nil || res.Errors != 0 || res.SchedulesDeleted != 5 {
		t.Fatalf("Run = %+v, %v: want the 2 stale and 3 orphan executions stopped", res, err)
	}
	want := []contract.Schedule{{Name: jobsSchema.ScheduleName(kept), At: due, Payload: contract.Payload{Key: kept, Due: due}}}
	if got := tm.All(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("running %+v, want only %+v", got, want)
	}
}
