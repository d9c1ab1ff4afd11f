package ops

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/awslambda"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// Backend is where a stack's items and its reconciler's collaborators
// live: the deployed stack's AWS resources (the default), or an
// in-process world (make dev's server, internal/tooling/devserver).
type Backend interface {
	// Item reads the item k of table t, its attributes as strings
	// (found is false when there is none).
	Item(ctx context.Context, t Table, k contract.Key) (attrs map[string]string, found bool, err error)
	// Reconciler is the reconciler's configuration and collaborators for
	// table t, wired as its function wires them.
	Reconciler(t Table) (reconcile.Config, reconcile.Deps, error)
	// Lease is the firing lease of table t.
	Lease(t Table) time.Duration
}

// World is a discovered stack and the clients that reach it.
type World struct {
	// Backend defaults to the AWS resources of Stack, through DDB,
	// Lambda and AWS.
	Backend Backend
	Stack   Stack
	AWS     aws.Config
	DDB     *dynamodb.Client
	Lambda  Lambda
	SQS     SQS
	// Now tells the time. Default: time.Now.
	Now func() time.Time
	// Progress, when set, is told what a long operation is at.
	Progress func(done, total int, what string)
	// Logs reads the functions' logs (why --logs). Default: none.
	Logs Logs
	// PollEvery is how often a log query is polled. Default: 1 s.
	PollEvery time.Duration
	// Visibility is how long a read message stays hidden, in seconds.
	// Default: DefaultVisibility.
	Visibility int32
	// PollWait is each receive's long-poll wait, in seconds (1 to 20).
	// Default: DefaultPollWait.
	PollWait int32
	// Log receives the reconciler's log lines on a repair. Default: none.
	Log *slog.Logger

	progressMu sync.Mutex // queues are read at once; Progress is told one at a time
}

// Open discovers the stack called name with the SDK clients of cfg.
func Open(ctx context.Context, cfg aws.Config, name string) (*World, error) {
	w := &World{AWS: cfg, DDB: dynamodb.NewFromConfig(cfg), Lambda: lambda.NewFromConfig(cfg), SQS: sqs.NewFromConfig(cfg),
		Logs: cloudwatchlogs.NewFromConfig(cfg)}
	st, err := Discover(ctx, cloudformation.NewFromConfig(cfg), w.Lambda, w.SQS, name)
	if err != nil {
		return nil, err
	}
	w.Stack = st
	return w, nil
}

func (w *World) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *World) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func (w *World) progress(done, total int, what string) {
	if w.Progress != nil {
		w.progressMu.Lock()
		defer w.progressMu.Unlock()
		w.Progress(done, total, what)
	}
}

// Timer is the table's timer adapter, as the functions build it.
func (w *World) Timer(t Table) (timers.Timer, error) {
	if !t.HasTimer {
		return nil, fmt.Errorf("no function of the stack carries the timer of table %s", t.Name)
	}
	if c, ok := t.Timer.Adapter.(ttlmarker.Config); ok && w.DDB != nil {
		// The markers live in the item table: the same client as the
		// items (in tests, dynalite rather than moto).
		return ttlmarker.New(w.DDB, c)
	}
	return timers.New(w.AWS, t.Timer)
}

func (w *World) backend() Backend {
	if w.Backend != nil {
		return w.Backend
	}
	return awsBackend{w}
}

func (w *World) reconciler(t Table) (reconcile.Config, reconcile.Deps, error) {
	return w.backend().Reconciler(t)
}

func (w *World) lease(t Table) time.Duration { return w.backend().Lease(t) }

// awsBackend is the deployed stack's.
type awsBackend struct{ w *World }

// Item reads the item with a consistent read.
func (b awsBackend) Item(ctx context.Context, t Table, k contract.Key) (map[string]string, bool, error) {
	out, err := b.w.DDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(t.Name),
		Key: dynamo.ToAttrs(t.Schema.Attrs(k)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, false, fmt.Errorf("read %s from %s: %w", k, t.Name, err)
	}
	if len(out.Item) == 0 {
		return nil, false, nil
	}
	return dynamo.FromAttrs(out.Item), true, nil
}

