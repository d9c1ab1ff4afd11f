// Package campaigntimer builds, in the campaign functions that arm,
// move or disarm send schedules (provision, API, reconciler), the core
// timer the construct bound to the send tasks, as lambdas/reconciler and
// lambdas/cancelworker build theirs (internal/core/adapters/timers). Its own
// package, so the functions that never touch the timer link none of its
// SDK clients.
package campaigntimer

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
)

// Load reads the core timer the construct bound to the send tasks
// (timers.Load: UNSCHEDULE_TIMER and only that timer's variables, as the
// core's reconciler and cancellation worker read them), and checks that
// its item schema is campaign.TaskSchema: a timer of another schema
// would arm payloads the send function cannot read.
func Load(e *lambdaenv.Env, getenv func(string) string) (timers.Config, error) {
	c, err := timers.Load(e, getenv)
	if err != nil || e.Err() != nil {
		return c, err
	}
	if want := campaign.TaskSchema.WithDefaults().EnvValue(); c.Schema.WithDefaults().EnvValue() != want {
		return c, fmt.Errorf("configuration: %s is not the campaign send tasks' schema: set it to %s", envvars.ItemSchema, want)
	}
	return c, nil
}

// New builds the timer's adapter with the SDK's own retries off:
// the core's paced caller owns the retries (throttles backed off and
// retried, other errors a bounded number of times), so a call is never
// retried twice over and the SDK's client-side retry quota never fails
// one mid-campaign.
func New(cfg aws.Config, c timers.Config) (campaign.Timer, error) {
	one := cfg.Copy()
	one.Retryer = func() aws.Retryer { return aws.NopRetryer{} }
	return timers.New(one, c)
}
