// Package sim is a deterministic fault-injection simulation of the whole
// pipeline (docs/simulation.md): the real code of every stage on the
// core's in-process pipeline (harness.go), a virtual clock and one seeded
// source. Workloads: to-do tasks (this file, I1 to I6), campaign sends
// (campaign.go), future events and deferred jobs (adopter.go).
package sim

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/todo/api"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/memory/snsfake"
	"github.com/unschedule/unschedule/internal/tooling/pipeline"
)

// Expirer is the expiry use case as the scheduler and the reconciler call
// it (*task.Service).
type Expirer = task.Expirer

// Mutation breaks one guarantee on purpose, to show that the simulation
// catches it. The zero value breaks nothing.
type Mutation struct {
	Name            string                                                 // describes the mutation
	Store           func(task.Store) task.Store                            // wraps the task service's store
	DedupID         func(m cancel.Message, n int) string                   // replaces the n-th send's FIFO deduplication id
	WorkerScheduler func(timer.Timer) timer.Timer                          // wraps the cancellation worker's scheduler
	Expirer         func(e Expirer, n task.Notifier, s task.Store) Expirer // wraps the expiry over notifier n and store s
	Pending         func(task.PendingLister) task.PendingLister            // wraps the reconciler's listing of the tasks due
	Outcome         func(out string, err error) (string, error)            // wraps what the expiry function answers a firing
	Adopter         AdopterMutation                                        // breaks the future events' or deferred jobs' workload

	CampaignSender      func(campaign.Sender) campaign.Sender           // wraps the campaign's sender (the worker's and the reconciler's)
	CampaignWorkerAhead time.Duration                                   // the send worker's clock runs this far ahead
	CampaignOwners      func(campaign.SenderCheck) campaign.SenderCheck // wraps the services' sender check
}

// Workload is what a history runs through the core.
type Workload string

// The workloads.
const (
	WorkloadTasks        Workload = "tasks"        // the zero value: to-do tasks with deadlines and reminders
	WorkloadCampaigns    Workload = "campaigns"    // one email campaign's sends (campaign.go)
	WorkloadFutureEvents Workload = "futureevents" // the futureevents client and dispatcher (futureevents.go)
	WorkloadDeferredJobs Workload = "deferredjobs" // the deferredjobs writer and jobdispatch (deferredjobs.go)
)

// Workloads lists the workloads, in report order.
var Workloads = []Workload{WorkloadTasks, WorkloadCampaigns, WorkloadFutureEvents, WorkloadDeferredJobs}

// ParseWorkload reads a workload's name.
func ParseWorkload(s string) (Workload, error) {
	if slices.Contains(Workloads, Workload(s)) {
		return Workload(s), nil
	}
	return "", fmt.Errorf("unknown workload %q: use tasks, campaigns, futureevents or deferredjobs", s)
}

// Config is one history.
type Config struct {
	Seed            int64
	Workload        Workload          // what the history runs; zero for tasks
	Mutation        Mutation          // applied to the stages; zero for the real code
	ConcurrentFires bool              // also inject FaultConcurrentFire
	AnyWriter       bool              // write a fifth of the tasks straight into the table, not through the API
	Timer           timerspec.Name    // the timer that fires, with its own faults (zero: the default kind)
	Trace           func(line string) // when set, receives a line per step
}

// Violation is a broken invariant.
type Violation struct {
	Invariant string
	Msg       string
}

func (v Violation) String() string { return v.Invariant + ": " + v.Msg }

// Counts are what histories did, for the report.
type Counts struct {
	// Tasks created, API requests served, notifications published.
	Tasks, Requests, Notifications int
	// Reminders published; RemindersOwed: reminder times I6's liveness owed.
	Reminders, RemindersOwed int
	// PutDirect counts the tasks written straight into the table, not through the API.
	PutDirect int
	// A campaign's planned sends, and how they ended.
	Sends, Sent, SendsFailed, SendsCancelled int
	// An adopter's items written, and its target's runs.
	Items, Deliveries int
}

// add adds o's counts to c's.
func (c *Counts) add(o Counts) {
	sum, more := reflect.ValueOf(c).Elem(), reflect.ValueOf(o)
	for i := range sum.NumField() {
		sum.Field(i).SetInt(sum.Field(i).Int() + more.Field(i).Int())
	}
}

