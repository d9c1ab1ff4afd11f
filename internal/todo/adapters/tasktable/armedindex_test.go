package tasktable

import (
	"context"
	"slices"
	"testing"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/todo/todotest"
)

// The pending index read as an armed index (the core's
// dynamo.IndexedItems with tableschema.PendingArmedIndex, what the
// reconciler function runs) lists what the to-do app's own view lists,
// pages of any size, with the same confirmations; and its marks are the
// task store's (ScheduledFor, the repair mark).
func TestPendingIndexIsAnArmedIndex(t *testing.T) {
	ctx := context.Background()
	c, table := newTable(t)
	s := New(c, table)
	now := todotest.ContractTask("u", 0).DueAt
	var confirmed task.Task
	for i, leave := range []func(x task.Task) error{
		func(task.Task) error { return nil }, // pending
		func(x task.Task) error { // pending, its schedule confirmed
			confirmed = x
			return s.MarkScheduled(ctx, x.UserID, x.TaskID, x.DueAt)
		},
		func(x task.Task) error { // completed: not listed
			_, err := s.UpdatePending(ctx, x.UserID, x.TaskID, task.Patch{Complete: true}, now)
			return err
		},
		func(x task.Task) error { // expired, not notified
			_, err := s.Expire(ctx, x.UserID, x.TaskID, x.DueAt, now)
			return err
		},
		func(x task.Task) error { // expired and notified: not listed
			if _, err := s.Expire(ctx, x.UserID, x.TaskID, x.DueAt, now); err != nil {
				return err
			}
			return s.MarkNotified(ctx, x.UserID, x.TaskID, now)
		},
	} {
		x := todotest.ContractTask("u", i+1)
		if err := s.Create(ctx, x); err != nil {
			t.Fatal(err)
		}
		if err := leave(x); err != nil {
			t.Fatal(err)
		}
	}
	armed, err := dynamo.NewIndexedItems(c, table, tableschema.Todo(), tableschema.PendingArmedIndex(), nil)
	if err != nil {
		t.Fatal(err)
	}
	own := task.NewReconcileView(s, s)
	list := func(v reconcile.Items, limit int) []string {
		var out []string
		req := reconcile.ListRequest{Limit: limit}
		for range 100 {
			page, err := v.List(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				out = append(out, it.Key.String()+" confirmed="+map[bool]string{true: "y", false: "n"}[it.Confirmed()])
			}
			if req.Cursor = page.Cursor; page.Cursor == "" {
				break
			}
		}
		slices.Sort(out)
		return out
	}
	for _, limit := range []int{1, 2, 100} {
		if got, want := list(armed, limit), list(own, 100); !slices.Equal(got, want) || len(got) != 3 {
			t.Fatalf("limit %d: the armed index lists %v, the to-do view %v (want 3 tasks)", limit, got, want)
		}
	}
	k := contract.Key{Partition: confirmed.UserID, Sort: confirmed.TaskID}
	if err := armed.(reconcile.Marks).SetScheduleRepair(ctx, k, true); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, confirmed.UserID, confirmed.TaskID); err != nil || !got.ScheduleRepair {
		t.Fatalf("after SetScheduleRepair through the armed index: %+v, %v; want the task's repair mark", got, err)
	}
	if err := armed.(reconcile.Marks).MarkScheduled(ctx, k, confirmed.DueAt); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, confirmed.UserID, confirmed.TaskID); got.ScheduleRepair || !got.ScheduledFor.Equal(confirmed.DueAt) {
		t.Fatalf("after MarkScheduled through the armed index: %+v; want ScheduledFor and no repair mark", got)
	}
}
