// Package sim is a seeded, single-clock simulation of whole campaigns:
// planning, provisioning (with throttles, lost answers, errors, short
// deadlines and crashes), schedule fires (late, duplicated, dropped to the
// DLQ, retried after errors), the send worker (crashing after its claim or
// after its send, with bounces and retryable errors), the 30-minute
// reconciler, and a cancel part-way. Every fault is drawn from the seed,
// so a failing seed replays: Run(seed) again, with Verbose for its trace.
//
// After each history it checks that every planned send ended exactly
// once (Finished with one message, or Failed/Cancelled with a reason and
// no message), that no message went outside the campaign's windows or
// before its planned time, that no task Pending at the cancel was sent,
// that provisioning completed, and that every stale Running task was
// recovered.
package sim

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/cancel"
	"github.com/unschedule/unschedule/internal/campaign/inmem"
	"github.com/unschedule/unschedule/internal/campaign/plan"
	"github.com/unschedule/unschedule/internal/campaign/provision"
	"github.com/unschedule/unschedule/internal/campaign/reconciler"
	"github.com/unschedule/unschedule/internal/campaign/send"
	"github.com/unschedule/unschedule/internal/clock"
)

// Report is what one history did.
type Report struct {
	Seed                          uint64
	Zone                          string
	Tasks                         int
	Finished, Failed, Cancelled   int
	ProvisionRuns, ProvisionCrash int
	Throttles, LostAnswers        int
	Fires, DuplicateFires, DLQ    int
	// EarlyFires counts the fires that came up to 59 s before their
	// schedule's time (EventBridge Scheduler fires within the minute).
	EarlyFires                    int
	WorkerCrashes, Recovered      int
	Dispatched, Recreated, Retime int
	CancelledAt                   time.Time
	Trace                         []string
}

// faults are one history's fault rates.
type faults struct {
	throttle, lostAnswer, createErr      float64
	dupFire, dropFire, lateFire          float64
	earlyFire                            float64
	crashAfterClaim, crashAfterSend      float64
	retryableSend, bounce, provisionKill float64
}

type world struct {
	seed    uint64
	rng     *rand.Rand
	f       faults
	clock   *clock.Fake
	st      *inmem.Store
	sched   *inmem.Scheduler
	sender  *inmem.Sender
	worker  *send.Worker
	recon   *reconciler.Reconciler
	canc    *cancel.Canceller
	c       campaign.Campaign
	rep     *Report
	verbose bool

	mu     sync.Mutex
	counts map[string]int // per-key draw counters
	events eventQueue
	seq    int
	// kill cancels the current provisioning run when it creates killName.
	kill     context.CancelFunc
	killName string
	horizon  time.Time // the last reconciler pass
	// early is how long before its time each schedule (name and
	// expression) fires: drawn once, as nextFire asks again and again.
	early map[string]time.Duration
}

var target = campaign.Target{GroupName: "campaigns", FunctionArn: "arn:send", RoleArn: "arn:role", DeadLetterArn: "arn:dlq"}