// Result is what one history did.
type Result struct {
	Seed       int64
	Violations []Violation
	Faults     map[Fault]int
	Counts
	// Lags are notification times minus deadlines, one per notification.
	Lags []time.Duration
}

// Failed reports whether an invariant broke.
func (r Result) Failed() bool { return len(r.Violations) > 0 }

const (
	grace        = reconcile.DefaultGrace
	maxAttempts  = 4 // the first invocation and the scheduler's 3 retries
	webURL       = "https://app.example"
	userPrefix   = "00000000-0000-4000-8000-"
	topicArnBase = "arn:aws:sns:eu-west-1:111122223333:unschedule-notify-"
)

var start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

type user struct {
	sub, email string
	confirmed  bool
}

// taskState is the oracle's view of a task: what its owner did and saw.
type taskState struct {
	id, user string
	ops      []op
	// dupAllowed counts faults that may each cause one extra notification
	// (a crash between the publish and its record); concurrent counts
	// concurrent duplicate invocations (reported, they allow none).
	dupAllowed, concurrent int
	notes                  []note
	// reminders are the reminders its owner received (I6).
	reminders []note
	// remDupAllowed counts the faults that may each cause one extra
	// reminder; remDead: a reminder's invocation used up its attempts
	// (redriven after every deadline: too late to owe it).
	remDupAllowed int
	remDead       bool
	// remHandled is when the worker handled a message carrying each
	// reminder time (keyed by task.FormatTime; see handledBefore).
	remHandled map[string][]time.Time
}

type opKind string

const (
	opCreate   opKind = "create"
	opSetDue   opKind = "setDue"
	opEdit     opKind = "edit"
	opComplete opKind = "complete"
	opDelete   opKind = "delete"
	opRemind   opKind = "remind" // the reminder alone
)

type op struct {
	seq    int
	at     time.Time
	kind   opKind
	due    time.Time
	status int
	// reminder is what a create or a remind set.
	reminder task.Reminder
	// byWriter marks a complete by completeWithFiredState.
	byWriter bool
}

func (o op) ok() bool { return o.status < 300 }

type note struct {
	seq int
	at  time.Time
	n   task.Notification
}

// core is what every workload's history shares: the seeded source, the
// fault injection (inject), the trace (tracef) and the reports (violate).
type core struct {
	cfg       Config
	rng       *rand.Rand
	res       Result
	intensity float64
	faultsOn  bool
	injected  int
	// now is the virtual clock; trace lines show the time since epoch.
	now   func() time.Time
	epoch time.Time
}

// newCore seeds the history's source and draws its fault intensity: some
// histories are calm, some stormy.
func newCore(cfg Config) core {
	rng := rand.New(rand.NewSource(cfg.Seed))
	c := core{cfg: cfg, rng: rng, res: Result{Seed: cfg.Seed, Faults: map[Fault]int{}}}
	c.intensity = []float64{0, 0.3, 1, 1, 2, 3}[rng.Intn(6)]
	return c
}

type world struct {
	*harness
	inAPI bool
	seq   int

	mem     *memory.Store
	sns     *snsfake.SNS
	topics  []string
	expirer Expirer
	firer   *task.Firer
	api     *api.Handler
	subs    *notify.Subscriber

	users     []*user
	byUser    map[string]*user
	tasks     map[string]*taskState
	taskOrder []string

	// current is the schedule whose firing runs (for a concurrent one);
	// nested says the concurrent one runs.
	current *contract.Schedule
	nested  bool
	passEnd time.Time
}

// Run simulates the history of cfg.Seed and checks its workload's
// invariants (the tasks': I1 to I6, docs/simulation.md#tasks).
func Run(cfg Config) Result {
	kindOf(cfg.Timer) // an unregistered timer panics here, before the history
	switch cfg.Workload {
	case WorkloadTasks, "":
		w := newWorld(cfg)
		w.history()
		return w.res
	case WorkloadCampaigns:
		return runCampaign(cfg)
	case WorkloadFutureEvents:
		return runFutureEvents(cfg)
	case WorkloadDeferredJobs:
		return runDeferredJobs(cfg)
	}
	panic(fmt.Sprintf("sim: unknown workload %q", cfg.Workload))
}

