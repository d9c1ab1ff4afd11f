package reconciler

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/asyncinvoke"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/contract"
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
		panic(fmt.Sprintf("%s: props are required: Table, Timer and Core", id))
	}
	p := *props
	sec := func(d awscdk.Duration, def float64) awscdk.Duration {
		return propcheck.DurationOr(d, awscdk.Duration_Seconds(jsii.Number(def)))
	}
	p.Every = sec(p.Every, DefaultEveryMinutes*60)
	every := *p.Every.ToSeconds(nil)
	p.Grace = sec(p.Grace, DefaultGraceSec)
	p.RatePerSec = propcheck.Or(p.RatePerSec, DefaultRatePerSec)
	// A run must end before the next one starts: with a short interval
	// the default budget is half of it.
	p.Budget = sec(p.Budget, math.Min(DefaultBudgetSec, math.Floor(every/2)))
	p.RepairAlarmThreshold = propcheck.Or(p.RepairAlarmThreshold, DefaultRepairAlarmThreshold)
	if p.FailureQueueRemovalPolicy == "" {
		p.FailureQueueRemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	p.AsyncMaxEventAge = sec(p.AsyncMaxEventAge, math.Min(math.Max(every, asyncinvoke.MinMaxEventAgeSec), asyncinvoke.MaxMaxEventAgeSec))
	p.AsyncRetryAttempts = jsii.Number(propcheck.Number(p.AsyncRetryAttempts, 0))
	if src, ok := p.Core.(interface{ Schema() contract.Schema }); ok && reflect.DeepEqual(p.Schema, contract.Schema{}) {
		p.Schema = src.Schema()
	}
	p.Schema = propcheck.Schema(p.Schema)
	if p.ArmedIndex != nil {
		x := p.ArmedIndex.WithDefaults(p.Schema)
		p.ArmedIndex = &x
	}
	return p
}

// validateExisting panics when ExistingFunction comes with a prop that
// configures the core's own entry, which that function does not read.
func validateExisting(id string, p *ReconcilerProps) {
	if p == nil || p.ExistingFunction == nil {
		return
	}
	for _, prop := range []struct {
		name string
		set  bool
	}{{"Grace", p.Grace != nil}, {"RatePerSec", p.RatePerSec != 0}, {"Budget", p.Budget != nil},
		{"ArmedIndex", p.ArmedIndex != nil}, {"RepairAlarmThreshold", p.RepairAlarmThreshold != 0}} {
		if prop.set {
			panic(fmt.Sprintf("%s: %s configures the core's reconciler function, and ExistingFunction is set: "+
				"configure your own function instead (its environment), or leave ExistingFunction unset", id, prop.name))
		}
	}
}

// validate panics with a message that names the prop, shows the bad value
// and says how to fix it. Unresolved tokens are not checked.
func validate(id string, p ReconcilerProps) {
	switch {
	case p.Table == nil:
		panic(fmt.Sprintf("%s: Table is required: pass the schedule-on-write table to reconcile", id))
	case p.Timer == nil:
		panic(fmt.Sprintf("%s: Timer is required: pass the timer of the table's schedule-on-write construct (its Timer field)", id))
	case p.Core == nil:
		panic(fmt.Sprintf("%s: Core is required: pass the table's ScheduleOnWrite (the reconciler fires overdue items through its claim and Target)", id))
	}
	if x := p.ArmedIndex; x != nil {
		if err := x.Validate(p.Schema); err != nil {
			panic(fmt.Sprintf("%s: ArmedIndex: %v", id, err))
		}
		if info := resource.InspectTable(p.Table); info.Known && !slices.Contains(info.GlobalIndexes, x.Name) {
			panic(fmt.Sprintf("%s: Table %s has no global secondary index %q, which ArmedIndex names: add it "+
				"(scheduleonwrite.AddArmedIndex(table, schema) adds the default one), or leave ArmedIndex unset to scan the table",
				id, *p.Table.Node().Path(), x.Name))
		}
	}
	propcheck.Exclusive(id, "ExistingFailureQueue", p.ExistingFailureQueue != nil, "FailureQueueProps", p.FailureQueueProps != nil)
	every := *p.Every.ToSeconds(nil)
	if !*awscdk.Token_IsUnresolved(every) && math.Mod(every, 60) != 0 {
		panic(fmt.Sprintf("%s: Every must be a whole number of minutes (given %v s): use awscdk.Duration_Minutes", id, every))
	}
	propcheck.CheckWhole(id, "Every", every/60, 1, 1440, "minutes between runs")
	propcheck.CheckSeconds(id, "Grace", p.Grace, 1, 86400, "time past a deadline before the reconciler expires the task")
	propcheck.CheckSeconds(id, "Budget", p.Budget, 10, maxBudgetSec, "work per run; the timeout is this plus 60 seconds")
	budget := *p.Budget.ToSeconds(nil)
	propcheck.CheckWhole(id, "RepairAlarmThreshold", p.RepairAlarmThreshold, 1, 1e9, "repairs per run")
	asyncinvoke.Validate(id, "Async", *p.AsyncMaxEventAge.ToSeconds(nil), *p.AsyncRetryAttempts)
	if !*awscdk.Token_IsUnresolved(p.RatePerSec) && (p.RatePerSec <= 0 || p.RatePerSec > 1000) {
		panic(fmt.Sprintf("%s: RatePerSec must be above 0 and at most 1000 (given %v): set it below the account's Scheduler request-rate quotas",
			id, p.RatePerSec))
	}
	if !*awscdk.Token_IsUnresolved(budget) && !*awscdk.Token_IsUnresolved(every) && budget >= every {
		panic(fmt.Sprintf("%s: Budget (given %v s) must be shorter than the interval between runs (Every %v s): lower Budget or raise Every",
			id, budget, every))
	}
}
