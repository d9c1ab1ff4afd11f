package inmem_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

// The marking view writes its marks as dynamo's does: a confirmation
// only on an item armed with that due time, a repair mark only on an
// item that exists; and it reads them back with the item.
func TestMarking(t *testing.T) {
	ctx := context.Background()
	s := timertest.Schema
	x := armedindex.Spec{ConfirmedAttr: "scheduledFor", RepairAttr: "scheduleRepair", UpdatedAttr: "updatedAt"}.WithDefaults(s)
	due := timertest.T0
	k := contract.Key{Partition: "p", Sort: "s"}
	item := func(state string, at time.Time, extra map[string]string) map[string]string {
		a := map[string]string{s.PartitionKey: k.Partition, s.SortKey: k.Sort, s.StateAttr: state, s.DueAttr: contract.FormatTime(at)}
		for n, v := range extra {
			a[n] = v
		}
		return a
	}
	repair := map[string]string{x.RepairAttr: "true"}
	for _, tc := range []struct {
		name    string
		stored  map[string]string // nil: no item
		op      func(m inmem.Marking) error
		wantErr error
		want    func(it reconcile.Item) bool // the item after
	}{
		{"confirm an armed item at its due time: confirmed, repair mark cleared", item("Pending", due, repair),
			func(m inmem.Marking) error { return m.MarkScheduled(ctx, k, due) }, nil,
			func(it reconcile.Item) bool { return it.Confirmed() && !it.Repair && it.ScheduledFor.Equal(due) }},
		{"confirm another due time: refused", item("Pending", due, nil),
			func(m inmem.Marking) error { return m.MarkScheduled(ctx, k, due.Add(time.Hour)) }, fire.ErrConditionFailed,
			func(it reconcile.Item) bool { return it.ScheduledFor.IsZero() }},
		{"confirm an item no longer armed: refused", item("Done", due, nil),
			func(m inmem.Marking) error { return m.MarkScheduled(ctx, k, due) }, fire.ErrConditionFailed,
			func(it reconcile.Item) bool { return it.ScheduledFor.IsZero() }},
		{"confirm a missing item: refused", nil,
			func(m inmem.Marking) error { return m.MarkScheduled(ctx, k, due) }, fire.ErrConditionFailed, nil},
		{"mark for repair", item("Pending", due, nil),
			func(m inmem.Marking) error { return m.SetScheduleRepair(ctx, k, true) }, nil,
			func(it reconcile.Item) bool { return it.Repair && !it.Confirmed() }},
		{"clear the repair mark", item("Pending", due, repair),
			func(m inmem.Marking) error { return m.SetScheduleRepair(ctx, k, false) }, nil,
			func(it reconcile.Item) bool { return !it.Repair }},
		{"mark a missing item: refused, nothing written", nil,
			func(m inmem.Marking) error { return m.SetScheduleRepair(ctx, k, true) }, fire.ErrConditionFailed, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := inmem.NewItems(s)
			if tc.stored != nil {
				if err := items.Put(tc.stored); err != nil {
					t.Fatal(err)
				}
			}
			m := inmem.Marking{Armed: inmem.Armed{Items: items, Index: &x, Now: func() time.Time { return due }}}
			if err := tc.op(m); !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			it, err := m.Get(ctx, k)
			if tc.want == nil {
				if !errors.Is(err, reconcile.ErrItemNotFound) {
					t.Fatalf("item %+v, %v: want none", it, err)
				}
				return
			}
			if err != nil || !tc.want(it) {
				t.Fatalf("item after %+v, %v", it, err)
			}
			page, err := m.List(ctx, reconcile.ListRequest{})
			if err != nil {
				t.Fatal(err)
			}
			n, err := m.Count(ctx, reconcile.ListRequest{})
			if err != nil || n != len(page.Items) {
				t.Fatalf("count %d, %v; listed %d", n, err, len(page.Items))
			}
			for _, l := range page.Items {
				if l != it {
					t.Fatalf("listed %+v, read %+v: want the same marks", l, it)
				}
			}
		})
	}
}