// Reconciler is the reconciler's configuration and collaborators for
// table t, wired from its function's environment exactly as
// lambdas/reconciler wires them (the item view, the firing core with its
// lease, the target); Checkpoints is left unset: a plan, a repair or a
// one-key pass uses a scratch one, never the function's.
func (b awsBackend) Reconciler(t Table) (reconcile.Config, reconcile.Deps, error) {
	if t.Kind == KindCampaignSends {
		return b.campaignReconciler(t)
	}
	w := b.w
	env := map[string]string{}
	if f, ok := w.Stack.Function(t.Reconciler); ok {
		env = f.Env
	}
	get := func(k string) string { return env[k] }
	e := lambdaenv.New(get)
	var cfg reconcile.Config
	cfg.Grace = time.Duration(e.Int(envvars.GraceSec, 0, 1, 86400)) * time.Second
	cfg.RatePerSec = e.Float(envvars.RatePerSec, 0, 0, 1000)
	lease := time.Duration(e.Int(envvars.FireLeaseSeconds, int(fire.DefaultLease/time.Second), 1, 3600)) * time.Second
	if err := e.Err(); err != nil {
		return cfg, reconcile.Deps{}, err
	}
	tm, err := w.Timer(t)
	if err != nil {
		return cfg, reconcile.Deps{}, err
	}
	d := reconcile.Deps{Schema: t.Schema, Scheduler: tm, Schedules: tm, Log: w.log(), Clock: clockFunc(w.now)}
	target := env[envvars.TargetFunctionArn]
	var deliver fire.Deliverer = fire.DeliverFunc(func(context.Context, contract.Payload) error {
		return fmt.Errorf("table %s has no reconciler in the stack: no target to deliver to", t.Name)
	})
	if target != "" {
		dl, err := awslambda.New(w.Lambda, target, t.Schema)
		if err != nil {
			return cfg, d, err
		}
		deliver = dl
	}
	// The armed items as the reconciler function lists them: through its
	// armed index (RECONCILE_ARMED_INDEX) when it names one, else a Scan.
	spec, hasIndex, err := armedindex.Parse(env[envvars.ArmedIndex], t.Schema)
	if err != nil {
		return cfg, d, err
	}
	var armed reconcile.Items
	if hasIndex {
		armed, err = dynamo.NewIndexedItems(w.DDB, t.Name, t.Schema, spec, w.now)
	} else {
		armed, err = dynamo.NewArmedItems(w.DDB, t.Name, t.Schema)
	}
	if err != nil {
		return cfg, d, err
	}
	store, err := dynamo.NewItemStore(w.DDB, t.Name, t.Schema)
	if err != nil {
		return cfg, d, err
	}
	core, err := fire.New(fire.Config{Schema: t.Schema, Store: store, Log: d.Log, Lease: lease, Now: w.now})
	if err != nil {
		return cfg, d, err
	}
	d.Items, d.Firer = armed, fire.Firing{Core: core, Target: deliver}
	if fn := env[envvars.FireFunctionArn]; fn != "" {
		// The target runs inside the firing function: fire through it,
		// as the reconciler does.
		if d.Firer, err = awslambda.NewFirer(w.Lambda, fn, t.Schema); err != nil {
			return cfg, d, err
		}
	}
	return cfg, d, nil
}

// Lease is the firing lease of table t: the expiry function's, as the
// reconciler reads it.
func (b awsBackend) Lease(t Table) time.Duration {
	w := b.w
	for _, name := range t.Functions {
		f, _ := w.Stack.Function(name)
		if v := f.Env[envvars.FireLeaseSeconds]; v != "" {
			e := lambdaenv.New(func(string) string { return v })
			return time.Duration(e.Int("", int(fire.DefaultLease/time.Second), 1, 3600)) * time.Second
		}
	}
	return fire.DefaultLease
}

type clockFunc func() time.Time

func (c clockFunc) Now() time.Time { return c() }
