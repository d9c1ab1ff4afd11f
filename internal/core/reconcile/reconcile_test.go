package reconcile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/reconcile"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

var (
	t0    = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	quiet = slog.New(slog.DiscardHandler)
)

// schema is the fixture's table (timertest.Schema: armed state Pending,
// fired state Fired), and marks its armed index, which records the
// reconciler's confirmations as the constructs' may.
var (
	schema = timertest.Schema
	marks  = armedindex.Spec{ConfirmedAttr: "scheduledFor", RepairAttr: "scheduleRepair", UpdatedAttr: "updatedAt"}.WithDefaults(schema)
)

type memCheckpoints struct {
	cp    reconcile.Checkpoint
	saves int
	err   error
}

func (m *memCheckpoints) Load(context.Context) (reconcile.Checkpoint, error) { return m.cp, m.err }
func (m *memCheckpoints) Save(_ context.Context, cp reconcile.Checkpoint) error {
	m.saves++
	m.cp = cp
	return m.err
}

// staleView lists items as they were (rows), not as they are; it reads
// (Get) and marks the table as it is.
type staleView struct {
	inmem.Marking
	rows []row
}

func (s staleView) List(_ context.Context, req reconcile.ListRequest) (reconcile.ItemPage, error) {
	var p reconcile.ItemPage
	for _, r := range s.rows {
		if req.DueBy.IsZero() || !r.Due.After(req.DueBy) {
			p.Items = append(p.Items, reconcile.Item{Item: r.item(), FiredAt: r.FiredAt, Updated: r.Updated,
				ScheduledFor: r.ScheduledFor, Repair: r.Repair})
		}
	}
	return p, nil
}

// Count implements reconcile.Counter: the stale listing's length.
func (s staleView) Count(ctx context.Context, req reconcile.ListRequest) (int, error) {
	p, err := s.List(ctx, req)
	return len(p.Items), err
}

// row is an item of the fixture's table as these tests write it: the
// contract's attributes, and the marks of the armed index.
type row struct {
	Key                           contract.Key
	State                         string
	Due                           time.Time
	Token                         string
	FiredAt, ClaimAt, DeliveredAt time.Time
	Remind, Reminded              time.Time
	ScheduledFor, Updated         time.Time
	Repair                        bool
}

// item is the row as the contract reads it.
func (r row) item() contract.Item {
	return contract.Item{Key: r.Key, State: r.State, Due: r.Due, Token: r.Token, Delivered: !r.DeliveredAt.IsZero(),
		ClaimAt: r.ClaimAt, Remind: r.Remind, Reminded: r.Reminded}
}

// attrs is the row as a writer puts it.
func (r row) attrs() map[string]string {
	a := map[string]string{schema.PartitionKey: r.Key.Partition, schema.SortKey: r.Key.Sort, schema.StateAttr: r.State}
	if r.Token != "" {
		a[schema.TokenAttr] = r.Token
	}
	for name, at := range map[string]time.Time{schema.DueAttr: r.Due, schema.FiredAtAttr: r.FiredAt, schema.ClaimAtAttr: r.ClaimAt,
		schema.DeliveredAtAttr: r.DeliveredAt, schema.RemindAttr: r.Remind, schema.RemindedAttr: r.Reminded,
		marks.ConfirmedAttr: r.ScheduledFor, marks.UpdatedAttr: r.Updated} {
		if !at.IsZero() {
			a[name] = contract.FormatTime(at)
		}
	}
	if r.Repair {
		a[marks.RepairAttr] = "true"
	}
	return a
}

// target is the adopter's target: it counts deliveries by key, and fails
// while Fail says so.
type target struct {
	sent map[contract.Key]int
	Fail func(contract.Payload) error
}

func (d *target) Deliver(_ context.Context, p contract.Payload) error {
	if d.Fail != nil {
		if err := d.Fail(p); err != nil {
			return err
		}
	}
	d.sent[p.Key]++
	return nil
}

// counts keeps the repairs and the outcome of a Result, for comparing.
func counts(r reconcile.Result) reconcile.Result {
	return reconcile.Result{SchedulesCreated: r.SchedulesCreated, SchedulesMoved: r.SchedulesMoved,
		SchedulesDeleted: r.SchedulesDeleted, ItemsFired: r.ItemsFired,
		RepairFlagsCleared: r.RepairFlagsCleared, Errors: r.Errors, Completed: r.Completed}
}

