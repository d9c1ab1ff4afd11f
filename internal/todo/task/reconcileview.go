package task

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// PendingCounter counts what ListPending would list from req.Cursor on,
// without reading the tasks (the DynamoDB and in-memory stores do).
type PendingCounter interface {
	CountPending(ctx context.Context, req PendingRequest) (int, error)
}

// ReconcileView is the task table as the core's reconciler reads it: the
// sharded pending index lists the armed tasks and the expired ones not
// yet notified, and the table records confirmed schedules (ScheduledFor)
// and repair marks, so a pass calls the timer only for what drifted.
type ReconcileView struct {
	store   Store
	pending PendingLister
}

// countingView is a ReconcileView whose lister counts.
type countingView struct {
	ReconcileView
	counter PendingCounter
}

var (
	_ reconcile.Items   = ReconcileView{}
	_ reconcile.Marks   = ReconcileView{}
	_ reconcile.Counter = countingView{}
)

// NewReconcileView returns the reconciler's view of the tasks in store,
// listed by pending; a reconcile.Counter too when pending counts.
func NewReconcileView(store Store, pending PendingLister) reconcile.Items {
	v := ReconcileView{store: store, pending: pending}
	if c, ok := pending.(PendingCounter); ok {
		return countingView{ReconcileView: v, counter: c}
	}
	return v
}

// ReconcileItem is a task as the reconciler reads it.
func ReconcileItem(t Task) reconcile.Item {
	return reconcile.Item{Item: t.Item(), FiredAt: t.ExpiredAt, Updated: t.UpdatedAt,
		ScheduledFor: t.ScheduledFor, Repair: t.ScheduleRepair}
}

// List implements reconcile.Items with ListPending.
func (v ReconcileView) List(ctx context.Context, req reconcile.ListRequest) (reconcile.ItemPage, error) {
	page, err := v.pending.ListPending(ctx, PendingRequest{Cursor: req.Cursor, Limit: req.Limit, DueBy: req.DueBy})
	if err != nil {
		return reconcile.ItemPage{}, err
	}
	out := reconcile.ItemPage{Items: make([]reconcile.Item, len(page.Tasks)), Cursor: page.Cursor}
	for i, t := range page.Tasks {
		out.Items[i] = ReconcileItem(t)
	}
	return out, nil
}

// Get implements reconcile.Items.
func (v ReconcileView) Get(ctx context.Context, k contract.Key) (reconcile.Item, error) {
	t, err := v.store.Get(ctx, k.Partition, k.Sort)
	if errors.Is(err, ErrNotFound) {
		return reconcile.Item{}, fmt.Errorf("%w: %w", reconcile.ErrItemNotFound, err)
	}
	if err != nil {
		return reconcile.Item{}, err
	}
	return ReconcileItem(t), nil
}

// MarkScheduled implements reconcile.Marks.
func (v ReconcileView) MarkScheduled(ctx context.Context, k contract.Key, due time.Time) error {
	return v.store.MarkScheduled(ctx, k.Partition, k.Sort, due)
}

// SetScheduleRepair implements reconcile.Marks.
func (v ReconcileView) SetScheduleRepair(ctx context.Context, k contract.Key, repair bool) error {
	return v.store.SetScheduleRepair(ctx, k.Partition, k.Sort, repair)
}

// Count implements reconcile.Counter.
func (v countingView) Count(ctx context.Context, req reconcile.ListRequest) (int, error) {
	return v.counter.CountPending(ctx, PendingRequest{Cursor: req.Cursor, Limit: req.Limit, DueBy: req.DueBy})
}

// Expirer is the expiry use case as the reconciler calls it (*Firer; the
// simulation wraps it).
type Expirer interface {
	Expire(ctx context.Context, req ExpireRequest) (ExpireOutcome, error)
}

// FireByExpire is an Expirer as a firer of payloads (reconcile.Firer).
type FireByExpire struct{ Expirer Expirer }

var fireOutcomes = map[ExpireOutcome]fire.Outcome{Expired: fire.Fired, Renotified: fire.Redelivered, Skipped: fire.Skipped}

// Fire implements reconcile.Firer.
func (f FireByExpire) Fire(ctx context.Context, p contract.Payload) (fire.Outcome, error) {
	out, err := f.Expirer.Expire(ctx, ExpireRequest{UserID: p.Key.Partition, TaskID: p.Key.Sort, DueAt: p.Due})
	if err != nil {
		return "", err
	}
	return fireOutcomes[out], nil
}
