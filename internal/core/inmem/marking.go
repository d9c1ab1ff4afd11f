package inmem

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// Marking is the reconciler's view through an armed index that records
// confirmations (Index set, armedindex.Spec.Marks), as
// dynamo.NewIndexedItems gives it for such a spec: the Armed listing,
// whose items carry what the adapter reads besides the contract (FiredAt,
// and the marks ScheduledFor, Updated and Repair); a reconcile.Marks,
// whose writes are the adapter's conditional ones; and a
// reconcile.Counter.
type Marking struct{ Armed }

var (
	_ reconcile.Items   = Marking{}
	_ reconcile.Marks   = Marking{}
	_ reconcile.Counter = Marking{}
)

// List implements reconcile.Items.
func (m Marking) List(ctx context.Context, req reconcile.ListRequest) (reconcile.ItemPage, error) {
	page, err := m.Armed.List(ctx, req)
	for i, it := range page.Items {
		page.Items[i] = m.marked(it)
	}
	return page, err
}

// Get implements reconcile.Items.
func (m Marking) Get(ctx context.Context, k contract.Key) (reconcile.Item, error) {
	it, err := m.Armed.Get(ctx, k)
	if err != nil {
		return it, err
	}
	return m.marked(it), nil
}

// marked is it with the attributes the adapter reads besides the
// contract's.
func (m Marking) marked(it reconcile.Item) reconcile.Item {
	attrs, _ := m.Items.Attrs(it.Key)
	it.FiredAt, _ = contract.ParseTime(attrs[m.Items.schema.FiredAtAttr])
	it.ScheduledFor, _ = contract.ParseTime(attrs[m.Index.ConfirmedAttr])
	it.Updated, _ = contract.ParseTime(attrs[m.Index.UpdatedAttr])
	it.Repair = attrs[m.Index.RepairAttr] == "true"
	return it
}

// Count implements reconcile.Counter: how many items List gives from
// req.Cursor on.
func (m Marking) Count(ctx context.Context, req reconcile.ListRequest) (int, error) {
	n := 0
	for {
		page, err := m.Armed.List(ctx, req)
		if err != nil {
			return 0, err
		}
		n += len(page.Items)
		if page.Cursor == "" {
			return n, nil
		}
		req.Cursor = page.Cursor
	}
}

// MarkScheduled implements reconcile.Marks: only while the item is armed
// with that due time, it records due as confirmed and clears the repair
// mark; fire.ErrConditionFailed otherwise (a missing item included).
func (m Marking) MarkScheduled(_ context.Context, k contract.Key, due time.Time) error {
	s := m.Items.schema
	return m.Items.update("MarkScheduled", k, func(it contract.Item) bool {
		return slices.Contains(s.ArmedStates, it.State) && it.Due.Equal(due)
	}, map[string]string{m.Index.ConfirmedAttr: contract.FormatTime(due)}, m.Index.RepairAttr)
}

// SetScheduleRepair implements reconcile.Marks (only on an item that
// exists).
func (m Marking) SetScheduleRepair(_ context.Context, k contract.Key, repair bool) error {
	exists := func(contract.Item) bool { return true }
	if repair {
		return m.Items.update("SetScheduleRepair", k, exists, map[string]string{m.Index.RepairAttr: "true"})
	}
	return m.Items.update("SetScheduleRepair", k, exists, nil, m.Index.RepairAttr)
}

// update is a conditional UpdateItem: when ok holds for the item, set
// and remove its attributes and record the change (none when nothing
// changed, as a stream writes no record for it); ErrConditionFailed
// otherwise (a missing item included).
func (s *Items) update(op string, k contract.Key, ok func(contract.Item) bool, set map[string]string, remove ...string) error {
	_, _, err := CondPut(&s.mu, s.Fail, op, s.items, k,
		func(cur map[string]string, found bool) error {
			if !found || !ok(*s.image(cur)) {
				return fire.ErrConditionFailed
			}
			return nil
		},
		func(cur map[string]string) map[string]string {
			nw := maps.Clone(cur)
			maps.Copy(nw, set)
			for _, name := range remove {
				delete(nw, name)
			}
			for _, name := range append(slices.Collect(maps.Keys(set)), remove...) {
				delete(s.nums[k], name)
			}
			return nw
		},
		func(old map[string]string, _ bool, nw map[string]string) {
			if !maps.Equal(old, nw) {
				s.record(changefeed.Modify, k, old, nw)
			}
		})
	return err
}
