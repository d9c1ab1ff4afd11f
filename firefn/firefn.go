// Package firefn is the firing function of constructs/scheduleonwrite as
// a library: what every timer invokes at an item's due time. It claims
// the item (the contract's conditional write), runs the target with the
// item's payload only when the claim succeeded, and records the delivery
// once the target succeeded; a target error leaves the claim to a retry.
//
// The core's own firing function (lambdas/fire) calls Start(nil): its
// target is another function, TARGET_FUNCTION_ARN, invoked synchronously.
// An adopter whose target is Go code runs it in the firing function, one
// function rather than two: its main calls Start with its target, and
// ScheduleOnWriteProps.FireEntry names that package.
//
//	func main() {
//		jobs := newJobRunner() // your clients, built once per cold start
//		firefn.Start(firefn.TargetFunc(jobs.Run))
//	}
//
// Environment (set by the construct): TABLE_NAME, UNSCHEDULE_ITEM_SCHEMA
// (contract.EnvVar), FIRE_LEASE_SECONDS (optional); TARGET_FUNCTION_ARN
// for Start(nil).
package firefn

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/awslambda"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/lambdaenv/awsenv"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

// Target runs at an item's due time, after the claim succeeded, with the
// item's payload (for a reminder, p.Remind is set). An error means the
// target did not run, or may not have: nothing is recorded, the
// invocation fails and the firing is retried (its claim is taken over
// once the delivery lease lapses). Return nil for what a retry cannot
// mend (say, an item your rules no longer want delivered).
type Target interface {
	Deliver(ctx context.Context, p contract.Payload) error
}

// TargetFunc adapts a function to Target.
type TargetFunc func(ctx context.Context, p contract.Payload) error

// Deliver implements Target.
func (f TargetFunc) Deliver(ctx context.Context, p contract.Payload) error { return f(ctx, p) }

var _ fire.Deliverer = Target(nil)

// Start reads the environment, builds the clients once per cold start and
// serves the firing function's invocations (lambda.Start): it never
// returns, and exits on a configuration error. With target nil, the
// target is the function TARGET_FUNCTION_ARN names, invoked with the
// payload (RequestResponse); with a target, that runs in this process and
// TARGET_FUNCTION_ARN must be unset.
func Start(target Target) {
	log := lambdaenv.Logger()
	c := lambdaenv.Must(loadConfig(os.Getenv, target != nil))
	aws := lambdaenv.Must(awsenv.Config(context.Background()))
	items := lambdaenv.Must(dynamo.NewItemStore(dynamodb.NewFromConfig(aws), c.Table, c.Schema))
	core := lambdaenv.Must(fire.New(fire.Config{Schema: c.Schema, Store: items, Log: log, Lease: c.Lease}))
	var deliver fire.Deliverer = target
	if target == nil {
		deliver = lambdaenv.Must(awslambda.New(awslambdasdk.NewFromConfig(aws), c.Target, c.Schema))
	}
	lambda.Start(newHandler(core, items, deliver, clock.System{}.Now, log, metrics.New(metrics.FunctionExpiry, nil)).Invoke)
}

// Store is the item store the firing function claims through: by
// default the core's DynamoDB store of the table (the contract's
// conditional writes). An adopter whose own store applies the same
// writes (and perhaps keeps what its claim returned, for its target) may
// pass it to StartWithStore.
type Store interface {
	fire.Store
	fire.ReminderStore
}

// StartWithStore is Start with an in-process target and the adopter's own
// item store, which must apply the schema's conditional writes (Claim,
// TakeOver, MarkDelivered, RemindClaim, MarkReminded) as the core's
// store does.
func StartWithStore(target Target, items Store) {
	if target == nil || items == nil {
		panic("firefn: StartWithStore needs a target and a store")
	}
	log := lambdaenv.Logger()
	c := lambdaenv.Must(loadConfig(os.Getenv, true))
	core := lambdaenv.Must(fire.New(fire.Config{Schema: c.Schema, Store: items, Log: log, Lease: c.Lease}))
	lambda.Start(newHandler(core, items, target, clock.System{}.Now, log, metrics.New(metrics.FunctionExpiry, nil)).Invoke)
}

// newHandler is the firing function's handler: the core on the item
// store, delivering to target.
func newHandler(core *fire.Core, reminders fire.ReminderStore, target fire.Deliverer, now func() time.Time,
	log *slog.Logger, m *metrics.Recorder) *handler {
	return &handler{firer: targetFirer{core: core, reminders: reminders, target: target}, now: now, log: log, metrics: m}
}
