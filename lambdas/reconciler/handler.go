package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// FunctionName is the Function dimension of this function's metrics.
const FunctionName = metrics.FunctionReconciler

// StopMargin is kept free at the end of an invocation, so the run stops
// and saves its checkpoint before Lambda's timeout ends it.
const StopMargin = 15 * time.Second

// config is what the function reads from its environment.
type config struct {
	Table  string
	Schema contract.Schema
	// Timer is the timer whose schedules the reconciler repairs.
	Timer timers.Config
	// Index is the armed index the armed items are listed from
	// (dynamo.IndexedItems); without one (HasIndex false) the table is
	// scanned (dynamo.ArmedItems).
	Index    armedindex.Spec
	HasIndex bool
	// Target is TARGET_FUNCTION_ARN: the adopter's target, which an
	// overdue item's firing runs exactly as the firing function does.
	Target string
	// FireFunction is FIRE_FUNCTION_ARN, instead of Target when the
	// target runs inside the firing function: an overdue item is fired
	// by invoking that function with its payload.
	FireFunction string
	// Lease is FIRE_LEASE_SECONDS, the firing function's: how long an
	// attempt holds the right to run the target (default
	// fire.DefaultLease). The same value on both functions keeps the
	// reconciler from taking over a delivery that is still running.
	Lease     time.Duration
	Reconcile reconcile.Config
}

// loadConfig reads the environment through getenv. GRACE_SEC, RATE_PER_SEC
// and BUDGET_SEC are optional (see reconcile.Config for defaults), and so
// is FIRE_LEASE_SECONDS; one of TARGET_FUNCTION_ARN and FIRE_FUNCTION_ARN
// is required.
func loadConfig(getenv func(string) string) (config, error) {
	e := lambdaenv.New(getenv)
	t, err := timers.Load(e, getenv)
	if err != nil {
		return config{}, err
	}
	c := config{
		Table:  e.Require(envvars.Table),
		Schema: e.Schema(),
		Timer:  t,
		// The target the firing function runs: a firing by the
		// reconciler delivers exactly as one by a schedule.
		Target:       e.Optional(envvars.TargetFunctionArn, ""),
		FireFunction: e.Optional(envvars.FireFunctionArn, ""),
		Lease:        time.Duration(e.Int(envvars.FireLeaseSeconds, int(fire.DefaultLease/time.Second), 1, 3600)) * time.Second,
	}
	// Unset means the reconcile package's default.
	c.Reconcile.Grace = time.Duration(e.Int(envvars.GraceSec, 0, 1, 86400)) * time.Second
	c.Reconcile.Budget = time.Duration(e.Int(envvars.BudgetSec, 0, 1, 900)) * time.Second
	c.Reconcile.RatePerSec = e.Float(envvars.RatePerSec, 0, 0, 1000)
	if err := e.Err(); err != nil {
		return c, err
	}
	if (c.Target == "") == (c.FireFunction == "") {
		return c, fmt.Errorf("configuration: set exactly one of %s (the target function an overdue item's firing runs) and %s "+
			"(the firing function that runs the target inside it)", envvars.TargetFunctionArn, envvars.FireFunctionArn)
	}
	c.Index, c.HasIndex, err = armedindex.Parse(getenv(envvars.ArmedIndex), c.Schema)
	if err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	return c, nil
}

type runner interface {
	Run(ctx context.Context) (reconcile.Result, error)
}

type counter interface {
	Flush() error
}

type handler struct {
	run     runner
	metrics counter
	log     *slog.Logger
	margin  time.Duration
}

// handle runs one reconciliation on a scheduled invocation. The run stops
// at its budget, or StopMargin before the invocation's deadline, whichever
// comes first, and resumes from its checkpoint on the next invocation. An
// error means the run could not go on (the checkpoint or a page read
// failed); repairs that failed one by one are only counted.
func (h *handler) handle(ctx context.Context, ev events.EventBridgeEvent) error {
	defer func() {
		if err := h.metrics.Flush(); err != nil {
			h.log.WarnContext(ctx, "writing metrics failed", "error", err)
		}
	}()
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-h.margin))
		defer cancel()
	}
	h.log.InfoContext(ctx, "scheduled reconciliation", "eventId", ev.ID, "time", ev.Time)
	if _, err := h.run.Run(ctx); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	return nil
}
