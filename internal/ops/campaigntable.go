package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/cognitosenders"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/lambdainvoke"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/ses"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntimer"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// KindCampaignSends is Table.Kind of the campaign table: its send tasks.
const KindCampaignSends = "campaign-sends"

// campaignTables are the campaign tables the functions name
// (CAMPAIGN_TABLE), each with the timer the construct bound to the send
// tasks (campaigntimer.Load, as the campaign functions read it) and its
// reconciler: the function that also names the send function.
func campaignTables(fns []Function) []Table {
	byName := map[string]*Table{}
	var order []string
	for _, f := range fns {
		name := f.Env[campaignenv.CampaignTable]
		if name == "" {
			continue
		}
		t, ok := byName[name]
		if !ok {
			t = &Table{Name: name, Schema: campaign.TaskSchema.WithDefaults(), Kind: KindCampaignSends}
			byName[name] = t
			order = append(order, name)
		}
		t.Functions = append(t.Functions, f.Name)
		if !hasTimer(f.Env) {
			continue
		}
		get := func(k string) string { return f.Env[k] }
		e := lambdaenv.New(get)
		c, err := campaigntimer.Load(e, get)
		if err != nil || e.Err() != nil {
			continue
		}
		if !t.HasTimer {
			t.Timer, t.HasTimer, t.TimerName = c, true, timerName(c)
		}
		if f.Env[campaignenv.SendFunctionArn] != "" {
			t.Reconciler = f.Name
		}
	}
	out := make([]Table, 0, len(order))
	for _, name := range order {
		out = append(out, *byName[name])
	}
	return out
}

// campaignReconciler wires the campaign reconciler as
// lambdas/campaignreconciler does (campaign.ReconcileDeps: the send
// tasks' view, the timer, the send function as the Firer, the campaign's
// rules), with a scratch checkpoint; its Policy is also asked dry (a
// plan: the rules' task writes recorded, not made).
func (b awsBackend) campaignReconciler(t Table) (reconcile.Config, reconcile.Deps, error) {
	w := b.w
	f, ok := w.Stack.Function(t.Reconciler)
	if !ok {
		return reconcile.Config{}, reconcile.Deps{}, fmt.Errorf("no function of the stack reconciles campaign table %s (CAMPAIGN_TABLE with %s and the timer)", t.Name, campaignenv.SendFunctionArn)
	}
	get := func(k string) string { return f.Env[k] }
	e := lambdaenv.New(get)
	rate := e.Float(campaignenv.SchedulerCallsPerSecond, campaign.DefaultReconcileCallsPerSecond, 1, 10000)
	sendFn, from := e.Require(campaignenv.SendFunctionArn), e.Require(campaignenv.SenderAddress)
	if err := e.Err(); err != nil {
		return reconcile.Config{}, reconcile.Deps{}, err
	}
	store, err := campaigntable.NewCampaignStore(w.DDB, t.Name)
	if err != nil {
		return reconcile.Config{}, reconcile.Deps{}, err
	}
	tm, err := w.Timer(t)
	if err != nil {
		return reconcile.Config{}, reconcile.Deps{}, err
	}
	clk := opsClock{now: w.now}
	receipts, err := ses.New(sesv2.NewFromConfig(w.AWS), w.DDB, ses.Config{Table: t.Name, From: from}, clk) // Sent only: never sends
	if err != nil {
		return reconcile.Config{}, reconcile.Deps{}, err
	}
	dispatch, err := lambdainvoke.New(w.Lambda, sendFn)
	if err != nil {
		return reconcile.Config{}, reconcile.Deps{}, err
	}
	owners, err := senderCheck(f.Env, cognitoidentityprovider.NewFromConfig(w.AWS), clk)
	if err != nil {
		return reconcile.Config{}, reconcile.Deps{}, err
	}
	ports := campaign.ReconcilePorts{Tasks: store, Campaigns: store, Timer: tm, Sender: receipts, Owners: owners, Dispatcher: dispatch,
		Clock: clk, Checkpoints: scratch{}, Log: w.log()}
	real := &campaign.Repair{}
	cfg, d, err := campaign.ReconcileDeps(reconcile.Config{RatePerSec: rate}, real, ports)
	if err != nil {
		return cfg, d, err
	}
	dryPorts := ports
	dryPorts.Tasks, dryPorts.Campaigns = dryTasks{Tasks: store}, dryCampaigns{Campaigns: store}
	dry := &campaign.Repair{}
	if _, _, err := campaign.ReconcileDeps(cfg, dry, dryPorts); err != nil {
		return cfg, d, err
	}
	d.Policy = rules{RunPolicy: real, dry: dry, name: "the campaign's rules"}
	return cfg, d, nil
}

// rules is a table's adopter rules: the Policy a repair runs, and the
// same rules over stores that write nothing, which a plan asks.
type rules struct {
	reconcile.RunPolicy
	dry  reconcile.RunPolicy
	name string
}

// decision is what the rules decided about one item in a plan.
type decision struct {
	key contract.Key
	why reconcile.Why
	reconcile.Decision
}

