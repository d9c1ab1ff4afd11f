package sim

// The campaign workload (WorkloadCampaigns): one campaign's whole life on
// the history's timer, on the engine wired with only its firing; the
// services are built in campaigns.go (docs/simulation.md#campaign-sends).

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // the campaigns' zones, even on a machine without zoneinfo

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// The campaign invariants (docs/simulation.md#campaign-sends).
const (
	invExactlyOnce = "C1"
	invOnTime      = "C2"
	invCancel      = "C3"
	invLiveness    = "C4"
	invRemoved     = "C5"
)

// errCampaignCrash is the panic of a crashed send worker.
var errCampaignCrash = errors.New("send worker crashed (injected)")

// campaignZones are the zones, and the transitions near which most
// campaigns start.
var campaignZones = []struct {
	name string
	days []plan.Date
}{
	{"Europe/Berlin", []plan.Date{date(2026, 3, 29), date(2026, 10, 25)}},
	{"America/New_York", []plan.Date{date(2026, 3, 8), date(2026, 11, 1)}},
	{"Australia/Lord_Howe", []plan.Date{date(2026, 4, 5), date(2026, 10, 4)}},
	{"UTC", []plan.Date{date(2026, 6, 15)}},
}

func date(y int, m time.Month, d int) plan.Date { return plan.Date{Year: y, Month: m, Day: d} }

type campaignWorld struct {
	*harness
	campaignServices
	c     campaign.Campaign
	loc   *time.Location // the campaign's zone
	sends []plan.Send

	// acts are the history's own (reconciler passes, the cancel, the
	// removal), in time order.
	acts []campaignAct
	// kill cancels the current provisioning run when it creates killName.
	kill     context.CancelFunc
	killName string
	horizon  time.Time // the last reconciler pass
	// cancelledAt and removedAt are when the campaign was cancelled and
	// its owner left the sender group (zero: never).
	cancelledAt, removedAt time.Time
}

// runCampaign simulates one campaign history and checks C1 to C5.
func runCampaign(cfg Config) Result {
	w := &campaignWorld{harness: newHarness(cfg, invLiveness)}
	w.faultsOn = true
	if err := w.setUp(); err != nil {
		w.violate(invLiveness, "%v", err)
		return w.res
	}
	if err := w.provision(); err != nil {
		w.violate(invLiveness, "%v", err)
		return w.res
	}
	last := w.sends[len(w.sends)-1].At
	w.horizon = last.Add(60 * 24 * time.Hour)
	w.push(w.clock.Now().Truncate(30*time.Minute).Add(30*time.Minute), w.pass)
	span := last.Sub(w.sends[0].At)
	if w.rng.Intn(6) == 0 {
		w.cancelledAt = w.sends[0].At.Add(time.Duration(w.rng.Int63n(int64(span) + 1))).Add(30 * time.Second)
		w.push(w.cancelledAt, w.cancel)
		w.tracef("cancel planned at %s", w.cancelledAt.Sub(w.epoch))
	}
	// The removal draws from a source of its own: which seeds remove the
	// owner, and when, does not hang on the rest of the history.
	if rr := rand.New(rand.NewSource(cfg.Seed ^ 0x5e4de5)); rr.Intn(6) == 0 {
		w.removedAt = w.sends[0].At.Add(time.Duration(rr.Int63n(int64(span) + 1))).Add(45 * time.Second)
		w.push(w.removedAt, w.removeOwner)
	}
	w.history()
	w.check()
	return w.res
}

