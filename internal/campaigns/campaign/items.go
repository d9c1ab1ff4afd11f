package campaign

import (
	"context"
	"errors"
	"fmt"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// Items is the send tasks as the core's reconciler reads items
// (reconcile.Items, under TaskSchema): the open tasks (Pending, armed;
// Running, claimed and not sent) of every campaign, from the sparse open
// index.
type Items struct{ Tasks Tasks }

var _ reconcile.Items = Items{}

// List implements reconcile.Items: one page of the open tasks; with
// DueBy, only those whose send time is at or before it (the page may
// then hold fewer than Limit, and a cursor still follows).
func (v Items) List(ctx context.Context, req reconcile.ListRequest) (reconcile.ItemPage, error) {
	page, next, err := v.Tasks.Open(ctx, req.Cursor, req.Limit)
	if err != nil {
		return reconcile.ItemPage{}, fmt.Errorf("list open tasks: %w", err)
	}
	out := reconcile.ItemPage{Cursor: next, Items: make([]reconcile.Item, 0, len(page))}
	for _, t := range page {
		if !req.DueBy.IsZero() && t.SendAt.After(req.DueBy) {
			continue
		}
		out.Items = append(out.Items, ReconcileItem(t))
	}
	return out, nil
}

// Get implements reconcile.Items (a consistent read).
func (v Items) Get(ctx context.Context, k contract.Key) (reconcile.Item, error) {
	tk, err := KeyOf(k)
	if err != nil {
		return reconcile.Item{}, err
	}
	t, err := v.Tasks.Get(ctx, tk)
	if errors.Is(err, ErrNotFound) {
		return reconcile.Item{}, fmt.Errorf("task %s: %w", tk.TaskID, reconcile.ErrItemNotFound)
	}
	if err != nil {
		return reconcile.Item{}, err
	}
	return ReconcileItem(t), nil
}

// ReconcileItem is the reconciler's view of a task: the contract's, the
// claim as the firing time, and its last change.
func ReconcileItem(t SendTask) reconcile.Item {
	return reconcile.Item{Item: t.Item(), FiredAt: t.ClaimedAt, Updated: t.UpdatedAt}
}