// draw is a deterministic uniform number for (what, key, n-th draw of it).
func (w *world) draw(what, key string) float64 {
	w.mu.Lock()
	k := what + "|" + key
	n := w.counts[k]
	w.counts[k] = n + 1
	w.mu.Unlock()
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s|%d", w.seed, k, n)
	// FNV's high bits barely move with the last bytes: mix (splitmix64).
	z := h.Sum64() + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

func (w *world) logf(format string, args ...any) {
	if w.verbose {
		w.rep.Trace = append(w.rep.Trace, w.clock.Now().Format("01-02 15:04:05")+" "+fmt.Sprintf(format, args...))
	}
}

// transitions near which most histories start.
var zones = []struct {
	name string
	days []plan.Date
}{
	{"Europe/Berlin", []plan.Date{date(2026, 3, 29), date(2026, 10, 25)}},
	{"America/New_York", []plan.Date{date(2026, 3, 8), date(2026, 11, 1)}},
	{"Australia/Lord_Howe", []plan.Date{date(2026, 4, 5), date(2026, 10, 4)}},
	{"UTC", []plan.Date{date(2026, 6, 15)}},
}

func date(y int, m time.Month, d int) plan.Date { return plan.Date{Year: y, Month: m, Day: d} }

// Run simulates one history and checks it; the error names the broken
// property (and carries the trace when verbose).
func Run(seed uint64, verbose bool) (*Report, error) {
	rng := rand.New(rand.NewPCG(seed, 0xc0ffee))
	rep := &Report{Seed: seed}
	w := &world{seed: seed, rng: rng, rep: rep, verbose: verbose, counts: map[string]int{}, early: map[string]time.Duration{}}
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	w.f = faults{
		throttle: pick(0, 0.2, 0.6), lostAnswer: pick(0, 0.1), createErr: pick(0, 0.05, 0.3),
		dupFire: pick(0, 0.2), dropFire: pick(0, 0.05, 0.2), lateFire: pick(0, 0.1),
		crashAfterClaim: pick(0, 0.1), crashAfterSend: pick(0, 0.1),
		retryableSend: pick(0, 0.1), bounce: pick(0, 0.1), provisionKill: pick(0, 0.3),
	}
	// Drawn after the others, so that they keep their values per seed.
	w.f.earlyFire = pick(0, 0.3)

	// The campaign.
	z := zones[rng.IntN(len(zones))]
	rep.Zone = z.name
	var windows []plan.Window
	for c := plan.Clock(rng.IntN(10 * 60)); c < 23*60 && len(windows) < 1+rng.IntN(3); {
		end := min(c+plan.Clock(10+rng.IntN(300)), 24*60)
		windows = append(windows, plan.Window{Start: c, End: end})
		c = end + plan.Clock(rng.IntN(240))
	}
	var days []time.Weekday
	for d := range time.Weekday(7) {
		if rng.IntN(2) == 0 {
			days = append(days, d)
		}
	}
	if len(days) == 0 {
		days = []time.Weekday{time.Weekday(rng.IntN(7))}
	}
	spd := []int{1, 2, 5, 20}[rng.IntN(4)]
	n := 1 + rng.IntN(min(30, spd*len(days)*2))
	start := z.days[rng.IntN(len(z.days))].AddDays(-rng.IntN(5))
	loc, err := time.LoadLocation(z.name)
	if err != nil {
		return rep, err
	}
	now0 := time.Date(start.Year, start.Month, start.Day, 0, 0, 0, 0, loc).Add(-time.Duration(rng.IntN(48)) * time.Hour)
	rules := plan.Rules{SendsPerDay: spd, Weekdays: days, Windows: windows, TimeZone: z.name, Start: start, NotBefore: now0.Add(10 * time.Minute)}
	sends, err := plan.Plan(n, rules)
	if err != nil {
		return rep, fmt.Errorf("seed %d: plan: %w", seed, err)
	}
	rep.Tasks = n
	w.c = campaign.Campaign{ID: "c1", Subject: "News", Body: "Hello", Rules: rules, Status: campaign.Draft, Total: n, CreatedAt: now0}
	rs := make([]campaign.Recipient, n)
	for i := range rs {
		rs[i].Email = fmt.Sprintf("r%d@example.com", i)
		if rng.Float64() < w.f.bounce {
			rs[i].Email = fmt.Sprintf("bounce%d@example.com", i)
		}
	}
	tok := 0
	tasks, err := campaign.NewTasks(w.c, rs, sends, func() string { tok++; return fmt.Sprintf("tok-%d-%d", seed, tok) }, now0)
	if err != nil {
		return rep, err
	}

	// The ports.
	w.clock = clock.NewFake(now0)
	w.st = inmem.NewStore()
	w.st.PutCampaign(w.c)
	w.st.PutTasks(tasks...)
	w.sched = inmem.NewScheduler(nil)
	w.sched.Fault = w.schedulerFault
	w.sender = inmem.NewSender(w.clock)
	w.sender.Fault = w.senderFault
	w.worker, _ = send.New(crashingTasks{w.st, w}, w.st, crashingSender{w.sender, w}, w.clock, send.DefaultLease)
	w.recon, _ = reconciler.New(reconciler.Config{Target: target, Seed: seed + 1}, w.st, w.st, w.sched, w.sender, dispatcher{w}, w.clock)
	w.canc, _ = cancel.New(w.st, w.st, w.sched, w.clock, target.GroupName, seed+1) // 0 would mean random

	if err := w.provision(); err != nil {
		return rep, w.fail(err)
	}

	// The event loop: fires, deliveries, reconciler passes, the cancel.
	last := sends[len(sends)-1].At
	w.horizon = last.Add(60 * 24 * time.Hour)
	w.push(w.clock.Now().Truncate(30*time.Minute).Add(30*time.Minute), evReconcile, "")
	if rng.IntN(6) == 0 {
		span := last.Sub(sends[0].At)
		rep.CancelledAt = sends[0].At.Add(time.Duration(rng.Int64N(int64(span) + 1))).Add(30 * time.Second)
		w.push(rep.CancelledAt, evCancel, "")
	}
	if err := w.loop(); err != nil {
		return rep, w.fail(err)
	}
	return rep, w.fail(w.check(sends))
}

func (w *world) fail(err error) error {
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf("seed %d (%s, %d tasks): %v\nreplay: CAMPAIGN_SIM_SEED=%d go test -run TestSimulation -v ./internal/campaign/sim/", w.seed, w.rep.Zone, w.rep.Tasks, err, w.seed)
	if w.verbose {
		msg += "\ntrace:\n" + strings.Join(w.rep.Trace, "\n")
	}
	return errors.New(msg)
}

// provision runs the provisioner until done, with deadlines from 20 s to
// 5 min after the margin, and kills some runs midway. One call in flight
// and one task handed out at a time keep the history repeatable (the
// provision tests cover concurrency).
func (w *world) provision() error {
	cps := provision.NewMemoryCheckpoints()
	p, err := provision.New(provision.Config{Target: target, Concurrency: 1, MaxAhead: 1, PageSize: 1 + w.rng.IntN(8), Seed: w.seed + 1, MaxErrorAttempts: 3},
		w.st, w.st, w.sched, cps, w.clock)
	if err != nil {
		return err
	}
	for run := 1; ; run++ {
		if run > 200 {
			return errors.New("provisioning did not complete in 200 runs")
		}
		w.rep.ProvisionRuns++
		ctx, kill := context.WithCancel(context.Background())
		killAt := -1
		if w.rng.Float64() < w.f.provisionKill {
			killAt = w.rng.IntN(w.rep.Tasks)
		}
		w.mu.Lock()
		w.kill, w.killName = kill, ""
		if killAt >= 0 {
			w.killName = campaign.ScheduleName(campaign.TaskID(w.c.ID, killAt))
		}
		w.mu.Unlock()
		deadline := w.clock.Now().Add(provision.DefaultMargin + time.Duration(20+w.rng.IntN(280))*time.Second)
		res, err := p.Run(ctx, w.c.ID, deadline)
		kill()
		switch {
		case errors.Is(err, context.Canceled):
			w.rep.ProvisionCrash++
			saved, _ := cps.Load(context.Background(), w.c.ID)
			w.logf("provision run %d killed (saved checkpoint %d)", run, saved.Next) // a killed run's own counts depend on when it died
			continue
		case err != nil:
			return fmt.Errorf("provision run %d: %w", run, err)
		}
		w.rep.Throttles += res.Throttles
		w.logf("provision run %d: next %d created %d errors %d continue %v calls %d throttles %d deadline %s", run, res.Next, res.Created, res.Errors, res.Continue, res.Calls, res.Throttles, deadline.Format("15:04:05.000"))
		if !res.Continue {
			if !res.Done {
				return errors.New("provisioning stopped without Done or Continue")
			}
			return nil
		}
	}
}

// schedulerFault injects throttles, lost answers, errors and the kill of
// a provisioning run.
func (w *world) schedulerFault(op, name string) (error, bool) {
	w.mu.Lock()
	kill := op == "create" && name == w.killName && w.kill != nil
	if kill {
		w.killName = ""
		w.kill()
	}
	w.mu.Unlock()
	if kill {
		return context.Canceled, false
	}
	switch r := w.draw(op, name); {
	case r < w.f.throttle:
		return fmt.Errorf("%s %s: %w", op, name, campaign.ErrThrottled), false
	case r < w.f.throttle+w.f.createErr*(1-w.f.throttle):
		return fmt.Errorf("%s %s: InternalServerException", op, name), false
	}
	if w.draw("lost-"+op, name) < w.f.lostAnswer {
		w.rep.LostAnswers++
		return fmt.Errorf("%s %s: connection reset", op, name), true
	}
	return nil, false
}

func (w *world) senderFault(m campaign.Message) error {
	if strings.HasPrefix(m.To, "bounce") {
		return errors.New("MessageRejected: address bounces")
	}
	if w.draw("retryable-send", m.IdempotencyKey) < w.f.retryableSend {
		return fmt.Errorf("throttling: maximum sending rate exceeded: %w", campaign.ErrRetryable)
	}
	return nil
}

// crashingSender kills the worker before the send, after its claim.
type crashingSender struct {
	*inmem.Sender
	w *world
}

func (s crashingSender) Send(ctx context.Context, m campaign.Message) (campaign.Receipt, error) {
	if s.w.draw("crash-after-claim", m.IdempotencyKey) < s.w.f.crashAfterClaim {
		panic(errCrash)
	}
	return s.Sender.Send(ctx, m)
}

// crashingTasks kills the worker after its send, before its write.
type crashingTasks struct {
	*inmem.Store
	w *world
}

func (s crashingTasks) Replace(ctx context.Context, prev, next campaign.SendTask) error {
	if prev.State == campaign.Running && s.w.draw("crash-after-send", next.ID) < s.w.f.crashAfterSend {
		panic(errCrash)
	}
	return s.Store.Replace(ctx, prev, next)
}

var errCrash = errors.New("simulated crash")

type dispatcher struct{ w *world }

func (d dispatcher) Dispatch(_ context.Context, e campaign.FireEvent) error {
	d.w.rep.Dispatched++
	d.w.push(d.w.clock.Now().Add(time.Second), evDeliver, e.TaskID+"|0")
	return nil
}

// Events.
const (
	evDeliver   = "deliver"
	evReconcile = "reconcile"
	evCancel    = "cancel"
)

type event struct {
	at   time.Time
	seq  int
	kind string
	arg  string
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

func (w *world) push(at time.Time, kind, arg string) {
	w.seq++
	heap.Push(&w.events, event{at: at, seq: w.seq, kind: kind, arg: arg})
}

// nextFire is the earliest live schedule.
func (w *world) nextFire() (string, time.Time, bool) {
	var name string
	var at time.Time
	for n, r := range w.sched.Schedules() {
		loc := mustLoc(r.Timezone)
		t, err := time.ParseInLocation(plan.LocalLayout, strings.TrimSuffix(strings.TrimPrefix(r.Expression, "at("), ")"), loc)
		if err != nil {
			continue
		}
		t = t.Add(-w.earlyBy(n, r.Expression))
		if name == "" || t.Before(at) || (t.Equal(at) && n < name) {
			name, at = n, t
		}
	}
	return name, at, name != ""
}

// earlyBy is how long before its time the schedule fires: zero, or up to
// 59 s (the fault "invoked early"). The send worker must fail such a fire
// (the retry a minute later sends it), never send before the planned
// time nor drop it.
func (w *world) earlyBy(name, expr string) time.Duration {
	k := name + "|" + expr
	d, ok := w.early[k]
	if !ok {
		if w.draw("early-fire", k) < w.f.earlyFire {
			d = time.Duration(1+int(w.draw("early-by", k)*59)) * time.Second
		}
		w.early[k] = d
	}
	return d
}

func (w *world) open() bool { return w.st.CountOpen(w.c.ID) > 0 }

func (w *world) loop() error {
	ctx := context.Background()
	for steps := 0; ; steps++ {
		if steps > 100_000 {
			return errors.New("no end after 100,000 events")
		}
		name, fireAt, hasFire := w.nextFire()
		if w.events.Len() == 0 && !hasFire {
			if w.open() {
				return fmt.Errorf("no event left at %s (horizon %s) but %d tasks are still open", w.clock.Now(), w.horizon, w.st.CountOpen(w.c.ID))
			}
			return nil
		}
		if !w.open() && !hasFire {
			return nil
		}
		if hasFire && (w.events.Len() == 0 || !w.events[0].at.Before(fireAt)) {
			w.clock.Set(fireAt)
			expr := w.sched.Schedules()[name].Expression
			w.sched.Remove(name) // ActionAfterCompletion DELETE
			w.rep.Fires++
			if w.early[name+"|"+expr] > 0 {
				w.rep.EarlyFires++
				w.logf("fire %s %s early", name, w.early[name+"|"+expr])
			}
			taskID := strings.TrimPrefix(name, campaign.ScheduleNamePrefix)
			if w.draw("drop-fire", name) < w.f.dropFire {
				w.rep.DLQ++
				w.logf("fire %s dropped to the DLQ", taskID)
				continue
			}
			delay := time.Duration(w.rng.IntN(20)) * time.Second
			if w.draw("late-fire", name) < w.f.lateFire {
				delay = time.Duration(10+w.rng.IntN(120)) * time.Minute
			}
			w.push(fireAt.Add(delay), evDeliver, taskID+"|0")
			if w.draw("dup-fire", name) < w.f.dupFire {
				w.rep.DuplicateFires++
				w.push(fireAt.Add(delay+time.Duration(w.rng.IntN(40))*time.Second), evDeliver, taskID+"|0")
			}
			continue
		}
		e := heap.Pop(&w.events).(event)
		w.clock.Set(e.at)
		switch e.kind {
		case evReconcile:
			if next := e.at.Add(30 * time.Minute); !next.After(w.horizon) {
				w.push(next, evReconcile, "")
			}
			if !w.open() {
				continue
			}
			res, err := w.recon.Run(ctx, w.clock.Now().Add(15*time.Minute))
			if err != nil {
				return fmt.Errorf("reconciler: %w", err)
			}
			w.rep.Recovered += res.Finished + res.Requeued
			w.rep.Recreated += res.Recreated
			w.rep.Retime += res.Retimed
			if !reflect.DeepEqual(res, reconciler.Result{Checked: res.Checked}) {
				w.logf("reconcile %+v", res)
			}
		case evCancel:
			res, err := w.canc.Cancel(ctx, w.c.ID, "cancelled in the simulation", w.clock.Now().Add(15*time.Minute))
			if err != nil {
				return fmt.Errorf("cancel: %w", err)
			}
			w.logf("cancel %+v", res)
		case evDeliver:
			taskID, try, _ := strings.Cut(e.arg, "|")
			w.deliver(taskID, try)
		}
	}
}

// deliver invokes the send worker once; a crash or an error is retried
// by the asynchronous invoke up to 2 times, a minute apart.
func (w *world) deliver(taskID, try string) {
	out, err := func() (out send.Outcome, err error) {
		defer func() {
			if r := recover(); r != nil {
				if r != errCrash {
					panic(r)
				}
				w.rep.WorkerCrashes++
				err = errCrash
			}
		}()
		return w.worker.Handle(context.Background(), campaign.FireEvent{CampaignID: w.c.ID, TaskID: taskID})
	}()
	w.logf("deliver %s (try %s): %s %v", taskID, try, out, err)
	if err != nil && try != "2" {
		next := map[string]string{"0": "1", "1": "2"}[try]
		w.push(w.clock.Now().Add(time.Minute), evDeliver, taskID+"|"+next)
	}
}

// check verifies the end state.
func (w *world) check(sends []plan.Send) error {
	ctx := context.Background()
	c, _ := w.st.Campaign(ctx, w.c.ID)
	if c.Status != campaign.Active && c.Status != campaign.Completed && c.Status != campaign.CampaignCancelled {
		return fmt.Errorf("campaign ends %s: provisioning did not complete", c.Status)
	}
	if open := w.st.CountOpen(w.c.ID); (open == 0) != (c.Status == campaign.Completed) && c.Status != campaign.CampaignCancelled {
		return fmt.Errorf("campaign ends %s with %d open tasks: Completed exactly when none is open", c.Status, open)
	}
	perKey := map[string]int{}
	for _, m := range w.sender.Outbox {
		perKey[m.IdempotencyKey]++
	}
	tasks := w.st.All(w.c.ID)
	if len(tasks) != len(sends) {
		return fmt.Errorf("%d tasks for %d planned sends", len(tasks), len(sends))
	}
	for i, t := range tasks {
		if !t.SendAt.Equal(sends[i].At) && t.Retimed == 0 {
			return fmt.Errorf("task %s send time moved without a retime", t.ID)
		}
		sent := perKey[t.IdempotencyKey()]
		delete(perKey, t.IdempotencyKey())
		switch t.State {
		case campaign.Finished:
			w.rep.Finished++
			if sent != 1 {
				return fmt.Errorf("task %s Finished with %d messages", t.ID, sent)
			}
			rc, err := w.sender.Sent(ctx, t.IdempotencyKey())
			if err != nil || !rc.SentAt.Equal(t.SentAt) {
				return fmt.Errorf("task %s sentAt %s, receipt %s", t.ID, t.SentAt, rc.SentAt)
			}
			if ok, _ := w.c.Rules.Allows(t.SentAt); !ok {
				return fmt.Errorf("task %s sent at %s, outside the windows", t.ID, t.SentAt.In(mustLoc(w.c.Rules.TimeZone)).Format(time.DateTime+" Mon"))
			}
			if t.SentAt.Before(sends[i].At) {
				return fmt.Errorf("task %s sent at %s, before its planned %s", t.ID, t.SentAt, sends[i].At)
			}
			if !w.rep.CancelledAt.IsZero() && t.SentAt.After(w.rep.CancelledAt) && !t.ClaimedAt.Before(w.rep.CancelledAt) {
				return fmt.Errorf("task %s claimed at %s and sent after the cancel at %s", t.ID, t.ClaimedAt, w.rep.CancelledAt)
			}
		case campaign.Failed:
			w.rep.Failed++
			if t.Error == "" || sent != 0 {
				return fmt.Errorf("task %s Failed (%q) with %d messages", t.ID, t.Error, sent)
			}
		case campaign.Cancelled:
			w.rep.Cancelled++
			if t.Reason == "" || sent != 0 {
				return fmt.Errorf("task %s Cancelled (%q) with %d messages", t.ID, t.Reason, sent)
			}
		default:
			return fmt.Errorf("task %s ends %s: never settled (stale Running not recovered, or a lost fire never re-sent)", t.ID, t.State)
		}
	}
	if len(perKey) > 0 {
		return fmt.Errorf("messages for no task: %v", perKey)
	}
	if left := w.sched.Schedules(); len(left) > 0 && w.rep.CancelledAt.IsZero() {
		return fmt.Errorf("%d schedules left after every task settled", len(left))
	}
	return nil
}

var locs sync.Map

func mustLoc(name string) *time.Location {
	if l, ok := locs.Load(name); ok {
		return l.(*time.Location)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err) // the simulation's zones are fixed
	}
	locs.Store(name, loc)
	return loc
}