// setUp plans the campaign, makes its tasks and builds the services.
func (w *campaignWorld) setUp() error {
	rng := w.rng
	z := campaignZones[rng.Intn(len(campaignZones))]
	var windows []plan.Window
	for c := plan.Clock(rng.Intn(10 * 60)); c < 23*60 && len(windows) < 1+rng.Intn(3); {
		end := min(c+plan.Clock(10+rng.Intn(300)), 24*60)
		windows = append(windows, plan.Window{Start: c, End: end})
		c = end + plan.Clock(rng.Intn(240))
	}
	var days []time.Weekday
	for d := range time.Weekday(7) {
		if rng.Intn(2) == 0 {
			days = append(days, d)
		}
	}
	if len(days) == 0 {
		days = []time.Weekday{time.Weekday(rng.Intn(7))}
	}
	spd := []int{1, 2, 5, 20}[rng.Intn(4)]
	n := 1 + rng.Intn(min(30, spd*len(days)*2))
	first := z.days[rng.Intn(len(z.days))].AddDays(-rng.Intn(5))
	loc, err := time.LoadLocation(z.name)
	must(err) // the simulation's zones are fixed
	w.loc = loc
	now0 := time.Date(first.Year, first.Month, first.Day, 0, 0, 0, 0, loc).Add(-time.Duration(rng.Intn(48)) * time.Hour)
	// The send function's asynchronous invoke: three tries, a minute
	// apart. Fires are dropped to the dead-letter queue, or late by up to
	// two hours; a lazy timer's sweep is drawn there, so that the history
	// jumps to it (Engine.NextAttempt).
	opts := w.options(now0, nil)
	opts.FireAttempts, opts.Hooks.RetryDelay = 3, nil
	w.fires = fireFaults{drop: 0.07, twice: 0.08, twiceWithin: 40 * time.Second, sweep: w.ttlDelay,
		late: func() time.Duration { return time.Duration(10+rng.Intn(120)) * time.Minute }}
	w.e = inproc.NewEngine(opts)
	w.e.WireFiring(w.send)
	w.e.Timer = inmem.NewTimerOf(w.cfg.Timer, campaign.TaskSchema, w.e.Clock.Now, nil)
	w.e.Scheduler, _ = w.e.Timer.(*inmem.Scheduler)
	w.clock, w.sched, w.now = w.e.Clock, w.e.Timer, w.e.Clock.Now
	rules := plan.Rules{SendsPerDay: spd, Weekdays: days, Windows: windows, TimeZone: z.name, Start: first, NotBefore: now0.Add(10 * time.Minute)}
	if w.sends, err = plan.Plan(n, rules); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	w.res.Sends = n
	w.tracef("campaign of %d sends in %s from %s: %d a day, days %v, windows %v", n, z.name, now0.In(loc).Format(time.DateTime), spd, days, windows)
	w.c = campaign.Campaign{ID: "c1", OwnerID: "owner-1", Subject: "News", Body: "Hello", Rules: rules, Status: campaign.Draft, Total: n, CreatedAt: now0}
	rs := make([]campaign.Recipient, n)
	for i := range rs {
		rs[i].Email = fmt.Sprintf("r%d@example.com", i)
		if w.inject(FaultBounce, 0.05) {
			rs[i].Email = fmt.Sprintf("bounce%d@example.com", i)
		}
	}
	tok := 0
	tasks, err := campaign.NewTasks(w.c, rs, w.sends, func() string { tok++; return fmt.Sprintf("tok-%d-%d", w.cfg.Seed, tok) }, now0)
	if err != nil {
		return fmt.Errorf("tasks: %w", err)
	}
	return w.buildServices(tasks, uint64(w.cfg.Seed)+1, 1+rng.Intn(8)) // seed 0 would mean random
}

// provision runs the provisioner until done, with deadlines from 20 s to
// 5 min after the margin, and kills some runs midway.
func (w *campaignWorld) provision() error {
	for run := 1; ; run++ {
		if run > 200 {
			return errors.New("provisioning did not complete in 200 runs")
		}
		ctx, kill := context.WithCancel(w.ctx)
		w.kill, w.killName = kill, ""
		if w.chance(0.12) {
			w.killName = campaign.ScheduleName(campaign.Key{CampaignID: w.c.ID, TaskID: campaign.TaskID(w.c.ID, w.rng.Intn(len(w.sends)))})
		}
		deadline := w.clock.Now().Add(provision.DefaultMargin + time.Duration(20+w.rng.Intn(280))*time.Second)
		res, err := w.prov.Run(ctx, w.c.ID, deadline)
		kill()
		switch {
		case errors.Is(err, context.Canceled):
			w.count(FaultProvisionKilled)
			// A killed run's own counts depend on when it died.
			cp, _ := w.cps.Load(w.ctx, w.c.ID)
			w.tracef("provision run %d killed (saved checkpoint %d)", run, cp.Next)
			continue
		case err != nil:
			return fmt.Errorf("provision run %d: %w", run, err)
		}
		w.tracef("provision run %d: {Next:%d Created:%d Errors:%d Calls:%d Throttles:%d Continue:%v Done:%v} deadline %s", run,
			res.Next, res.Created, res.Errors, res.Calls, res.Throttles, res.Continue, res.Done, deadline.Format("15:04:05.000"))
		if !res.Continue {
			if !res.Done {
				return errors.New("provisioning stopped without Done or Continue")
			}
			return nil
		}
	}
}

