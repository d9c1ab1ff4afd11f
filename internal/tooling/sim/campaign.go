package sim

// The campaign workload (WorkloadCampaigns): one campaign's whole life on
// the history's timer, on the engine wired with only its firing; the
// services are built in campaigns.go (docs/simulation.md#campaign-sends).

import (
	"cmp"
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
	core
	ctx context.Context
	// e fires the timer's schedules and the reconciler's dispatches.
	e     *inproc.Engine
	clock *inproc.Clock
	campaignServices
	c     campaign.Campaign
	loc   *time.Location // the campaign's zone
	sends []plan.Send

	// events are the history's acts (reconciler passes, the cancel, the
	// removal), in time order.
	events []campaignEvent
	// reach is how far past now the engine's next firing reaches (the
	// schedule that fires early reaches its due time).
	reach time.Duration
	// kill cancels the current provisioning run when it creates killName.
	kill     context.CancelFunc
	killName string
	horizon  time.Time // the last reconciler pass
	// cancelledAt and removedAt are when the campaign was cancelled and
	// its owner left the sender group (zero: never).
	cancelledAt, removedAt time.Time
	// early is how long before its time each schedule (name and due
	// time) fires: drawn once, as nextFire asks again and again.
	early map[string]time.Duration
}

// runCampaign simulates one campaign history and checks C1 to C5.
func runCampaign(cfg Config) Result {
	w := &campaignWorld{core: newCore(cfg), ctx: context.Background(), early: map[string]time.Duration{}}
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
	w.push(w.clock.Now().Truncate(30*time.Minute).Add(30*time.Minute), evReconcile)
	if w.rng.Intn(6) == 0 {
		span := last.Sub(w.sends[0].At)
		w.cancelledAt = w.sends[0].At.Add(time.Duration(w.rng.Int63n(int64(span) + 1))).Add(30 * time.Second)
		w.push(w.cancelledAt, evCancel)
	}
	// The removal draws from a source of its own, so that the histories
	// without it stay those of the seeds before it existed.
	if rr := rand.New(rand.NewSource(cfg.Seed ^ 0x5e4de5)); rr.Intn(6) == 0 {
		span := last.Sub(w.sends[0].At)
		w.removedAt = w.sends[0].At.Add(time.Duration(rr.Int63n(int64(span) + 1))).Add(45 * time.Second)
		w.push(w.removedAt, evSenderRemoved)
	}
	if err := w.loop(); err != nil {
		w.violate(invLiveness, "%v", err)
	}
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
	// The send function's asynchronous invoke: three tries, a minute apart.
	w.e = inproc.NewEngine(inproc.Options{Start: now0, Log: discard, FireAttempts: 3, FireRetryDelay: time.Minute,
		Hooks: inproc.Hooks{FireEarly: func() time.Duration { return w.reach }, Deliveries: w.deliveries}})
	w.e.WireFiring(w.send)
	// deliveries draws a TTL sweeper's delay.
	w.e.Timer = inmem.NewTimerOf(w.cfg.Timer, campaign.TaskSchema, w.e.Clock.Now, nil)
	w.e.Scheduler, _ = w.e.Timer.(*inmem.Scheduler)
	w.clock = w.e.Clock
	w.now, w.epoch = w.clock.Now, now0
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

// The history's acts.
const (
	evReconcile     = "reconcile"
	evCancel        = "cancel"
	evSenderRemoved = "sender-removed" // admin-remove-user-from-group of the owner
)

type campaignEvent struct {
	at   time.Time
	kind string
}

// push adds an act at at, after those at the same time.
func (w *campaignWorld) push(at time.Time, kind string) {
	w.events = append(w.events, campaignEvent{at: at, kind: kind})
	slices.SortStableFunc(w.events, func(a, b campaignEvent) int { return a.at.Compare(b.at) })
}

// nextFire is the schedule that fires first, and when: its due time, or
// earlier by earlyBy (ties by name and due time: the draws must not
// follow a map's order).
func (w *campaignWorld) nextFire() (timer.Schedule, time.Time, bool) {
	all := w.sched.All()
	slices.SortFunc(all, func(a, b timer.Schedule) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), a.At.Compare(b.At))
	})
	var next timer.Schedule
	var at time.Time
	for _, s := range all {
		if t := s.At.Add(-w.earlyBy(s)); at.IsZero() || t.Before(at) {
			next, at = s, t
		}
	}
	return next, at, !at.IsZero()
}

// earlyBy is how long before its time the schedule fires: zero, or on
// the EventBridge Scheduler up to 59 s. The send worker must fail such a
// fire (the retry a minute later sends it).
func (w *campaignWorld) earlyBy(s timer.Schedule) time.Duration {
	k := s.Name + "|" + s.At.String()
	d, ok := w.early[k]
	if !ok {
		if kindOf(w.cfg.Timer).FiresEarly && w.chance(0.12) {
			d = time.Duration(1+w.rng.Intn(59)) * time.Second
		}
		w.early[k] = d
	}
	return d
}

