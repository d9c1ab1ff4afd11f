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
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

var (
	t0    = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	quiet = slog.New(slog.DiscardHandler)
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

// stalePending lists tasks as they were, not as they are.
type stalePending struct{ tasks []task.Task }

func (s stalePending) ListPending(_ context.Context, req task.PendingRequest) (task.Page, error) {
	var p task.Page
	for _, t := range s.tasks {
		if req.DueBy.IsZero() || !t.DueAt.After(req.DueBy) {
			p.Tasks = append(p.Tasks, t)
		}
	}
	return p, nil
}

// counts keeps the repairs and the outcome of a Result, for comparing.
func counts(r reconcile.Result) reconcile.Result {
	return reconcile.Result{SchedulesCreated: r.SchedulesCreated, SchedulesMoved: r.SchedulesMoved,
		SchedulesDeleted: r.SchedulesDeleted, ItemsFired: r.ItemsFired,
		RepairFlagsCleared: r.RepairFlagsCleared, Errors: r.Errors, Completed: r.Completed}
}

type world struct {
	clock  *clock.Fake
	store  *memory.Store
	sched  *inmem.Scheduler
	outbox *memory.Outbox
	cps    *memCheckpoints
	deps   reconcile.Deps
	out    *bytes.Buffer
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{clock: clock.NewFake(t0), store: memory.NewStore(), sched: inmem.NewScheduler(),
		outbox: &memory.Outbox{}, cps: &memCheckpoints{}, out: &bytes.Buffer{}}
	svc, err := task.InProcess(task.InProcessConfig{Store: w.store, Notifier: w.outbox, Clock: w.clock, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	w.deps = reconcile.Deps{Schema: task.Schema, Items: task.NewReconcileView(w.store, w.store), Scheduler: w.sched,
		Schedules: w.sched, Firer: svc,
		Checkpoints: w.cps, Clock: w.clock, Sleep: w.clock.Sleep, Metrics: metrics.New("reconciler", w.out), Log: quiet}
	return w
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

func newTask(due time.Time, f ...func(*task.Task)) task.Task {
	idSeq++
	tk := task.Task{UserID: "user-1", TaskID: fmt.Sprintf("01JBQ1R8ZK3W4X5Y6Z7A8B%04d", idSeq), Title: "t",
		Status: task.StatusPending, DueAt: due, ScheduleToken: "TOK"}
	for _, fn := range f {
		fn(&tk)
	}
	return tk
}

// expiredAt makes a task Expired at at, its notification claimed at claim
// and not recorded.
func expiredAt(at, claim time.Time) func(*task.Task) {
	return func(t *task.Task) { t.Status, t.ExpiredAt, t.NotifyClaimAt = task.StatusExpired, at, claim }
}

func TestRunRepairs(t *testing.T) {
	future := t0.Add(time.Hour)
	type setup struct {
		task     task.Task
		taskGone bool               // the task is not in the store
		schedule *contract.Schedule // present in the scheduler
	}
	at := func(s contract.Schedule, when time.Time) *contract.Schedule { s.At = when; return &s }
	payloadDue := func(s contract.Schedule, due string) *contract.Schedule {
		s.Payload.Due, _ = task.ParseTime(due)
		return &s
	}
	tests := []struct {
		name         string
		setup        func() setup
		want         reconcile.Result
		wantSchedule bool // the task's correct schedule exists after
		wantStatus   task.Status
		wantNotified int
	}{
		{"pending without schedule gets one", func() setup { return setup{task: newTask(future)} },
			reconcile.Result{SchedulesCreated: 1}, true, task.StatusPending, 0},
		{"schedule at the wrong time is moved", func() setup {
			tk := newTask(future)
			return setup{task: tk, schedule: at(task.ScheduleFor(tk), future.Add(time.Hour))}
		}, reconcile.Result{SchedulesMoved: 1}, true, task.StatusPending, 0},
		{"schedule with another deadline in its payload is moved", func() setup {
			tk := newTask(future)
			return setup{task: tk, schedule: payloadDue(task.ScheduleFor(tk), "2029-01-01T00:00:00Z")}
		}, reconcile.Result{SchedulesMoved: 1}, true, task.StatusPending, 0},
		{"correct schedule is left alone", func() setup {
			tk := newTask(future)
			s := task.ScheduleFor(tk)
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{}, true, task.StatusPending, 0},
		{"repair mark with no schedule: created and cleared", func() setup {
			return setup{task: newTask(future, func(t *task.Task) { t.ScheduleRepair = true })}
		}, reconcile.Result{SchedulesCreated: 1, RepairFlagsCleared: 1}, true, task.StatusPending, 0},
		{"repair mark with a correct schedule (the create's response was lost): created again, idempotently, and cleared", func() setup {
			tk := newTask(future, func(t *task.Task) { t.ScheduleRepair = true })
			s := task.ScheduleFor(tk)
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{SchedulesCreated: 1, RepairFlagsCleared: 1}, true, task.StatusPending, 0},
		{"orphan of a deleted task is deleted", func() setup {
			tk := newTask(future)
			s := task.ScheduleFor(tk)
			return setup{task: tk, taskGone: true, schedule: &s}
		}, reconcile.Result{SchedulesDeleted: 1}, false, "", 0},
		{"orphan of a done task is deleted, payload read with Get", func() setup {
			tk := newTask(future, func(t *task.Task) { t.Status = task.StatusDone })
			s := task.ScheduleFor(tk)
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{SchedulesDeleted: 1}, false, task.StatusDone, 0},
		{"schedule of a pending task is kept when listed without payload", func() setup {
			tk := newTask(future)
			s := task.ScheduleFor(tk)
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{}, true, task.StatusPending, 0},
		{"overdue past grace without schedule is expired and notified", func() setup {
			return setup{task: newTask(t0.Add(-10 * time.Minute))}
		}, reconcile.Result{ItemsFired: 1}, false, task.StatusExpired, 1},
		{"overdue past grace with a stuck schedule: expired, schedule deleted", func() setup {
			tk := newTask(t0.Add(-10 * time.Minute))
			s := task.ScheduleFor(tk)
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{ItemsFired: 1, SchedulesDeleted: 1}, false, task.StatusExpired, 1},
		{"overdue within grace is left to its schedule", func() setup {
			return setup{task: newTask(t0.Add(-time.Minute))}
		}, reconcile.Result{}, false, task.StatusPending, 0},
		{"expired past grace, notification not recorded: notified", func() setup {
			return setup{task: newTask(t0.Add(-20*time.Minute), expiredAt(t0.Add(-10*time.Minute), t0.Add(-10*time.Minute)))}
		}, reconcile.Result{ItemsFired: 1}, false, task.StatusExpired, 1},
		{"expired past grace with a stuck schedule: notified, schedule deleted", func() setup {
			tk := newTask(t0.Add(-20*time.Minute), expiredAt(t0.Add(-10*time.Minute), t0.Add(-10*time.Minute)))
			s := task.ScheduleFor(tk)
			return setup{task: tk, schedule: &s}
		}, reconcile.Result{ItemsFired: 1, SchedulesDeleted: 1}, false, task.StatusExpired, 1},
		{"expired within grace, not notified: left to its retries", func() setup {
			return setup{task: newTask(t0.Add(-2*time.Minute), expiredAt(t0.Add(-time.Minute), t0.Add(-time.Minute)))}
		}, reconcile.Result{}, false, task.StatusExpired, 0},
		{"expired past grace, claim held by a retry now: no error, not sent", func() setup {
			return setup{task: newTask(t0.Add(-20*time.Minute), expiredAt(t0.Add(-10*time.Minute), t0.Add(-10*time.Second)))}
		}, reconcile.Result{}, false, task.StatusExpired, 0},
		{"expired and notified is not touched", func() setup {
			return setup{task: newTask(t0.Add(-20*time.Minute), expiredAt(t0.Add(-10*time.Minute), t0.Add(-10*time.Minute)),
				func(t *task.Task) { t.NotifiedAt = t0.Add(-10 * time.Minute) })}
		}, reconcile.Result{}, false, task.StatusExpired, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			s := tt.setup()
			if !s.taskGone {
				w.store.Put(s.task)
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
			got, ok := w.sched.Lookup(task.ScheduleName(s.task.TaskID))
			if want := task.ScheduleFor(s.task); tt.wantSchedule && (!ok || got != want) {
				t.Errorf("schedule = %+v (present %v), want %+v", got, ok, want)
			}
			if !tt.wantSchedule && ok {
				t.Errorf("schedule %+v left, want none", got)
			}
			after, err := w.store.Get(context.Background(), s.task.UserID, s.task.TaskID)
			if tt.wantStatus == "" {
				if !errors.Is(err, task.ErrNotFound) {
					t.Errorf("task %+v exists, want none", after)
				}
			} else if after.Status != tt.wantStatus || after.ScheduleRepair && tt.want.RepairFlagsCleared > 0 {
				t.Errorf("task = %+v, want status %s and no repair mark", after, tt.wantStatus)
			}
			if n := w.outbox.SentFor(s.task.TaskID); n != tt.wantNotified {
				t.Errorf("notifications = %d, want %d", n, tt.wantNotified)
			}
			// A second pass finds nothing more to do.
			if again := counts(w.run(t, reconcile.Config{})); again != (reconcile.Result{Completed: true}) {
				t.Errorf("second pass = %+v, want nothing done", again)
			}
			if n := w.outbox.SentFor(s.task.TaskID); n != tt.wantNotified {
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
	tk := newTask(t0.Add(-10 * time.Minute))
	w.store.Put(tk)
	fail := true
	w.outbox.Fail = func(task.Notification) error {
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
		if n := w.outbox.SentFor(tk.TaskID); n != step.sent {
			t.Fatalf("%s: %d notifications, want %d", step.name, n, step.sent)
		}
		if got, _ := w.store.Get(context.Background(), tk.UserID, tk.TaskID); got.Status != task.StatusExpired {
			t.Fatalf("%s: status %s, want Expired", step.name, got.Status)
		}
		fail = false
	}
}

// A listing that predates a deadline change must not move the schedule
// back to the old deadline: the reconciler re-reads the task first.
func TestRunStaleListing(t *testing.T) {
	w := newWorld(t)
	old := newTask(t0.Add(time.Hour))
	moved := old
	moved.DueAt = t0.Add(2 * time.Hour)
	w.store.Put(moved)
	if err := w.sched.Arm(context.Background(), task.ScheduleFor(moved)); err != nil {
		t.Fatal(err)
	}
	w.deps.Items = task.NewReconcileView(w.store, stalePending{tasks: []task.Task{old}})
	res := counts(w.run(t, reconcile.Config{}))
	if res != (reconcile.Result{Completed: true}) {
		t.Errorf("Result = %+v, want nothing done", res)
	}
	if got, _ := w.sched.Lookup(task.ScheduleName(old.TaskID)); got != task.ScheduleFor(moved) {
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
				tk := newTask(tc.due)
				if err := w.store.PutItemSpelled(tk, spelled); err != nil {
					t.Fatal(err)
				}
				if tc.overdue {
					if err := w.sched.Arm(ctx, task.ScheduleFor(tk)); err != nil {
						t.Fatal(err)
					}
				}
				res := w.run(t, reconcile.Config{})
				got, err := w.store.Get(ctx, tk.UserID, tk.TaskID)
				if err != nil {
					t.Fatal(err)
				}
				if !tc.overdue {
					sc, ok := w.sched.Lookup(task.ScheduleName(tk.TaskID))
					if got.Status != task.StatusPending || !ok || !sc.At.Equal(tc.due) || res.Errors != 0 {
						t.Fatalf("task %s, schedule %+v (made %v), Result %+v: want it Pending with its schedule at %s and no error",
							got.Status, sc, ok, res, task.FormatTime(tc.due))
					}
					return
				}
				_, left := w.sched.Lookup(task.ScheduleName(tk.TaskID))
				if got.Status != task.StatusExpired || got.NotifiedAt.IsZero() || w.outbox.SentFor(tk.TaskID) != 1 ||
					left || res.ItemsFired != 1 || res.Errors != 0 {
					t.Fatalf("task %s (notified %v), %d notifications, schedule left %v, Result %+v: want it Expired and notified once, its schedule deleted, no error",
						got.Status, !got.NotifiedAt.IsZero(), w.outbox.SentFor(tk.TaskID), left, res)
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
				w.store.Put(newTask(t0.Add(time.Duration(i+1) * time.Hour)))
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
		a, b := newTask(t0.Add(time.Hour)), newTask(t0.Add(time.Hour))
		w.store.Put(a)
		w.store.Put(b)
		w.sched.Fail = func(op, name string) error {
			if op == "Arm" && name == task.ScheduleName(a.TaskID) {
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
		w.store.Put(newTask(t0.Add(time.Hour)))
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
	w.store.Put(newTask(t0.Add(time.Hour)))
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
func confirmed(t *task.Task) { t.ScheduledFor = t.DueAt }

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
	settled := func(t *task.Task) {
		t.CreatedAt, t.UpdatedAt = t0.Add(-reconcile.DefaultSettle), t0.Add(-reconcile.DefaultSettle)
	}
	recent := func(t *task.Task) { t.CreatedAt, t.UpdatedAt = t0.Add(-time.Minute), t0.Add(-time.Minute) }
	tests := []struct {
		name string
		n    int
		make func() task.Task
		// withSchedule: the task's correct schedule exists.
		withSchedule bool
		// passes: the scheduler calls of each pass, and the tasks it
		// confirmed.
		passes []map[string]int
		confs  []int
	}{
		{"confirmed: only the listing", 250, func() task.Task { return newTask(future, settled, confirmed) }, true,
			[]map[string]int{{"List": 3}, {"List": 3}}, []int{0, 0}},
		{"written before the record: read once, then trusted", 30, func() task.Task { return newTask(future, settled) }, true,
			[]map[string]int{{"Get": 30, "List": 1}, {"List": 1}}, []int{30, 0}},
		{"changed recently: read each pass until settled", 1, func() task.Task { return newTask(future, recent) }, true,
			[]map[string]int{{"Get": 1, "List": 1}, {"Get": 1, "List": 1}, {"List": 1}}, []int{0, 1, 0}},
		{"marked for repair: created without a read", 2, func() task.Task {
			return newTask(future, settled, func(t *task.Task) { t.ScheduleRepair = true })
		}, false, []map[string]int{{"Arm": 2, "List": 1}, {"List": 1}}, []int{2, 0}},
		{"confirmed but its deadline passed the cut: the sweep's, no call", 3, func() task.Task {
			return newTask(t0.Add(-time.Minute), settled, confirmed)
		}, true, []map[string]int{{"List": 1}}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			for range tt.n {
				tk := tt.make()
				w.store.Put(tk)
				if tt.withSchedule {
					if err := w.sched.Arm(context.Background(), task.ScheduleFor(tk)); err != nil {
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
	gone, kept := newTask(t0.Add(time.Hour), confirmed), newTask(t0.Add(2*time.Hour), confirmed)
	changed := newTask(t0.Add(3*time.Hour), confirmed) // its deadline moves after the listing of the index
	for _, tk := range []task.Task{gone, kept, changed} {
		w.store.Put(tk)
	}
	if err := w.sched.Arm(context.Background(), task.ScheduleFor(kept)); err != nil {
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
	for _, tk := range []task.Task{gone, kept, changed} {
		if got, ok := w.sched.Lookup(task.ScheduleName(tk.TaskID)); !ok || got != task.ScheduleFor(tk) {
			t.Errorf("schedule of %s = %+v (present %v), want it at its deadline", tk.TaskID, got, ok)
		}
	}
}

// The overdue sweep opens every run and makes no scheduler call: a run
// whose pass cannot finish (hundreds of unconfirmed tasks, a budget of
// 100 calls) still expires every overdue task of every shard, and reports
// the work it left.
func TestRunOverdueFirst(t *testing.T) {
	w := newWorld(t)
	var overdue []task.Task
	for i := range 300 {
		w.store.Put(newTask(t0.Add(time.Duration(i+1) * time.Minute))) // unconfirmed, no schedule
	}
	for i := range 40 {
		tk := newTask(t0.Add(-time.Duration(10+i) * time.Minute))
		overdue = append(overdue, tk)
		w.store.Put(tk)
	}
	res := w.run(t, reconcile.Config{Budget: 10 * time.Second})
	if res.Completed || res.ItemsFired != len(overdue) {
		t.Fatalf("Result = %+v, want the pass unfinished and %d tasks expired", res, len(overdue))
	}
	for _, tk := range overdue {
		if got, _ := w.store.Get(context.Background(), tk.UserID, tk.TaskID); got.Status != task.StatusExpired {
			t.Errorf("overdue task %s is %s, want Expired", tk.TaskID, got.Status)
		}
	}
	// LeftOver is what the pass did not reach: the unconfirmed tasks it
	// had no calls left for.
	left := 0
	for _, tk := range w.store.All() {
		if tk.Status == task.StatusPending && !tk.ScheduleConfirmed() {
			if _, ok := w.sched.Lookup(task.ScheduleName(tk.TaskID)); !ok {
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
		status task.Status
		want   reconcile.Result
	}{
		{task.StatusPending, reconcile.Result{Completed: true}},
		{task.StatusDone, reconcile.Result{SchedulesDeleted: 1, Completed: true}},
	} {
		t.Run(string(tt.status), func(t *testing.T) {
			w := newWorld(t)
			tk := newTask(t0.Add(time.Hour), func(x *task.Task) { x.Status = tt.status })
			w.store.Put(tk)
			if err := w.sched.Arm(context.Background(), task.ScheduleFor(tk)); err != nil {
				t.Fatal(err)
			}
			w.deps.Items = task.NewReconcileView(w.store, stalePending{})
			if res := counts(w.run(t, reconcile.Config{})); res != tt.want {
				t.Errorf("pass = %+v, want %+v", res, tt.want)
			}
			_, ok := w.sched.Lookup(task.ScheduleName(tk.TaskID))
			if want := tt.status == task.StatusPending; ok != want {
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
		w.store.Put(newTask(t0.Add(-time.Duration(10+i) * time.Minute)))
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
type sweepBlind struct{ task.PendingLister }

func (s sweepBlind) ListPending(ctx context.Context, req task.PendingRequest) (task.Page, error) {
	if !req.DueBy.IsZero() {
		return task.Page{}, nil
	}
	return s.PendingLister.ListPending(ctx, req)
}

// An expired task whose notification failed is notified by the items
// phase when the sweep does not list it; one moved to the fired state
// early by a writer is left alone until its due time, with no error.
func TestRunDeliversUndeliveredFiringsTheSweepMissed(t *testing.T) {
	w := newWorld(t)
	failed := newTask(t0.Add(-time.Hour), expiredAt(t0.Add(-50*time.Minute), t0.Add(-50*time.Minute)))
	early := newTask(t0.Add(time.Hour), expiredAt(t0.Add(-50*time.Minute), t0.Add(-50*time.Minute)))
	w.store.Put(failed)
	w.store.Put(early)
	w.deps.Items = task.NewReconcileView(w.store, sweepBlind{w.store})
	res := w.run(t, reconcile.Config{})
	if res.Errors != 0 || res.ItemsFired != 1 {
		t.Fatalf("Result %+v, want the failed notification delivered and no error", res)
	}
	if n := w.outbox.SentFor(failed.TaskID); n != 1 {
		t.Errorf("%d notifications for the failed one, want 1", n)
	}
	if n := w.outbox.SentFor(early.TaskID); n != 0 {
		t.Errorf("%d notifications for the early one, want 0", n)
	}
}