// schedulerCall is asked before each timer call (inmem.Remote.Fault): it
// kills a provisioning run at killName, or injects a fault.
func (w *campaignWorld) schedulerCall(op, name string) (error, bool) {
	if op == "Arm" && name == w.killName && w.kill != nil {
		w.killName = ""
		w.kill()
		return context.Canceled, false
	}
	switch {
	case w.inject(FaultSchedulerThrottled, 0.2):
		return fmt.Errorf("%s %s: %w", op, name, timer.ErrThrottled), false
	case w.inject(FaultSchedulerError, 0.1):
		return fmt.Errorf("%s %s: InternalServerException (injected)", op, name), false
	case w.inject(FaultSchedulerResponseLost, 0.04):
		return fmt.Errorf("%s %s: connection reset (injected)", op, name), true
	}
	return nil, false
}

// sendCall is asked before each send: a bounce, a retryable error.
func (w *campaignWorld) sendCall(m campaign.Message) error {
	if strings.HasPrefix(m.To, "bounce") {
		return errors.New("MessageRejected: address bounces")
	}
	if w.inject(FaultPublishFailed, 0.04) {
		return fmt.Errorf("throttling: maximum sending rate exceeded: %w", campaign.ErrRetryable)
	}
	return nil
}

// campaignAct is one of the history's acts and its time.
type campaignAct struct {
	at time.Time
	do func()
}

// push adds an act at at, after those at the same time.
func (w *campaignWorld) push(at time.Time, do func()) {
	w.acts = append(w.acts, campaignAct{at: at, do: do})
	slices.SortStableFunc(w.acts, func(a, b campaignAct) int { return a.at.Compare(b.at) })
}

func (w *campaignWorld) open() bool { return w.store.CountOpen(w.c.ID) > 0 }

// history runs the campaign on the harness until every task settled and
// no schedule is left: the clock jumps to a little before whatever comes
// first, the timer's next schedule, the engine's next waiting invocation
// or the next act, then ticks a few seconds at a time, an act due in a
// tick running among its stages.
func (w *campaignWorld) history() {
	for ticks := 0; w.open() || len(w.sched.All()) > 0; ticks++ {
		_, waiting := w.e.NextAttempt()
		switch {
		case len(w.acts) == 0 && !waiting && len(w.sched.All()) == 0:
			w.violate(invLiveness, "nothing left to happen (horizon %s) but %d tasks are still open", w.horizon, w.store.CountOpen(w.c.ID))
			return
		case ticks > 1_000_000:
			w.violate(invLiveness, "no end after a million ticks")
			return
		}
		until := w.clock.Now().AddDate(1, 0, 0)
		if len(w.acts) > 0 {
			until = w.acts[0].at
		}
		w.skipIdle(until, time.Minute, time.Minute)
		w.tick(time.Duration(1+w.rng.Intn(15))*time.Second, []func(){w.act})
	}
}

// act runs the first act if its time came.
func (w *campaignWorld) act() {
	if len(w.acts) > 0 && !w.acts[0].at.After(w.clock.Now()) {
		a := w.acts[0]
		w.acts = w.acts[1:]
		a.do()
	}
}