// newWorld builds the to-do app's pipeline (pipeline.New) with the
// history's faults and the mutation.
func newWorld(cfg Config) *world {
	w := &world{harness: newHarness(cfg, "I4"), byUser: map[string]*user{}, tasks: map[string]*taskState{}}
	rng := w.rng
	w.blameKey = groupTask
	w.onHandle = w.noteReminderHandled
	w.onRedrive = func(inv inproc.Invocation) {
		if inv.Schedule.Payload.IsReminder() {
			w.task(inv.Schedule.Payload.Key.Sort).remDead = true
		}
	}
	for i := range 1 + rng.Intn(3) {
		w.topics = append(w.topics, fmt.Sprintf("%s%d", topicArnBase, i))
	}
	w.sns = snsfake.New(w.topics...)
	w.sns.Fail = func(op string) error {
		if op != "Publish" && w.inject(FaultSignInSNSFailed, 0.15) {
			return fmt.Errorf("sns %s: %w", op, errThrottled)
		}
		return nil
	}
	pub, err := awssns.NewPublisher(w.sns, w.topics)
	must(err)
	notifier := &recNotifier{w: w, pub: pub}
	var store task.Store
	p, err := pipeline.New(pipeline.Options{Options: w.options(start, func(c changefeed.Change) string { return c.Key.Sort }),
		IDs: &simIDs{rng: rng}, WebURL: webURL, Notifier: notifier,
		Store: func(s task.Store) task.Store {
			store = faultyStore{Store: s, w: w}
			if cfg.Mutation.Store != nil {
				store = cfg.Mutation.Store(store)
			}
			return store
		},
		Wire: func(p *pipeline.Pipeline, wr inproc.Wiring) inproc.Wiring {
			wr = w.wiring(p.Engine, wr)
			var pending task.PendingLister = p.Store
			if cfg.Mutation.Pending != nil {
				pending = cfg.Mutation.Pending(pending)
			}
			wr.Fire, wr.Items, wr.Firer = w.fire, task.NewReconcileView(p.Store, pending), task.FireByExpire{Expirer: reconExpirer{w}}
			return wr
		}})
	must(err)
	w.wired()
	w.mem, w.firer, w.expirer = p.Store, p.Firer, p.Firer
	w.schedulerFaults(w.fsched, func(name string) {
		id, ok := task.TaskIDFromScheduleName(name)
		if !ok {
			id, _ = task.TaskIDFromReminderName(name)
		}
		w.blame(id)
	}, func() bool { return w.inAPI })
	if cfg.Mutation.Expirer != nil {
		w.expirer = cfg.Mutation.Expirer(w.firer, notifier, store)
	}
	if cfg.Mutation.WorkerScheduler != nil {
		w.e.Worker, err = cancel.NewWorker(task.Schema, cfg.Mutation.WorkerScheduler(w.fsched), nil, discard)
		must(err)
		w.e.Worker.SetClock(w.clock.Now)
	}
	w.api = api.New(p.Service, pagecursor.NewRandom(), nil, discard)
	subs, err := awssns.NewSubscriptions(w.sns)
	must(err)
	w.subs, err = notify.NewSubscriber(notify.SubscriberDeps{Subscriptions: subs, Settings: memory.NewSettings(),
		TopicArns: w.topics, Log: discard})
	must(err)
	for i := range 1 + rng.Intn(6) {
		u := &user{sub: fmt.Sprintf("%s%012x", userPrefix, rng.Int63()&0xffffffffffff),
			email: fmt.Sprintf("user%d@example.com", i)}
		w.users = append(w.users, u)
		w.byUser[u.sub] = u
	}
	return w
}

