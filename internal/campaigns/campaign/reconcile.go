package campaign

import (
	"errors"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer/paced"
)

// DefaultReconcileCallsPerSecond paces the reconciler's timer calls
// (the lowest documented EventBridge Scheduler API rate quota:
// paced.DefaultCallsPerSecond).
const DefaultReconcileCallsPerSecond = paced.DefaultCallsPerSecond

// ReconcilePorts are what the core reconciler needs to repair send
// tasks. Checkpoints, Caller, Metrics and Log are optional.
type ReconcilePorts struct {
	Tasks     Tasks
	Campaigns Campaigns
	// Timer holds the tasks' schedules (any core timer).
	Timer Timer
	// Sender is read for receipts only.
	Sender Sender
	// Owners says whether a campaign's owner is still a sender: a pass
	// cancels the campaigns of one who is not (Repair).
	Owners SenderCheck
	// Dispatcher hands an overdue task to the send function.
	Dispatcher Dispatcher
	Clock      Clock
	// Caller paces the timer calls and retries throttles; nil: one
	// try each (the reconciler's own rate limit still paces them).
	Caller *paced.Caller
	// Checkpoints default to one kept in memory (a warm function's).
	Checkpoints reconcile.Checkpoints
	Metrics     *metrics.Recorder
	Log         *slog.Logger
}

// NewReconciler is the core reconciler (internal/core/reconcile) over
// the send tasks (Items, TaskSchema), their schedules on the core's timer and
// the send function (DispatchFirer), with the campaign's rules (Repair,
// returned for its counts). cfg.Grace defaults to RepairGrace, cfg.StaleAfter
// to a minute (the claims' leases decide).
func NewReconciler(cfg reconcile.Config, rules *Repair, p ReconcilePorts) (*reconcile.Reconciler, error) {
	cfg, d, err := ReconcileDeps(cfg, rules, p)
	if err != nil {
		return nil, err
	}
	return reconcile.New(cfg, d)
}

// ReconcileDeps is NewReconciler's configuration and collaborators, for
// a caller that plans a pass rather than runs it (cmd/unschedule's why
// and drift, through reconcile.PlanWithPolicy).
func ReconcileDeps(cfg reconcile.Config, rules *Repair, p ReconcilePorts) (reconcile.Config, reconcile.Deps, error) {
	if p.Tasks == nil || p.Campaigns == nil || p.Timer == nil || p.Sender == nil || p.Owners == nil || p.Dispatcher == nil || p.Clock == nil || rules == nil {
		return cfg, reconcile.Deps{}, errors.New("campaign reconciler: tasks, campaigns, timer, sender, owners, dispatcher, clock and rules are required")
	}
	if cfg.Grace <= 0 {
		cfg.Grace = RepairGrace
	}
	if cfg.StaleAfter <= 0 {
		// Repair asks each claim's lease (Stale): a Running task is
		// recovered once its lease has passed, not a Grace later.
		cfg.StaleAfter = time.Minute
	}
	if p.Checkpoints == nil {
		return cfg, reconcile.Deps{}, errors.New("campaign: ReconcilePorts.Checkpoints is nil: give the reconciler a checkpoint store " +
			"(internal/core/adapters/checkpoint on the campaign table), so a pass cut short resumes where it stopped")
	}
	rules.Tasks, rules.Campaigns, rules.Sender, rules.Owners, rules.Clock = p.Tasks, p.Campaigns, p.Sender, p.Owners, p.Clock
	tm := Paced(p.Caller, p.Timer)
	return cfg, reconcile.Deps{
		Schema: TaskSchema, Items: Items{Tasks: p.Tasks}, Scheduler: tm, Schedules: tm,
		Firer: DispatchFirer{Dispatcher: p.Dispatcher}, Policy: rules, Checkpoints: p.Checkpoints,
		Clock: p.Clock, Sleep: p.Clock.Sleep, Metrics: p.Metrics, Log: p.Log,
	}, nil
}