// pass is the reconciler function's run every 30 minutes until the
// horizon, with work while a task is open. A pass whose timer listing
// failed on every retry by injected faults fails, and the next one does
// its work.
func (w *campaignWorld) pass() {
	if next := w.clock.Now().Truncate(30 * time.Minute).Add(30 * time.Minute); !next.After(w.horizon) {
		w.push(next, w.pass)
	}
	if !w.open() {
		return
	}
	res, err := w.rec.Run(w.ctx)
	n := w.rules.Counts()
	switch {
	case err != nil && strings.Contains(err.Error(), "(injected)"):
		w.tracef("reconcile pass failed on an injected fault: %v", err)
		return
	case err != nil:
		w.violate(invLiveness, "reconciler: %v", err)
		return
	}
	w.res.Faults[FaultSendRecovered] += n.Finished + n.Requeued
	w.res.Faults[FaultScheduleRecreated] += res.SchedulesCreated
	w.res.Faults[FaultSendRetimed] += n.Retimed
	if res.Repaired() > 0 || res.Errors > 0 || res.ItemsMoved+res.ItemsRearmed+res.ItemsEnded > 0 || n != (campaign.RepairCounts{}) {
		w.tracef("reconcile %+v %+v", res, n)
	}
}

// cancel is the owner's cancel. It runs now, which may be after its
// planned time when a reconciler pass moved the clock on: C3 holds
// against when the campaign was marked Cancelled.
func (w *campaignWorld) cancel() {
	w.cancelledAt = w.clock.Now()
	out, err := w.canc.Cancel(w.ctx, w.c.ID, "cancelled in the simulation", w.clock.Now().Add(15*time.Minute))
	switch {
	case err != nil && !w.open():
		// Every send ended first: the campaign is Completed and the
		// cancel is refused, so there was no cancel for C3 to hold to.
		w.cancelledAt = time.Time{}
		w.tracef("cancel refused: %v", err)
		return
	case err != nil:
		w.violate(invLiveness, "cancel: %v", err)
		return
	}
	w.res.Faults[FaultCampaignCancelled]++
	w.tracef("cancel %+v", out)
}

// removeOwner is the admin's removal of the owner from the sender group
// (admin-remove-user-from-group).
func (w *campaignWorld) removeOwner() {
	w.removedAt = w.clock.Now()
	w.owners.Remove(w.c.OwnerID)
	w.res.Faults[FaultSenderRemoved]++
	w.tracef("owner %s removed from the sender group", w.c.OwnerID)
}

// send is the send function's handler, the engine's firing: it runs the
// send worker once on the timer's payload (or a dispatch's input, carried
// in its name); the engine retries a crash or an error.
func (w *campaignWorld) send(ctx context.Context, s contract.Schedule) (string, error) {
	in := s.Name
	if !s.At.IsZero() {
		in = campaign.TaskSchema.EncodePayload(s.Payload)
	}
	e, err := campaign.DecodeFire([]byte(in))
	if err != nil {
		w.violate(invLiveness, "the send function cannot read %s: %v", in, err)
		return "", nil
	}
	out, err := func() (out send.Outcome, err error) {
		defer func() {
			if r := recover(); r != nil {
				if r != errCampaignCrash {
					panic(r)
				}
				err = errCampaignCrash
			}
		}()
		return w.worker.Handle(ctx, e)
	}()
	w.tracef("deliver %s: %s %v", e.TaskID, out, err)
	return string(out), err
}