// world is the reconciler on the core's stand-ins: the fixture's table
// (inmem.Items) read through its marking armed index, the memory
// scheduler, and the firing core delivering to target.
type world struct {
	t      *testing.T
	clock  *clock.Fake
	items  *inmem.Items
	view   inmem.Marking
	keys   []contract.Key // every key put, in order
	sched  *inmem.Scheduler
	target *target
	cps    *memCheckpoints
	deps   reconcile.Deps
	out    *bytes.Buffer
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, clock: clock.NewFake(t0), items: inmem.NewItems(schema), sched: inmem.NewScheduler(),
		target: &target{sent: map[contract.Key]int{}}, cps: &memCheckpoints{}, out: &bytes.Buffer{}}
	w.view = inmem.Marking{Armed: inmem.Armed{Items: w.items, Index: &marks, Now: w.clock.Now}}
	core, err := fire.New(fire.Config{Schema: schema, Store: w.items, Now: w.clock.Now, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	w.deps = reconcile.Deps{Schema: schema, Items: w.view, Scheduler: w.sched,
		Schedules: w.sched, Firer: fire.Firing{Core: core, Target: w.target},
		Checkpoints: w.cps, Clock: w.clock, Sleep: w.clock.Sleep, Metrics: metrics.New("reconciler", w.out), Log: quiet}
	return w
}

// put writes r as a writer does (a plain put).
func (w *world) put(r row) {
	w.t.Helper()
	w.putAttrs(r.attrs())
}

func (w *world) putAttrs(a map[string]string) {
	w.t.Helper()
	if err := w.items.Put(a); err != nil {
		w.t.Fatal(err)
	}
	w.keys = append(w.keys, contract.Key{Partition: a[schema.PartitionKey], Sort: a[schema.SortKey]})
}

// get reads an item back as the reconciler does, marks included.
func (w *world) get(k contract.Key) (reconcile.Item, error) {
	return w.view.Get(context.Background(), k)
}

func (w *world) run(t *testing.T, cfg reconcile.Config) reconcile.Result {
	t.Helper()
	r, err := reconcile.New(cfg, w.deps)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

var idSeq int

// newRow is an armed item of its own id, due at due, changed by f.
func newRow(due time.Time, f ...func(*row)) row {
	idSeq++
	r := row{Key: contract.Key{Partition: "user-1", Sort: fmt.Sprintf("01JBQ1R8ZK3W4X5Y6Z7A8B%04d", idSeq)},
		State: "Pending", Due: due, Token: "TOK"}
	for _, fn := range f {
		fn(&r)
	}
	return r
}

// firedAt makes an item Fired at at, its delivery claimed at claim and
// not recorded.
func firedAt(at, claim time.Time) func(*row) {
	return func(r *row) { r.State, r.FiredAt, r.ClaimAt = "Fired", at, claim }
}

func TestRunRepairs(t *testing.T) {
	future := t0.Add(time.Hour)
	type setup struct {
		task     row
		taskGone bool               // the task is not in the store
		schedule *contract.Schedule // present in the scheduler
	}
	at := func(s contract.Schedule, when time.Time) *contract.Schedule { s.At = when; return &s }
	payloadDue := func(s contract.Schedule, due string) *contract.Schedule {
		s.Payload.Due, _ = contract.ParseTime(due)
		return &s
	}
	tests := []struct {
		name         string
		setup        func() setup
		want         reconcile.Result
		wantSchedule bool // the task's correct schedule exists after
		wantStatus   string
		wantNotified int
	}{
		{"pending without schedule gets one", func() setup { return setup{task: newRow(future)} },
			reconcile.Result{SchedulesCreated: 1}, true, "Pending", 0},
		{"schedule at the wrong time is moved", func() setup {
			tk := newRow(future)
			return setup{task: tk, schedule: at(schema.ScheduleFor(tk.item()), future.Add(time.Hour))}
		}, reconcile.Result{SchedulesMoved: 1}, true, "Pending", 0},
		{"schedule with another deadline in its payload is moved", func() setup {
			tk := newRow(future)
			return setup{task: tk, schedule: payloadDue(schema.ScheduleFor(tk.item()), "2029-01-01T00:00:00Z")}
		}, reconcile.Result{SchedulesMoved: 1}, true, "Pending", 0},
		{"correct schedule is left alone", func() setup {
			tk := newRow(future)
			s := schema.ScheduleFor(tk.item())
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{}, true, "Pending", 0},
		{"repair mark with no schedule: created and cleared", func() setup {
			return setup{task: newRow(future, func(t *row) { t.Repair = true })}
		}, reconcile.Result{SchedulesCreated: 1, RepairFlagsCleared: 1}, true, "Pending", 0},
		{"repair mark with a correct schedule (the create's response was lost): created again, idempotently, and cleared", func() setup {
			tk := newRow(future, func(t *row) { t.Repair = true })
			s := schema.ScheduleFor(tk.item())
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{SchedulesCreated: 1, RepairFlagsCleared: 1}, true, "Pending", 0},
		{"orphan of a deleted task is deleted", func() setup {
			tk := newRow(future)
			s := schema.ScheduleFor(tk.item())
			return setup{task: tk, taskGone: true, schedule: &s}
		}, reconcile.Result{SchedulesDeleted: 1}, false, "", 0},
		{"orphan of a done task is deleted, payload read with Get", func() setup {
			tk := newRow(future, func(t *row) { t.State = "Done" })
			s := schema.ScheduleFor(tk.item())
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{SchedulesDeleted: 1}, false, "Done", 0},
		{"schedule of a pending task is kept when listed without payload", func() setup {
			tk := newRow(future)
			s := schema.ScheduleFor(tk.item())
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{}, true, "Pending", 0},
		{"overdue past grace without schedule is expired and notified", func() setup {
			return setup{task: newRow(t0.Add(-10 * time.Minute))}
		}, reconcile.Result{ItemsFired: 1}, false, "Fired", 1},
		{"overdue past grace with a stuck schedule: expired, schedule deleted", func() setup {
			tk := newRow(t0.Add(-10 * time.Minute))
			s := schema.ScheduleFor(tk.item())
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{ItemsFired: 1, SchedulesDeleted: 1}, false, "Fired", 1},
		{"overdue within grace is left to its schedule", func() setup {
			return setup{task: newRow(t0.Add(-time.Minute))}
		}, reconcile.Result{}, false, "Pending", 0},
		{"expired past grace, notification not recorded: notified", func() setup {
			return setup{task: newRow(t0.Add(-20*time.Minute), firedAt(t0.Add(-10*time.Minute), t0.Add(-10*time.Minute)))}
		}, reconcile.Result{ItemsFired: 1}, false, "Fired", 1},
		{"expired past grace with a stuck schedule: notified, schedule deleted", func() setup {
			tk := newRow(t0.Add(-20*time.Minute), firedAt(t0.Add(-10*time.Minute), t0.Add(-10*time.Minute)))
			s := schema.ScheduleFor(tk.item())
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{ItemsFired: 1, SchedulesDeleted: 1}, false, "Fired", 1},
		{"expired within grace, not notified: left to its retries", func() setup {
			return setup{task: newRow(t0.Add(-2*time.Minute), firedAt(t0.Add(-time.Minute), t0.Add(-time.Minute)))}
		}, reconcile.Result{}, false, "Fired", 0},
		{"expired past grace, claim held by a retry now: no error, not sent", func() setup {
			return setup{task: newRow(t0.Add(-20*time.Minute), firedAt(t0.Add(-10*time.Minute), t0.Add(-10*time.Second)))}
		}, reconcile.Result{}, false, "Fired", 0},
		{"expired and notified is not touched", func() setup {
			return setup{task: newRow(t0.Add(-20*time.Minute), firedAt(t0.Add(-10*time.Minute), t0.Add(-10*time.Minute)),
				func(t *row) { t.DeliveredAt = t0.Add(-10 * time.Minute) })}
		}, reconcile.Result{}, false, "Fired", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			s := tt.setup()
			if !s.taskGone {
				w.put(s.task)
			}
			if s.schedule != nil {
				if err := w.sched.Arm(context.Background(), *s.schedule); err != nil {
					t.Fatal(err)
				}
			}
			res := counts(w.run(t, reconcile.Config{}))
			tt.want.Completed = true
			if res != tt.want {
				t.Errorf("Result = %+v, want %+v", res, tt.want)
			}
			got, ok := w.sched.Lookup(schema.ScheduleName(s.task.Key))
			if want := schema.ScheduleFor(s.task.item()); tt.wantSchedule && (!ok || got != want) {
				t.Errorf("schedule = %+v (present %v), want %+v", got, ok, want)
			}
			if !tt.wantSchedule && ok {
				t.Errorf("schedule %+v left, want none", got)
			}
			after, err := w.get(s.task.Key)
			if tt.wantStatus == "" {
				if !errors.Is(err, reconcile.ErrItemNotFound) {
					t.Errorf("task %+v exists, want none", after)
				}
			} else if after.State != tt.wantStatus || after.Repair && tt.want.RepairFlagsCleared > 0 {
				t.Errorf("task = %+v, want status %s and no repair mark", after, tt.wantStatus)
			}
			if n := w.target.sent[s.task.Key]; n != tt.wantNotified {
				t.Errorf("notifications = %d, want %d", n, tt.wantNotified)
			}
			// A second pass finds nothing more to do.
			if again := counts(w.run(t, reconcile.Config{})); again != (reconcile.Result{Completed: true}) {
				t.Errorf("second pass = %+v, want nothing done", again)
			}
			if n := w.target.sent[s.task.Key]; n != tt.wantNotified {
				t.Errorf("notifications after a second pass = %d, want %d", n, tt.wantNotified)
			}
		})
	}
}

// TestRunRetriesAFailedNotification: when the publish of the reconciler's
// own expiry fails, no schedule is left to retry it; the task stays
// listed, and the first pass after the grace period notifies it, once.
func TestRunRetriesAFailedNotification(t *testing.T) {
	w := newWorld(t)
	tk := newRow(t0.Add(-10 * time.Minute))
	w.put(tk)
	fail := true
	w.target.Fail = func(contract.Payload) error {
		if fail {
			return errors.New("sns unavailable")
		}
		return nil
	}
	for _, step := range []struct {
		name    string
		advance time.Duration
		want    reconcile.Result
		sent    int
	}{
		{"expiry written, publish fails", 0, reconcile.Result{Errors: 1}, 0},
		{"within the grace period: left alone", 2 * time.Minute, reconcile.Result{}, 0},
		{"after the grace period: notified", reconcile.DefaultGrace, reconcile.Result{ItemsFired: 1}, 1},
		{"then nothing more", time.Hour, reconcile.Result{}, 1},
	} {
		w.clock.Advance(step.advance)
		res := counts(w.run(t, reconcile.Config{}))
		step.want.Completed = true
		if res != step.want {
			t.Fatalf("%s: Result = %+v, want %+v", step.name, res, step.want)
		}
		if n := w.target.sent[tk.Key]; n != step.sent {
			t.Fatalf("%s: %d notifications, want %d", step.name, n, step.sent)
		}
		if got, _ := w.get(tk.Key); got.State != "Fired" {
			t.Fatalf("%s: status %s, want Expired", step.name, got.State)
		}
		fail = false
	}
}

// A listing that predates a deadline change must not move the schedule
// back to the old deadline: the reconciler re-reads the task first.
func TestRunStaleListing(t *testing.T) {
	w := newWorld(t)
	old := newRow(t0.Add(time.Hour))
	moved := old
	moved.Due = t0.Add(2 * time.Hour)
	w.put(moved)
	if err := w.sched.Arm(context.Background(), schema.ScheduleFor(moved.item())); err != nil {
		t.Fatal(err)
	}
	w.deps.Items = staleView{Marking: w.view, rows: []row{old}}
	res := counts(w.run(t, reconcile.Config{}))
	if res != (reconcile.Result{Completed: true}) {
		t.Errorf("Result = %+v, want nothing done", res)
	}
	if got, _ := w.sched.Lookup(schema.ScheduleName(old.Key)); got != schema.ScheduleFor(moved.item()) {
		t.Errorf("schedule = %+v, want it at the new deadline", got)
	}
}

// The pending index sorts the due attribute as stored, so a writer's
// spelling of an overdue instant with a positive offset
// ("T12:50:00+01:00" for 11:50Z) or a lower-case "t" sorts after the
// sweep's bound and the sweep does not list it; one with a negative offset
// is listed before its instant. One run expires and notifies every
// overdue spelling whatever its order, and deletes its schedule (a TTL
// marker, say, that has not fired yet); it gives a future one its
// schedule, never an early expiry.
func TestRunOverdueInAnyWritersSpelling(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		due     time.Time
		overdue bool
	}{
		{"overdue", t0.Add(-10 * time.Minute), true},
		{"due later", t0.Add(10 * time.Minute), false},
	} {
		for _, spelled := range contract.WriterSpellings(tc.due) {
			t.Run(tc.name+" "+spelled, func(t *testing.T) {
				w := newWorld(t)
				tk := newRow(tc.due)
				a := tk.attrs()
				a[schema.DueAttr] = spelled
				w.putAttrs(a)
				if tc.overdue {
					if err := w.sched.Arm(ctx, schema.ScheduleFor(tk.item())); err != nil {
						t.Fatal(err)
					}
				}
				res := w.run(t, reconcile.Config{})
				got, err := w.get(tk.Key)
				if err != nil {
					t.Fatal(err)
				}
				if !tc.overdue {
					sc, ok := w.sched.Lookup(schema.ScheduleName(tk.Key))
					if got.State != "Pending" || !ok || !sc.At.Equal(tc.due) || res.Errors != 0 {
						t.Fatalf("task %s, schedule %+v (made %v), Result %+v: want it Pending with its schedule at %s and no error",
							got.State, sc, ok, res, contract.FormatTime(tc.due))
					}
					return
				}
				_, left := w.sched.Lookup(schema.ScheduleName(tk.Key))
				if got.State != "Fired" || !got.Delivered || w.target.sent[tk.Key] != 1 ||
					left || res.ItemsFired != 1 || res.Errors != 0 {
					t.Fatalf("task %s (notified %v), %d notifications, schedule left %v, Result %+v: want it Expired and notified once, its schedule deleted, no error",
						got.State, got.Delivered, w.target.sent[tk.Key], left, res)
				}
			})
		}
	}
}

// Runs stop at their budget, save where they stopped, and the next run
// resumes there: every task gets exactly one schedule, and the calls are
// paced by the rate limit.
func TestRunBudgetAndResume(t *testing.T) {
	tests := []struct {
		name     string
		tasks    int
		pageSize int
		rate     float64
		budget   time.Duration
	}{
		{"one page, several runs", 30, 100, 10, time.Second},
		{"many pages, several runs", 37, 5, 10, 1500 * time.Millisecond},
		{"budget larger than the work", 12, 5, 100, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			for i := 0; i < tt.tasks; i++ {
				w.put(newRow(t0.Add(time.Duration(i+1) * time.Hour)))
			}
			cfg := reconcile.Config{PageSize: tt.pageSize, RatePerSec: tt.rate, Budget: tt.budget}
			var total reconcile.Result
			runs := 0
			for ; runs < 100; runs++ {
				start := w.clock.Now()
				calls := w.sched.Calls["Get"] + w.sched.Calls["Arm"] + w.sched.Calls["List"]
				res := w.run(t, cfg)
				total.SchedulesCreated += res.SchedulesCreated
				// Pacing: n calls take at least (n-1)/rate.
				n := w.sched.Calls["Get"] + w.sched.Calls["Arm"] + w.sched.Calls["List"] - calls
				if min := time.Duration(float64(n-1) / tt.rate * float64(time.Second)); n > 0 && w.clock.Now().Sub(start) < min {
					t.Fatalf("run %d made %d calls in %v, faster than %v/s", runs, n, w.clock.Now().Sub(start), tt.rate)
				}
				if !res.Completed && w.cps.cp != res.Checkpoint {
					t.Fatalf("saved checkpoint %+v, result says %+v", w.cps.cp, res.Checkpoint)
				}
				if res.Completed {
					break
				}
				w.clock.Advance(time.Minute) // the next invocation
			}
			if total.SchedulesCreated != tt.tasks || w.sched.Calls["Arm"] != tt.tasks {
				t.Errorf("created %d schedules in %d creates, want %d", total.SchedulesCreated, w.sched.Calls["Arm"], tt.tasks)
			}
			if got := len(w.sched.All()); got != tt.tasks {
				t.Errorf("%d schedules, want %d", got, tt.tasks)
			}
			if w.cps.cp != (reconcile.Checkpoint{}) {
				t.Errorf("checkpoint after a full pass = %+v, want it reset", w.cps.cp)
			}
			if tt.budget < time.Minute && runs == 0 {
				t.Error("the budget never stopped a run")
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	throttled := errors.New("ThrottlingException")
	t.Run("a failing item is counted and the pass goes on", func(t *testing.T) {
		w := newWorld(t)
		a, b := newRow(t0.Add(time.Hour)), newRow(t0.Add(time.Hour))
		w.put(a)
		w.put(b)
		w.sched.Fail = func(op, name string) error {
			if op == "Arm" && name == schema.ScheduleName(a.Key) {
				return throttled
			}
			return nil
		}
		res := counts(w.run(t, reconcile.Config{}))
		if res != (reconcile.Result{SchedulesCreated: 1, Errors: 1, Completed: true}) {
			t.Errorf("Result = %+v", res)
		}
	})
	t.Run("a failing page read stops the run where it was", func(t *testing.T) {
		w := newWorld(t)
		w.put(newRow(t0.Add(time.Hour)))
		w.sched.Fail = func(op, _ string) error {
			if op == "List" {
				return throttled
			}
			return nil
		}
		r, err := reconcile.New(reconcile.Config{}, w.deps)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Run(context.Background())
		if !errors.Is(err, throttled) || res.Completed {
			t.Fatalf("Run = %+v, %v; want the list error", res, err)
		}
		if w.cps.cp.Phase != reconcile.PhaseSchedules {
			t.Errorf("checkpoint %+v, want the schedules phase kept", w.cps.cp)
		}
	})
	t.Run("a failing checkpoint load stops the run", func(t *testing.T) {
		w := newWorld(t)
		w.cps.err = errors.New("dynamo down")
		r, _ := reconcile.New(reconcile.Config{}, w.deps)
		if _, err := r.Run(context.Background()); err == nil {
			t.Error("Run succeeded without its checkpoint")
		}
	})
}

func TestRunMetrics(t *testing.T) {
	w := newWorld(t)
	w.put(newRow(t0.Add(time.Hour)))
	w.run(t, reconcile.Config{})
	if err := w.deps.Metrics.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"SchedulesCreated":1`, `"PassesCompleted":1`, `"Errors":0`, `"ItemsFired":0`,
		`"ItemsChecked":1`, `"SchedulesChecked":1`, `"SchedulerCalls":3`, `"Repaired":1`, `"LeftOver":0`} {
		if !strings.Contains(w.out.String(), want) {
			t.Errorf("metrics %s lack %s", w.out.String(), want)
		}
	}
}

func TestNewNeedsDeps(t *testing.T) {
	w := newWorld(t)
	d := w.deps
	d.Checkpoints = nil
	if _, err := reconcile.New(reconcile.Config{}, d); err == nil || !strings.Contains(err.Error(), "Checkpoints") {
		t.Errorf("New without Checkpoints: %v", err)
	}
}

func TestLimiter(t *testing.T) {
	tests := []struct {
		name  string
		rate  float64
		calls int
		gap   time.Duration // idle time between calls
		want  time.Duration // clock advance over all calls
	}{
		{"paced", 2, 5, 0, 2 * time.Second},
		{"ten a second", 10, 11, 0, time.Second},
		{"idle callers never wait", 2, 3, time.Second, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clock.NewFake(t0)
			l := reconcile.NewLimiter(tt.rate, c, c.Sleep)
			for i := 0; i < tt.calls; i++ {
				if err := l.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				c.Advance(tt.gap)
			}
			if got := c.Now().Sub(t0); got != tt.want {
				t.Errorf("clock advanced %v, want %v", got, tt.want)
			}
		})
	}
}

// confirmed makes a task whose schedule the table vouches for.
func confirmed(t *row) { t.ScheduledFor = t.Due }

// calls returns the scheduler calls since before, by operation.
func calls(s *inmem.Scheduler, before map[string]int) map[string]int {
	out := map[string]int{}
	for op, n := range s.Calls {
		if d := n - before[op]; d > 0 {
			out[op] = d
		}
	}
	return out
}

func snapshot(s *inmem.Scheduler) map[string]int {
	out := map[string]int{}
	for op, n := range s.Calls {
		out[op] = n
	}
	return out
}

// A pass costs what the drift costs: a confirmed schedule is never read
// back; an unconfirmed one is read once and, when its task is settled,
// recorded so that the next pass trusts it; a task marked for repair gets
// its schedule without a read.
func TestRunCostFollowsDrift(t *testing.T) {
	future := t0.Add(24 * time.Hour)
	settled := func(t *row) {
		t.Updated = t0.Add(-reconcile.DefaultSettle)
	}
	recent := func(t *row) { t.Updated = t0.Add(-time.Minute) }
	tests := []struct {
		name string
		n    int
		make func() row
		// withSchedule: the task's correct schedule exists.
		withSchedule bool
		// passes: the scheduler calls of each pass, and the tasks it
		// confirmed.
		passes []map[string]int
		confs  []int
	}{
		{"confirmed: only the listing", 250, func() row { return newRow(future, settled, confirmed) }, true,
			[]map[string]int{{"List": 3}, {"List": 3}}, []int{0, 0}},
		{"written before the record: read once, then trusted", 30, func() row { return newRow(future, settled) }, true,
			[]map[string]int{{"Get": 30, "List": 1}, {"List": 1}}, []int{30, 0}},
		{"changed recently: read each pass until settled", 1, func() row { return newRow(future, recent) }, true,
			[]map[string]int{{"Get": 1, "List": 1}, {"Get": 1, "List": 1}, {"List": 1}}, []int{0, 1, 0}},
		{"marked for repair: created without a read", 2, func() row {
			return newRow(future, settled, func(t *row) { t.Repair = true })
		}, false, []map[string]int{{"Arm": 2, "List": 1}, {"List": 1}}, []int{2, 0}},
		{"confirmed but its deadline passed the cut: the sweep's, no call", 3, func() row {
			return newRow(t0.Add(-time.Minute), settled, confirmed)
		}, true, []map[string]int{{"List": 1}}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			for range tt.n {
				tk := tt.make()
				w.put(tk)
				if tt.withSchedule {
					if err := w.sched.Arm(context.Background(), schema.ScheduleFor(tk.item())); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i, want := range tt.passes {
				before := snapshot(w.sched)
				res := w.run(t, reconcile.Config{})
				if got := calls(w.sched, before); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("pass %d: scheduler calls %v, want %v", i+1, got, want)
				}
				if res.SchedulesConfirmed != tt.confs[i] || !res.Completed || res.Errors > 0 || res.LeftOver != 0 {
					t.Errorf("pass %d: %+v, want %d confirmed, completed, nothing left", i+1, res, tt.confs[i])
				}
				w.clock.Advance(reconcile.DefaultSettle)
			}
		})
	}
}

// A confirmed schedule that was deleted by hand is not read back, but the
// listing does not show it: the pass creates it again.
func TestRunRestoresAMissingConfirmedSchedule(t *testing.T) {
	w := newWorld(t)
	gone, kept := newRow(t0.Add(time.Hour), confirmed), newRow(t0.Add(2*time.Hour), confirmed)
	changed := newRow(t0.Add(3*time.Hour), confirmed) // its deadline moves after the listing of the index
	for _, tk := range []row{gone, kept, changed} {
		w.put(tk)
	}
	if err := w.sched.Arm(context.Background(), schema.ScheduleFor(kept.item())); err != nil {
		t.Fatal(err)
	}
	before := snapshot(w.sched)
	res := w.run(t, reconcile.Config{})
	if got := calls(w.sched, before); got["Get"] != 0 || got["Arm"] != 2 {
		t.Errorf("scheduler calls %v, want no Get and 2 creates", got)
	}
	if counts(res) != (reconcile.Result{SchedulesCreated: 2, Completed: true}) {
		t.Errorf("Result = %+v", res)
	}
	for _, tk := range []row{gone, kept, changed} {
		if got, ok := w.sched.Lookup(schema.ScheduleName(tk.Key)); !ok || got != schema.ScheduleFor(tk.item()) {
			t.Errorf("schedule of %s = %+v (present %v), want it at its deadline", tk.Key, got, ok)
		}
	}
}

// The overdue sweep opens every run and makes no scheduler call: a run
// whose pass cannot finish (hundreds of unconfirmed tasks, a budget of
// 100 calls) still expires every overdue task of every shard, and reports
// the work it left.
func TestRunOverdueFirst(t *testing.T) {
	w := newWorld(t)
	var overdue []row
	for i := range 300 {
		w.put(newRow(t0.Add(time.Duration(i+1) * time.Minute))) // unconfirmed, no schedule
	}
	for i := range 40 {
		tk := newRow(t0.Add(-time.Duration(10+i) * time.Minute))
		overdue = append(overdue, tk)
		w.put(tk)
	}
	res := w.run(t, reconcile.Config{Budget: 10 * time.Second})
	if res.Completed || res.ItemsFired != len(overdue) {
		t.Fatalf("Result = %+v, want the pass unfinished and %d tasks expired", res, len(overdue))
	}
	for _, tk := range overdue {
		if got, _ := w.get(tk.Key); got.State != "Fired" {
			t.Errorf("overdue task %s is %s, want Fired", tk.Key, got.State)
		}
	}
	// LeftOver is what the pass did not reach: the unconfirmed tasks it
	// had no calls left for.
	left := 0
	for _, k := range w.keys {
		if tk, err := w.get(k); err == nil && tk.State == "Pending" && !tk.Confirmed() {
			if _, ok := w.sched.Lookup(schema.ScheduleName(tk.Key)); !ok {
				left++
			}
		}
	}
	if res.LeftOver < left-1 || res.LeftOver > left+1 || left < 200 {
		t.Errorf("LeftOver = %d, want about %d (the tasks without a schedule)", res.LeftOver, left)
	}
	// 100 calls in the budget, and the item in progress may finish.
	if res.SchedulerCalls > 102 {
		t.Errorf("%d scheduler calls in a 10 s budget at 10/s", res.SchedulerCalls)
	}
}

// A schedule whose item the pass did not list (made after the armed
// items were read) is read back with its item: an armed one is left as
// it is, a finished one is an orphan and deleted in the same pass.
func TestRunChecksSchedulesOfItemsNotListed(t *testing.T) {
	for _, tt := range []struct {
		status string
		want   reconcile.Result
	}{
		{"Pending", reconcile.Result{Completed: true}},
		{"Done", reconcile.Result{SchedulesDeleted: 1, Completed: true}},
	} {
		t.Run(string(tt.status), func(t *testing.T) {
			w := newWorld(t)
			tk := newRow(t0.Add(time.Hour), func(x *row) { x.State = tt.status })
			w.put(tk)
			if err := w.sched.Arm(context.Background(), schema.ScheduleFor(tk.item())); err != nil {
				t.Fatal(err)
			}
			w.deps.Items = staleView{Marking: w.view}
			if res := counts(w.run(t, reconcile.Config{})); res != tt.want {
				t.Errorf("pass = %+v, want %+v", res, tt.want)
			}
			_, ok := w.sched.Lookup(schema.ScheduleName(tk.Key))
			if want := tt.status == "Pending"; ok != want {
				t.Errorf("schedule kept = %v, want %v", ok, want)
			}
		})
	}
}

// slowFirer takes a second per firing.
type slowFirer struct {
	reconcile.Firer
	clock *clock.Fake
}

func (s slowFirer) Fire(ctx context.Context, p contract.Payload) (fire.Outcome, error) {
	s.clock.Advance(time.Second)
	return s.Firer.Fire(ctx, p)
}

// An overdue sweep longer than the budget stops there; LeftOver counts the
// overdue tasks it did not reach, and the next run's sweep starts over
// and finishes them.
func TestRunOverdueSweepOverBudget(t *testing.T) {
	w := newWorld(t)
	w.deps.Firer = slowFirer{w.deps.Firer, w.clock}
	for i := range 30 {
		w.put(newRow(t0.Add(-time.Duration(10+i) * time.Minute)))
	}
	res := w.run(t, reconcile.Config{Budget: 10 * time.Second})
	if res.Completed || res.ItemsFired != 10 || res.LeftOver != 20 {
		t.Fatalf("Result = %+v, want 10 expired and 20 left over", res)
	}
	w.clock.Advance(time.Minute)
	res = w.run(t, reconcile.Config{Budget: time.Minute})
	if !res.Completed || res.ItemsFired != 20 || res.LeftOver != 0 {
		t.Fatalf("next run = %+v, want the other 20 expired and the pass completed", res)
	}
}

// sweepBlind lists nothing for the overdue sweep (a request with DueBy),
// as a store that compares due times as stored strings may for a
// writer's spelling, and everything otherwise.
type sweepBlind struct{ inmem.Marking }

func (s sweepBlind) List(ctx context.Context, req reconcile.ListRequest) (reconcile.ItemPage, error) {
	if !req.DueBy.IsZero() {
		return reconcile.ItemPage{}, nil
	}
	return s.Marking.List(ctx, req)
}

// An expired task whose notification failed is notified by the items
// phase when the sweep does not list it; one moved to the fired state
// early by a writer is left alone until its due time, with no error.
func TestRunDeliversUndeliveredFiringsTheSweepMissed(t *testing.T) {
	w := newWorld(t)
	failed := newRow(t0.Add(-time.Hour), firedAt(t0.Add(-50*time.Minute), t0.Add(-50*time.Minute)))
	early := newRow(t0.Add(time.Hour), firedAt(t0.Add(-50*time.Minute), t0.Add(-50*time.Minute)))
	w.put(failed)
	w.put(early)
	w.deps.Items = sweepBlind{w.view}
	res := w.run(t, reconcile.Config{})
	if res.Errors != 0 || res.ItemsFired != 1 {
		t.Fatalf("Result %+v, want the failed notification delivered and no error", res)
	}
	if n := w.target.sent[failed.Key]; n != 1 {
		t.Errorf("%d notifications for the failed one, want 1", n)
	}
	if n := w.target.sent[early.Key]; n != 0 {
		t.Errorf("%d notifications for the early one, want 0", n)
	}
}