func (w *campaignWorld) open() bool { return w.store.CountOpen(w.c.ID) > 0 }

func (w *campaignWorld) loop() error {
	for steps := 0; ; steps++ {
		if steps > 100_000 {
			return errors.New("no end after 100,000 events")
		}
		next, fireAt, hasFire := w.nextFire()
		invAt, hasInv := w.e.NextAttempt()
		if len(w.events) == 0 && !hasFire && !hasInv {
			if w.open() {
				return fmt.Errorf("no event left (horizon %s) but %d tasks are still open", w.horizon, w.store.CountOpen(w.c.ID))
			}
			return nil
		}
		if !w.open() && !hasFire {
			return nil
		}
		// The engine fires what is due first (ties before the acts): the
		// next schedule, reaching its due time when it fires early, or a
		// waiting invocation.
		at := invAt
		if hasFire && (!hasInv || !invAt.Before(fireAt)) {
			at = fireAt
		}
		if (hasFire || hasInv) && (len(w.events) == 0 || !w.events[0].at.Before(at)) {
			w.clock.Set(at)
			if at.Equal(fireAt) && hasFire {
				w.reach = next.At.Sub(w.clock.Now())
			}
			w.e.FireSchedules(w.ctx)
			w.reach = 0
			continue
		}
		e := w.events[0]
		w.events = w.events[1:]
		w.clock.Set(e.at)
		switch e.kind {
		case evReconcile:
			if next := e.at.Add(30 * time.Minute); !next.After(w.horizon) {
				w.push(next, evReconcile)
			}
			if !w.open() {
				continue
			}
			res, n, err := w.reconcile(w.ctx, w.clock.Now().Add(15*time.Minute))
			switch {
			case err != nil && strings.Contains(err.Error(), "(injected)"):
				// A timer call that failed on every retry (the listing
				// of the pass): the pass fails, and the next one, half
				// an hour later, does its work.
				w.tracef("reconcile pass failed on an injected fault: %v", err)
				continue
			case err != nil:
				return fmt.Errorf("reconciler: %w", err)
			}
			w.res.Faults[FaultSendRecovered] += n.Finished + n.Requeued
			w.res.Faults[FaultScheduleRecreated] += res.SchedulesCreated
			w.res.Faults[FaultSendRetimed] += n.Retimed
			if res.Repaired() > 0 || res.Errors > 0 || res.ItemsMoved+res.ItemsRearmed+res.ItemsEnded > 0 || n != (campaign.RepairCounts{}) {
				w.tracef("reconcile %+v %+v", res, n)
			}
		case evCancel:
			// The cancel runs now, which may be after its planned time
			// when a reconciler pass before it moved the clock on: C3
			// holds against when the campaign was marked Cancelled.
			w.cancelledAt = w.clock.Now()
			out, err := w.canc.Cancel(w.ctx, w.c.ID, "cancelled in the simulation", w.clock.Now().Add(15*time.Minute))
			if err != nil {
				return fmt.Errorf("cancel: %w", err)
			}
			w.res.Faults[FaultCampaignCancelled]++
			w.tracef("cancel %+v", out)
		case evSenderRemoved:
			w.removedAt = w.clock.Now()
			w.owners.Remove(w.c.OwnerID)
			w.res.Faults[FaultSenderRemoved]++
			w.tracef("owner %s removed from the sender group", w.c.OwnerID)
		}
	}
}

// deliveries are the invocations of a fired schedule (Hooks.Deliveries):
// a few seconds later, or late, twice, or (dropped to the DLQ) never.
func (w *campaignWorld) deliveries(s contract.Schedule) []time.Duration {
	if s.At.After(w.clock.Now()) {
		w.count(FaultFiredEarly)
		w.tracef("fire %s %s early", s.Name, s.At.Sub(w.clock.Now()))
	}
	if w.inject(FaultFireDropped, 0.07) {
		w.tracef("fire %s dropped to the DLQ", s.Name)
		return nil
	}
	delay := time.Duration(w.rng.Intn(20)) * time.Second
	switch {
	case kindOf(w.cfg.Timer).FiresWithin > 0:
		// A lazy timer fires within its bound (DynamoDB deletes an
		// expired marker within about 48 hours), most of them soon.
		delay = w.ttlDelay()
	case w.inject(FaultFiredLate, 0.05):
		delay = time.Duration(10+w.rng.Intn(120)) * time.Minute
	}
	out := []time.Duration{delay}
	if w.inject(w.duplicateFault(), 0.08) {
		out = append(out, delay+time.Duration(w.rng.Intn(40))*time.Second)
	}
	return out
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