// check verifies C1 to C5 on the end state.
func (w *campaignWorld) check() {
	c, _ := w.store.Campaign(w.ctx, w.c.ID)
	// The owner's cancel came first when no service had yet been refused
	// the owner: a removal is learnt at the first sender check after the
	// cache lifetime, by a send, a provisioning run or a reconciler pass.
	ownerFirst := !w.cancelledAt.IsZero() && (w.refused.IsZero() || w.cancelledAt.Before(w.refused))
	if !w.removedAt.IsZero() && c.Status != campaign.Completed && !campaign.SenderRemoved(c) && !ownerFirst {
		w.violate(invRemoved, "campaign ends %s (%q) after its owner left the sender group: want Cancelled, senderRemoved", c.Status, c.CancelReason)
	}
	if c.Status != campaign.Active && c.Status != campaign.Completed && c.Status != campaign.CampaignCancelled {
		w.violate(invLiveness, "campaign ends %s: provisioning did not complete", c.Status)
	}
	if open := w.store.CountOpen(w.c.ID); (open == 0) != (c.Status == campaign.Completed) && c.Status != campaign.CampaignCancelled {
		w.violate(invLiveness, "campaign ends %s with %d open tasks: Completed exactly when none is open", c.Status, open)
	}
	perKey := map[string]int{}
	for _, m := range w.sender.Outbox {
		perKey[m.IdempotencyKey]++
	}
	tasks := w.store.All(w.c.ID)
	if len(tasks) != len(w.sends) {
		w.violate(invExactlyOnce, "%d tasks for %d planned sends", len(tasks), len(w.sends))
		return
	}
	for i, t := range tasks {
		planned := w.sends[i].At
		if !t.SendAt.Equal(planned) && t.Retimed == 0 {
			w.violate(invOnTime, "task %s send time moved without a retime", t.ID)
		}
		sent := perKey[t.IdempotencyKey()]
		delete(perKey, t.IdempotencyKey())
		switch t.State {
		case campaign.Finished:
			w.res.Sent++
			w.checkSent(t, sent, planned)
		case campaign.Failed:
			w.res.SendsFailed++
			if t.Error == "" || sent != 0 {
				w.violate(invExactlyOnce, "task %s Failed (%q) with %d messages", t.ID, t.Error, sent)
			}
		case campaign.Cancelled:
			w.res.SendsCancelled++
			if t.Reason == "" || sent != 0 {
				w.violate(invExactlyOnce, "task %s Cancelled (%q) with %d messages", t.ID, t.Reason, sent)
			}
		default:
			w.violate(invLiveness, "task %s ends %s: never settled (stale Running not recovered, or a lost fire never sent)", t.ID, t.State)
		}
	}
	if len(perKey) > 0 {
		w.violate(invExactlyOnce, "messages for no task: %v", perKey)
	}
	if left := w.sched.All(); len(left) > 0 && w.cancelledAt.IsZero() && w.removedAt.IsZero() {
		w.violate(invLiveness, "%d schedules left after every task settled", len(left))
	}
}

// checkSent checks a Finished task that the sender sent n messages for.
func (w *campaignWorld) checkSent(t campaign.SendTask, n int, planned time.Time) {
	if n != 1 {
		w.violate(invExactlyOnce, "task %s Finished with %d messages", t.ID, n)
		return
	}
	if rc, err := w.sender.Sent(w.ctx, t.IdempotencyKey()); err != nil || !rc.SentAt.Equal(t.SentAt) {
		w.violate(invExactlyOnce, "task %s sentAt %s, receipt %s (%v)", t.ID, t.SentAt, rc.SentAt, err)
	}
	if ok, _ := w.c.Rules.Allows(t.SentAt); !ok {
		w.violate(invOnTime, "task %s sent at %s, outside the windows", t.ID, t.SentAt.In(w.loc).Format(time.DateTime+" Mon"))
	}
	if t.SentAt.Before(planned) {
		w.violate(invOnTime, "task %s sent at %s, before its planned %s", t.ID, t.SentAt, planned)
	}
	if !w.cancelledAt.IsZero() && t.SentAt.After(w.cancelledAt) && !t.ClaimedAt.Before(w.cancelledAt) {
		w.violate(invCancel, "task %s claimed at %s and sent after the cancel at %s", t.ID, t.ClaimedAt, w.cancelledAt)
	}
	if stop := w.removedAt.Add(campaign.SenderCacheTTL); !w.removedAt.IsZero() && t.SentAt.After(stop) && !t.ClaimedAt.Before(stop) {
		w.violate(invRemoved, "task %s claimed at %s and sent, though its owner left the sender group at %s", t.ID, t.ClaimedAt, w.removedAt)
	}
}