// noteReminderHandled records when the worker handled a message carrying
// a reminder time (I6).
func (w *world) noteReminderHandled(d cancel.Delivery) {
	m, err := cancel.Parse(d.Body)
	if err != nil || m.Action == cancel.ActionCancel || m.RemindAt.IsZero() {
		return
	}
	t := w.task(groupTask(d.GroupID))
	k := task.FormatTime(m.RemindAt)
	t.remHandled[k] = append(t.remHandled[k], w.clock.Now())
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func (w *core) tracef(format string, args ...any) {
	if w.cfg.Trace != nil {
		w.cfg.Trace(w.now().Sub(w.epoch).String() + " " + fmt.Sprintf(format, args...))
	}
}

func (w *core) violate(inv, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	w.tracef("VIOLATION %s: %s", inv, msg)
	w.res.Violations = append(w.res.Violations, Violation{Invariant: inv, Msg: msg})
}

func (w *world) task(id string) *taskState {
	t, ok := w.tasks[id]
	if !ok {
		t = &taskState{id: id, remHandled: map[string][]time.Time{}}
		w.tasks[id] = t
	}
	return t
}

func (w *world) history() {
	w.faultsOn = true
	for _, u := range w.users {
		w.signIn(u)
	}
	ticks := 40 + w.rng.Intn(160)
	for range ticks {
		w.tick(true)
	}
	// At rest: the pipeline drained, a fault-free reconciler pass, then I3.
	// A Pending task due while the pass ran may lack a schedule: the pass
	// leaves tasks due within the grace period to their firing schedule.
	w.passEnd = w.quiesce("I3")
	w.checkAtRest()
	// On, with faults, past every deadline and the grace period, and
	// every reminder schedule a stale (replayed) message made meanwhile.
	w.faultsOn = true
	end := w.lastDue().Add(grace + time.Minute)
	for w.clock.Now().Before(end) {
		w.tick(false)
		if last := w.lastReminder(); !last.IsZero() && last.Add(grace+time.Minute).After(end) {
			end = last.Add(grace + time.Minute)
		}
	}
	w.finish("I3")
	w.checkFinal()
}

// tick moves the clock on by a few seconds and runs, in random order, the
// API requests of this instant and one round of every stage.
func (w *world) tick(ops bool) {
	var acts []func()
	if ops {
		for range w.rng.Intn(4) {
			acts = append(acts, w.apiOp)
		}
		if w.rng.Float64() < 0.3 {
			acts = append(acts, w.race)
		}
		if w.rng.Float64() < 0.03 {
			acts = append(acts, func() { w.signIn(w.users[w.rng.Intn(len(w.users))]) })
		}
	}
	w.harness.tick(time.Duration(1+w.rng.Intn(15))*time.Second, acts)
}

func (w *world) lastDue() time.Time {
	last := w.clock.Now()
	for _, t := range w.mem.All() {
		if t.DueAt.After(last) {
			last = t.DueAt
		}
	}
	if r := w.lastReminder(); r.After(last) {
		last = r
	}
	return last
}

// lastReminder is the time of the latest reminder schedule, or of any
// on a timer that keeps stale executions (docs/simulation.md#stale-executions-at-rest).
func (w *world) lastReminder() time.Time {
	var last time.Time
	for _, sc := range w.sched.All() {
		_, reminder := task.TaskIDFromReminderName(sc.Name)
		if (reminder || kindOf(w.cfg.Timer).KeepsStale) && sc.At.After(last) {
			last = sc.At
		}
	}
	return last
}

// API requests.

func (w *world) serve(u *user, method, route, taskID string, body any) api.Response {
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	w.inAPI = true
	resp := w.api.Serve(w.ctx, api.Request{Method: method, Route: route, ID: taskID, UserID: u.sub, Body: b})
	w.inAPI = false
	w.res.Requests++
	if resp.Status >= 500 {
		w.violate("I4", "%s %s %s answered %d: %s", method, route, taskID, resp.Status, resp.Body)
	}
	return resp
}

func (w *world) record(id string, o op) {
	w.seq++
	o.seq, o.at = w.seq, w.clock.Now()
	t := w.task(id)
	t.ops = append(t.ops, o)
	by := "api"
	if o.byWriter {
		by = "writer"
	}
	w.tracef("%s %s %s due=%s -> %d", by, o.kind, id, task.FormatTime(o.due), o.status)
}

func (w *world) apiOp() {
	if len(w.taskOrder) == 0 || w.rng.Float64() < 0.3 {
		w.create()
		return
	}
	// Mostly tasks the oracle believes Pending, sometimes any.
	id := w.taskOrder[w.rng.Intn(len(w.taskOrder))]
	for range 3 {
		if w.believedPending(id) {
			break
		}
		id = w.taskOrder[w.rng.Intn(len(w.taskOrder))]
	}
	if w.rng.Float64() < 0.05 {
		w.completeWithFiredState(id)
		return
	}
	w.mutate(id, w.rng.Intn(10))
}

// completeWithFiredState completes a Pending task as an adopter's writer
// does whose "complete" is the schema's fired state: a plain write of
// task.Schema.FiredState, without the claim marks only the library
// writes. No firing may notify or remind it (I1, I6), nor leave a
// schedule (I3).
func (w *world) completeWithFiredState(id string) {
	t := w.tasks[id]
	status := http.StatusConflict
	if cur, err := w.mem.Get(w.ctx, t.user, id); err == nil && cur.Status == task.StatusPending {
		cur.Status, cur.UpdatedAt = task.Status(task.Schema.FiredState), w.clock.Now()
		w.mem.PutItem(cur)
		w.res.Faults[FaultWriterFiredState]++ // a writer's behaviour, not a failure: not counted as injected
		status = http.StatusOK
	}
	w.record(id, op{kind: opComplete, status: status, byWriter: true})
}

func (w *world) believedPending(id string) bool {
	t := w.tasks[id]
	for _, o := range t.ops {
		if o.ok() && (o.kind == opComplete || o.kind == opDelete) {
			return false
		}
	}
	return !w.currentDue(t).Before(w.clock.Now())
}

func (w *world) currentDue(t *taskState) time.Time {
	var d time.Time
	for _, o := range t.ops {
		if o.ok() && (o.kind == opCreate || o.kind == opSetDue) {
			d = o.due
		}
	}
	return d
}

func (w *world) create() {
	if w.cfg.AnyWriter && w.rng.Float64() < 0.2 {
		w.putDirect()
		return
	}
	u := w.users[w.rng.Intn(len(w.users))]
	lead := 20 * 60
	if w.rng.Float64() < 0.25 {
		lead = 75 * 60 // some reach past a 15-minute and a 1-hour reminder
	}
	due := w.clock.Now().Add(time.Duration(1+w.rng.Intn(lead)) * time.Second).Truncate(time.Second)
	body := map[string]string{"title": fmt.Sprintf("task %d", len(w.taskOrder)), "dueAt": task.FormatTime(due)}
	rem := task.DefaultReminder
	if c := w.pickReminder(); c != "" {
		rem, body["reminder"] = c, string(c)
	}
	resp := w.serve(u, http.MethodPost, api.RouteTasks, "", body)
	if resp.Status != http.StatusCreated {
		w.violate("I4", "create of a valid task answered %d: %s", resp.Status, resp.Body)
		return
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(resp.Body, &out); err != nil || !task.ValidID(out.ID) {
		w.violate("I4", "create answered an unreadable task: %s", resp.Body)
		return
	}
	w.res.Tasks++
	w.task(out.ID).user = u.sub
	w.taskOrder = append(w.taskOrder, out.ID)
	w.record(out.ID, op{kind: opCreate, due: due, status: resp.Status, reminder: rem})
}

// pickReminder is a create's or an edit's reminder choice ("" for none
// named: the default).
func (w *world) pickReminder() task.Reminder {
	return []task.Reminder{"", task.ReminderNone, task.Reminder15m, task.Reminder15m, task.Reminder15m,
		task.Reminder1h, task.Reminder1h, task.Reminder1d}[w.rng.Intn(8)]
}

// putDirect writes a Pending task straight into the table as code that
// is not the API would (no schedule, no inline mark, half of them without
// a schedule token, the due time in any writer's spelling): the stream
// path must schedule it, and every invariant holds for it.
func (w *world) putDirect() {
	u := w.users[w.rng.Intn(len(w.users))]
	now := w.clock.Now().Truncate(time.Second)
	due := now.Add(time.Duration(1+w.rng.Intn(20*60)) * time.Second)
	ids := &simIDs{rng: w.rng}
	t := task.Task{UserID: u.sub, TaskID: ids.NewID(now), Title: fmt.Sprintf("task %d (put)", len(w.taskOrder)),
		Status: task.StatusPending, DueAt: due, CreatedAt: now, UpdatedAt: now}
	if w.rng.Float64() < 0.5 {
		t.ScheduleToken = ids.NewToken()
	}
	spellings := contract.WriterSpellings(due)
	if err := w.mem.PutItemSpelled(t, spellings[w.rng.Intn(len(spellings))]); err != nil {
		w.violate("I4", "a writer's spelling of %s was refused: %v", task.FormatTime(due), err)
		return
	}
	w.res.Tasks++
	w.res.PutDirect++
	w.task(t.TaskID).user = u.sub
	w.taskOrder = append(w.taskOrder, t.TaskID)
	w.record(t.TaskID, op{kind: opCreate, due: due, status: http.StatusCreated, reminder: task.ReminderNone})
}

// mutate applies change k (0-9) to task id as its owner.
func (w *world) mutate(id string, k int) {
	t := w.tasks[id]
	u := w.byUser[t.user]
	now := w.clock.Now()
	switch {
	case k < 2: // deadline later
		due := w.currentDue(t)
		if due.Before(now) {
			due = now
		}
		w.setDue(u, id, due.Add(time.Duration(1+w.rng.Intn(600))*time.Second))
	case k == 4 && w.rng.Float64() < 0.5: // reminder changed
		r := w.pickReminder()
		if r == "" {
			r = task.Reminder15m
		}
		w.patch(u, id, map[string]string{"reminder": string(r)}, op{kind: opRemind, reminder: r})
	case k < 4: // deadline earlier (still in the future)
		cur := w.currentDue(t)
		span := int(cur.Sub(now) / time.Second)
		if span < 2 {
			span = 2
		}
		w.setDue(u, id, now.Add(time.Duration(1+w.rng.Intn(span-1))*time.Second))
	case k < 5:
		w.patch(u, id, map[string]string{"title": "edited", "description": "x"}, op{kind: opEdit})
	case k < 8:
		w.patch(u, id, map[string]string{"status": "done"}, op{kind: opComplete})
	default:
		resp := w.serve(u, http.MethodDelete, api.RouteTask, id, nil)
		w.record(id, op{kind: opDelete, status: resp.Status})
	}
	if w.rng.Float64() < 0.05 {
		// Another user tries the same task: never theirs.
		other := w.users[w.rng.Intn(len(w.users))]
		if other.sub != t.user {
			resp := w.serve(other, http.MethodGet, api.RouteTask, id, nil)
			if resp.Status != http.StatusNotFound {
				w.violate("I5", "user %s read task %s of user %s: %d", other.sub, id, t.user, resp.Status)
			}
		}
	}
}

func (w *world) setDue(u *user, id string, due time.Time) {
	due = due.Truncate(time.Second)
	w.patch(u, id, map[string]string{"dueAt": task.FormatTime(due)}, op{kind: opSetDue, due: due})
}

// patch is owner u's PATCH of task id with body, recorded as o.
func (w *world) patch(u *user, id string, body map[string]string, o op) {
	o.status = w.serve(u, http.MethodPatch, api.RouteTask, id, body).Status
	w.record(id, o)
}

// race changes the deadline of, or completes, a task whose schedule fires
// in this very instant (the order within the tick is random).
func (w *world) race() {
	now := w.clock.Now()
	for _, sc := range w.sched.All() {
		if sc.At.After(now) {
			continue
		}
		id := sc.Payload.Key.Sort
		if w.tasks[id] == nil {
			continue
		}
		w.count(FaultDeadlineRace)
		w.tracef("race on %s", id)
		if k := w.rng.Intn(4); k < 3 {
			w.mutate(id, []int{0, 2, 5}[k])
		} else {
			w.completeWithFiredState(id)
		}
		return
	}
}

// PostAuthentication.

func (w *world) signIn(u *user) {
	out := w.subs.OnSignIn(w.ctx, u.sub, u.email)
	w.tracef("sign-in %s: %s", u.email, out)
	if !u.confirmed && len(w.sns.Subscriptions(u.email)) > 0 && w.rng.Float64() < 0.8 {
		must(w.sns.Confirm(notify.TopicFor(w.topics, u.sub), u.email))
		u.confirmed = true
	}
}

// The scheduler and the expiry function.

// fire is one invocation of the expiry function with a schedule's input:
// a failure must have an injected cause.
func (w *world) fire(_ context.Context, sc contract.Schedule) (string, error) {
	c0 := w.injected
	w.current = &sc
	id, out, err := w.runSchedule(sc)
	w.current = nil
	if id == "" {
		w.violate("I4", "schedule %s has a payload the expiry function cannot read: %v", sc.Name, err)
		return "", nil
	}
	w.tracef("%s %s due %s: %s %v", sc.Name, id, task.FormatTime(sc.Payload.Due), out, err)
	w.checkFiring(c0, sc, id, err)
	return out, err
}

// runSchedule is what the expiry function does with a schedule's input
// (pipeline.Expire), mutated; id is "" when the input is unreadable.
func (w *world) runSchedule(sc contract.Schedule) (id string, out string, err error) {
	id, out, err = pipeline.Expire(w.ctx, w.expirer, w.firer, sc)
	if id != "" && w.cfg.Mutation.Outcome != nil {
		out, err = w.cfg.Mutation.Outcome(out, err)
	}
	return id, out, err
}

// reconExpirer is the expiry as the reconciler calls it, traced.
type reconExpirer struct{ w *world }

func (r reconExpirer) Expire(ctx context.Context, req task.ExpireRequest) (task.ExpireOutcome, error) {
	out, err := r.w.expirer.Expire(ctx, req)
	r.w.tracef("reconciler expiry %s due %s: %s %v", req.TaskID, task.FormatTime(req.DueAt), out, err)
	return out, err
}

// recNotifier publishes through the SNS adapter and records what it sent.
type recNotifier struct {
	w   *world
	pub *awssns.Publisher
}

func (n *recNotifier) Publish(ctx context.Context, nt task.Notification) error {
	w := n.w
	if sc := w.current; sc != nil && w.cfg.ConcurrentFires && !w.nested && w.inject(FaultConcurrentFire, 0.05) {
		// The duplicate invocation runs now, between the first one's
		// conditional write (or claim) and its publish. If it fails, the
		// scheduler retries it like any other invocation.
		w.nested = true
		w.task(nt.TaskID).concurrent++
		_, out, err := w.runSchedule(*sc)
		w.tracef("concurrent firing of %s: %s %v", sc.Name, out, err)
		w.nested = false
		if err != nil {
			w.e.Invoke(*sc, w.clock.Now().Add(time.Minute), 1)
		}
	}
	if w.inject(FaultPublishFailed, 0.10) {
		return fmt.Errorf("publish: %w", errThrottled)
	}
	before := len(w.sns.Deliveries())
	if err := n.pub.Publish(ctx, nt); err != nil {
		w.violate("I5", "publish of %s failed without an injected fault: %v", nt.TaskID, err)
		return err
	}
	w.seq++
	t := w.task(nt.TaskID)
	if nt.Reminder != "" {
		t.reminders = append(t.reminders, note{seq: w.seq, at: w.clock.Now(), n: nt})
		w.res.Reminders++
		w.tracef("reminded %s due %s (%s)", nt.TaskID, task.FormatTime(nt.DueAt), nt.Reminder)
	} else {
		t.notes = append(t.notes, note{seq: w.seq, at: w.clock.Now(), n: nt})
		w.res.Notifications++
		w.res.Lags = append(w.res.Lags, w.clock.Now().Sub(nt.DueAt))
		w.tracef("notified %s due %s", nt.TaskID, task.FormatTime(nt.DueAt))
	}
	n.checkDeliveries(nt, w.sns.Deliveries()[before:])
	if w.inject(FaultCrashAfterPublish, 0.04) {
		if nt.Reminder != "" {
			t.remDupAllowed++
		} else {
			t.dupAllowed++
		}
		return errCrash
	}
	return nil
}

// checkDeliveries: a notification goes to its owner's email when the
// owner confirmed, and to no one else.
func (n *recNotifier) checkDeliveries(note task.Notification, got []snsfake.Delivery) {
	w := n.w
	owner := w.byUser[note.UserID]
	want := 0
	if owner != nil && owner.confirmed {
		want = 1
	}
	mine := 0
	for _, d := range got {
		if owner == nil || d.Endpoint != owner.email {
			w.violate("I5", "notification of task %s (user %s) was delivered to %s", note.TaskID, note.UserID, d.Endpoint)
			continue
		}
		mine++
		if !strings.Contains(d.Message, note.TaskID) {
			w.violate("I5", "notification of task %s does not link it: %q", note.TaskID, d.Message)
		}
	}
	if mine != want {
		w.violate("I5", "notification of task %s reached its confirmed owner %d times, want %d", note.TaskID, mine, want)
	}
}

// simIDs makes ULIDs and tokens from the seeded source.
type simIDs struct{ rng *rand.Rand }

func (s *simIDs) NewID(now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16) // 48 bits of milliseconds
	return s.encode(b, 6)
}

func (s *simIDs) NewToken() string { return s.encode([16]byte{}, 0) }

// encode fills b with seeded bytes from index from on.
func (s *simIDs) encode(b [16]byte, from int) string {
	for i := from; i < len(b); i++ {
		b[i] = byte(s.rng.Intn(256))
	}
	return task.EncodeULID(b)
}