// recorded asks a policy and records its decisions.
type recorded struct {
	p   reconcile.RunPolicy
	got *[]decision
}

func (r recorded) StartRun(ctx context.Context) { r.p.StartRun(ctx) }

func (r recorded) Decide(ctx context.Context, it reconcile.Item, why reconcile.Why) (reconcile.Decision, error) {
	d, err := r.p.Decide(ctx, it, why)
	if err == nil {
		*r.got = append(*r.got, decision{key: it.Key, why: why, Decision: d})
	}
	return d, err
}

// plan is what a pass would do over d: reconcile.Plan, or, for a table
// with adopter rules, reconcile.PlanWithPolicy with the rules asked dry,
// and what they decided.
func plan(ctx context.Context, cfg reconcile.Config, d reconcile.Deps) (reconcile.PlanResult, []decision, error) {
	r, ok := d.Policy.(rules)
	if !ok {
		res, err := reconcile.Plan(ctx, cfg, d)
		return res, nil, err
	}
	var got []decision
	d.Policy = recorded{p: r.dry, got: &got}
	res, err := reconcile.PlanWithPolicy(ctx, cfg, d)
	return res, got, err
}

// errDryRun is what a dry store answers a write it was not built for.
var errDryRun = errors.New("a plan writes nothing")

// dryTasks reads the send tasks and records nothing: Replace (the rules'
// one write) succeeds unmade; a claim is refused.
type dryTasks struct{ campaign.Tasks }

func (dryTasks) Replace(context.Context, campaign.SendTask, campaign.SendTask) error { return nil }
func (dryTasks) Claim(context.Context, campaign.Key, time.Time, time.Time, time.Duration) (campaign.SendTask, error) {
	return campaign.SendTask{}, errDryRun
}
func (dryTasks) TakeOver(context.Context, campaign.Key, time.Time, time.Time, time.Duration) (campaign.SendTask, error) {
	return campaign.SendTask{}, errDryRun
}

// dryCampaigns reads the campaigns and changes none.
type dryCampaigns struct{ campaign.Campaigns }

func (dryCampaigns) SetStatus(context.Context, string, []campaign.Status, campaign.Status, string, time.Time) error {
	return errDryRun
}

// opsClock is the world's clock as the campaign code reads one.
// opsClock reads the world's now (a fixed time in tests) and sleeps on
// the wall clock.
type opsClock struct {
	clock.System
	now func() time.Time
}

func (c opsClock) Now() time.Time { return c.now().UTC() }

// rulesVerdict says what the adopter's rules decided about the item, when
// that is the answer: a write of theirs (cancelled, retimed, failed,
// finished, requeued), or leaving an armed item without its entry this
// pass. ok is false when the reconciler's own repairs say it.
func rulesVerdict(ds []decision, k contract.Key, name string, armed, hasEntry bool) (verdict, explanation string, problem, ok bool) {
	for _, d := range ds {
		if d.key != k {
			continue
		}
		switch {
		case d.Action == reconcile.Leave && armed && !hasEntry && d.why != reconcile.Stale:
			return VerdictLeft, name + " leave it this pass: its campaign is a draft (no schedule is owed yet), or it is due more than the check-ahead (" +
				strings.TrimSuffix(campaign.DefaultCheckAhead.String(), "0m0s") + ") away, when its schedule is checked", false, true
		case d.Action == reconcile.Leave && d.why == reconcile.Stale:
			return VerdictClaimed, name + " leave it this pass: its attempt's lease has not passed, the attempt may still be at work", false, true
		case d.Action != reconcile.Proceed && d.Action != reconcile.Leave:
			return VerdictRules, name + ": " + outcomeText(d.Outcome), true, true
		}
	}
	return "", "", false, false
}

// outcomeText says what a campaign rules' outcome does to the task.
func outcomeText(outcome string) string {
	switch outcome {
	case "cancelled":
		return "its campaign is cancelled: the next pass cancels the task and deletes its schedule"
	case "retimed":
		return "overdue outside the campaign's send windows: the next pass moves it to the next usable minute"
	case "failed":
		return "given up (too many attempts or moves): the next pass marks it Failed"
	case "finished":
		return "its attempt died after the email was sent: the next pass marks it Finished with the sender's receipt"
	case "requeued":
		return "its attempt died before sending: the next pass puts it back to Pending"
	}
	return outcome + " on the next pass"
}

// senderCheck is the campaign reconciler's check of an owner, from its
// environment (cognitosenders.Load), so a plan says what the function
// would do to a removed sender's campaign. A stack deployed before the
// sender check (no USER_POOL_ID) checks no owner, as its function does.
func senderCheck(env map[string]string, client cognitosenders.Client, clk campaign.Clock) (campaign.SenderCheck, error) {
	if env[campaignenv.UserPoolID] == "" {
		return allowEveryOwner{}, nil
	}
	return cognitosenders.Load(lambdaenv.New(func(k string) string { return env[k] }), client, clk)
}

type allowEveryOwner struct{}

func (allowEveryOwner) Check(context.Context, string) (campaign.Verdict, error) {
	return campaign.Allow(), nil
}
