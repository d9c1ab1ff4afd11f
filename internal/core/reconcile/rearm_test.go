package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// TestPassesAfterRearmKeepOneExecution: on the Step Functions timer, an
// item cancelled and armed again for the same due time runs a restart of
// its stopped execution. Every reconciler pass until the due time must
// find that restart (Get follows the chain) and start no other: one
// running execution, whatever the number of passes, and as many after
// another cancel and re-arm of the same due time.
func TestPassesAfterRearmKeepOneExecution(t *testing.T) {
	ctx := context.Background()
	k := contract.Key{Partition: "acme", Sort: "rearmed"}
	due := t0.Add(48 * time.Hour)
	name := jobsSchema.ScheduleName(k)
	s := contract.Schedule{Name: name, At: due, Payload: contract.Payload{Key: k, Due: due}}
	for _, tc := range []struct {
		name    string
		rearms  int // cancel and arm again, each before the passes
		passes  int
		wantRun int
	}{
		{"armed, no cancel", 0, 10, 1},
		{"cancelled and armed again", 1, 10, 1},
		{"cancelled and armed again twice", 2, 10, 1},
		{"one pass", 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clock.NewFake(t0)
			tm := inmem.NewExecutions(c.Now)
			items := inmem.NewItems(jobsSchema)
			if err := items.Put(map[string]string{"tenant": k.Partition, "job": k.Sort, "phase": "Queued",
				"runAt": contract.FormatTime(due)}); err != nil {
				t.Fatal(err)
			}
			if err := tm.Arm(ctx, s); err != nil {
				t.Fatal(err)
			}
			for range tc.rearms {
				c.Advance(time.Minute)
				if err := tm.Disarm(ctx, name, due); err != nil {
					t.Fatalf("cancel: %v", err)
				}
				c.Advance(time.Minute)
				if err := tm.Arm(ctx, s); err != nil {
					t.Fatalf("re-arm: %v", err)
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
			for i := range tc.passes {
				c.Advance(30 * time.Minute) // the reconciler's period
				res, err := r.Run(ctx)
				if err != nil || res.Errors != 0 {
					t.Fatalf("pass %d = %+v, %v", i, res, err)
				}
				if run := tm.Running(name); len(run) != tc.wantRun {
					t.Fatalf("after pass %d: %d running executions %v; want %d", i, len(run), keys(run), tc.wantRun)
				}
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
