package inmem

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// Armed is the reconciler's view of an Items table (reconcile.Items), as
// the DynamoDB adapter's Scan gives it: every armed item and every fired
// one whose delivery is not recorded, in the order of their keys' strings; DueBy keeps the
// armed items due by then (compared as instants, as the adapter does
// after reading) and the fired ones.
//
// With Index set it is the view through that armed index
// (dynamo.IndexedItems): only the items the index holds are listed (a
// state-keyed index's fired partition only within its window), never one
// DynamoDB's index would not hold. It does not lag behind the table as a
// GSI may, which only makes DynamoDB's listing staler, never wider.
type Armed struct {
	Items *Items
	// Index, when set, is the armed index the listing reads (defaults
	// filled for the table's schema).
	Index *armedindex.Spec
	// Now is the clock of a state-keyed index's fired window (nil: the
	// wall clock).
	Now func() time.Time
}

var _ reconcile.Items = Armed{}

// List implements reconcile.Items. The cursor is the last key listed.
func (a Armed) List(_ context.Context, req reconcile.ListRequest) (reconcile.ItemPage, error) {
	s := a.Items
	if err := s.fail("List"); err != nil {
		return reconcile.ItemPage{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]contract.Key, 0, len(s.items))
	for k := range s.items {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y contract.Key) int { return cmp.Compare(x.String(), y.String()) })
	now := time.Now()
	if a.Now != nil {
		now = a.Now()
	}
	limit := req.Limit
	if limit <= 0 {
		limit = reconcile.DefaultPageSize
	}
	var page reconcile.ItemPage
	for _, k := range keys {
		if req.Cursor != "" && k.String() <= req.Cursor {
			continue
		}
		if len(page.Items) == limit {
			page.Cursor = page.Items[len(page.Items)-1].Key.String()
			return page, nil
		}
		if a.Index != nil && !a.Index.Holds(s.schema, s.items[k], now) {
			continue
		}
		it, _ := s.schema.ItemFrom(s.items[k])
		fired := it.State == s.schema.FiredState && !it.Delivered
		armed := s.schema.Armed(it) && (req.DueBy.IsZero() || !it.Due.After(req.DueBy))
		if fired || armed {
			page.Items = append(page.Items, reconcile.Item{Item: it})
		}
	}
	return page, nil
}

// Get implements reconcile.Items.
func (a Armed) Get(ctx context.Context, k contract.Key) (reconcile.Item, error) {
	it, found, err := a.Items.Get(ctx, k)
	if err != nil {
		return reconcile.Item{}, err
	}
	if !found {
		return reconcile.Item{}, reconcile.ErrItemNotFound
	}
	return reconcile.Item{Item: it}, nil
}
