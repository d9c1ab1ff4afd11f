package reconciler

import (
	"fmt"
	"math"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/unschedule/unschedule/constructs/internal/asyncinvoke"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
)

// Defaults of ReconcilerProps, in one place.
const (
	DefaultEveryMinutes         = 30
	DefaultGraceSec             = 300
	DefaultRatePerSec           = 10
	DefaultBudgetSec            = 240
	DefaultRepairAlarmThreshold = 10
)

// TimeoutMarginSec is added to the budget to make the function's timeout.
// The handler stops StopMargin (15 s) before the invocation's deadline, so
// a run that overshoots its budget on a slow call still saves its
// checkpoint before Lambda ends it.
const TimeoutMarginSec = 60

// maxBudgetSec keeps the timeout within Lambda's 900 seconds.
const maxBudgetSec = 900 - TimeoutMarginSec

func withDefaults(id string, props *ReconcilerProps) ReconcilerProps {
	if props == nil {
		panic(fmt.Sprintf("%s: props are required: Table, Schedules and Notifications", id))
	}
	p := *props
	p.EveryMinutes = propcheck.OrDefault(p.EveryMinutes, DefaultEveryMinutes)
	p.GraceSec = propcheck.OrDefault(p.GraceSec, DefaultGraceSec)
	p.RatePerSec = propcheck.OrDefault(p.RatePerSec, DefaultRatePerSec)
	// A run must end before the next one starts: with a short interval
	// the default budget is half of it.
	p.BudgetSec = propcheck.OrDefault(p.BudgetSec, math.Min(DefaultBudgetSec, math.Floor(p.EveryMinutes*60/2)))
	p.RepairAlarmThreshold = propcheck.OrDefault(p.RepairAlarmThreshold, DefaultRepairAlarmThreshold)
	if p.FailureQueueRemovalPolicy == "" {
		p.FailureQueueRemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	p.AsyncMaxEventAgeSec = propcheck.OrDefault(p.AsyncMaxEventAgeSec,
		math.Min(math.Max(p.EveryMinutes*60, asyncinvoke.MinMaxEventAgeSec), asyncinvoke.MaxMaxEventAgeSec))
	return p
}

// validate panics with a message that names the prop, shows the bad value
// and says how to fix it. Unresolved tokens are not checked.
func validate(id string, p ReconcilerProps) {
	switch {
	case p.Table == nil:
		panic(fmt.Sprintf("%s: Table is required: pass the schedule-on-write table to reconcile", id))
	case p.Schedules == nil:
		panic(fmt.Sprintf("%s: Schedules is required: pass the schedule-on-write construct that owns the table's schedules", id))
	case p.Notifications == nil:
		panic(fmt.Sprintf("%s: Notifications is required: pass where expiry notifications go (notifications.NewUserNotifications)", id))
	}
	propcheck.CheckWhole(id, "EveryMinutes", p.EveryMinutes, 1, 1440, "minutes between runs")
	propcheck.CheckWhole(id, "GraceSec", p.GraceSec, 1, 86400, "seconds past a deadline before the reconciler expires the task")
	propcheck.CheckWhole(id, "BudgetSec", p.BudgetSec, 10, maxBudgetSec, "seconds of work per run; the timeout is this plus 60")
	propcheck.CheckWhole(id, "RepairAlarmThreshold", p.RepairAlarmThreshold, 1, 1e9, "repairs per run")
	asyncinvoke.Validate(id, "Async", p.AsyncMaxEventAgeSec, p.AsyncRetryAttempts)
	if !*awscdk.Token_IsUnresolved(p.RatePerSec) && (p.RatePerSec <= 0 || p.RatePerSec > 1000) {
		panic(fmt.Sprintf("%s: RatePerSec must be above 0 and at most 1000 (given %v): set it below the account's Scheduler request-rate quotas",
			id, p.RatePerSec))
	}
	if !*awscdk.Token_IsUnresolved(p.BudgetSec) && !*awscdk.Token_IsUnresolved(p.EveryMinutes) && p.BudgetSec >= p.EveryMinutes*60 {
		panic(fmt.Sprintf("%s: BudgetSec (given %v) must be shorter than the interval between runs (EveryMinutes %v = %v s): lower BudgetSec or raise EveryMinutes",
			id, p.BudgetSec, p.EveryMinutes, p.EveryMinutes*60))
	}
}
