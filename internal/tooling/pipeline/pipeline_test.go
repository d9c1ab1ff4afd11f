package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/todo/task"
)

const user = "user-1"

var (
	t0          = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	errThrottle = errors.New("ThrottlingException: rate exceeded")
	ctx         = context.Background()
)

// harness is a pipeline plus its metrics, for assertions.
type harness struct {
	*Pipeline
	t   *testing.T
	rec *metrics.Recorder
	out *bytes.Buffer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	out := &bytes.Buffer{}
	rec := metrics.New("pipeline", out)
	p, err := New(Options{Options: inproc.Options{Start: t0, Metrics: rec, Log: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	return &harness{Pipeline: p, t: t, rec: rec, out: out}
}

// metric sums a metric over everything recorded so far.
func (h *harness) metric(name string) float64 {
	h.t.Helper()
	if err := h.rec.Flush(); err != nil {
		h.t.Fatal(err)
	}
	sum := 0.0
	sc := bufio.NewScanner(bytes.NewReader(h.out.Bytes()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			h.t.Fatal(err)
		}
		if v, ok := line[name].(float64); ok {
			sum += v
		}
	}
	return sum
}

// deletesPerCancel: a cancel of a task without a reminder deletes the
// deadline's schedule only (the record shows no reminder time, so the
// worker makes no call for a reminder schedule).
const deletesPerCancel = 1

// create makes a task without a reminder: these tests pin the deadline's
// schedule (reminder_test.go pins the reminder's).
func (h *harness) create(due time.Time) task.Task {
	h.t.Helper()
	return h.createWith(due, task.ReminderNone)
}

func (h *harness) createWith(due time.Time, r task.Reminder) task.Task {
	h.t.Helper()
	tk, err := h.Service.Create(ctx, user, task.NewTask{Title: "water the plants", DueAt: due, Reminder: r})
	if err != nil {
		h.t.Fatal(err)
	}
	return tk
}

func (h *harness) drain(now time.Time) inproc.Report {
	h.t.Helper()
	r, err := h.Drain(ctx, now)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

func (h *harness) hasSchedule(tk task.Task) bool {
	_, ok := h.Scheduler.Lookup(task.ScheduleName(tk.TaskID))
	return ok
}

func (h *harness) status(tk task.Task) task.Status {
	got, err := h.Store.Get(ctx, tk.UserID, tk.TaskID)
	if errors.Is(err, task.ErrNotFound) {
		return ""
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return got.Status
}

// quiet asserts that nothing was lost or left over: no message in the
// queue or its DLQ, no dead expiry invocation.
func (h *harness) quiet() {
	h.t.Helper()
	if n := h.Queue.Len(); n != 0 {
		h.t.Errorf("%d messages left in the queue", n)
	}
	if dlq := h.Queue.DLQ(); len(dlq) != 0 {
		h.t.Errorf("dead-lettered messages: %+v", dlq)
	}
	if dead := h.DeadInvocations(); len(dead) != 0 {
		h.t.Errorf("dead expiry invocations: %+v", dead)
	}
}

func complete(h *harness, tk task.Task) {
	h.t.Helper()
	if _, err := h.Service.Update(ctx, tk.UserID, tk.TaskID, task.Patch{Complete: true}); err != nil {
		h.t.Fatal(err)
	}
}

func remove(h *harness, tk task.Task) {
	h.t.Helper()
	if err := h.Service.Delete(ctx, tk.UserID, tk.TaskID); err != nil {
		h.t.Fatal(err)
	}
}

var finishes = []struct {
	name       string
	finish     func(h *harness, tk task.Task)
	wantStatus task.Status
}{
	{"complete", complete, task.StatusDone},
	{"delete", remove, ""},
}

// create -> complete (or delete) -> stream record -> processor -> queue ->
// worker: the schedule is gone, and the deadline passes in silence.
func TestCancellation(t *testing.T) {
	for _, f := range finishes {
		t.Run(f.name, func(t *testing.T) {
			h := newHarness(t)
			due := t0.Add(time.Hour)
			tk := h.create(due)
			h.drain(t0)
			if !h.hasSchedule(tk) {
				t.Fatal("no schedule after create")
			}
			f.finish(h, tk)
			r := h.drain(t0.Add(time.Minute))
			if r.Records == 0 || r.Delivered != 1 {
				t.Errorf("report %+v, want the record processed and one message delivered", r)
			}
			if h.hasSchedule(tk) {
				t.Fatal("schedule still there after the pipeline drained")
			}
			if got := h.Scheduler.Calls["Disarm"]; got != 1*deletesPerCancel {
				t.Errorf("%d deletes, want %d", got, deletesPerCancel)
			}
			if got := h.metric(cancel.MetricCancelled); got != 1 {
				t.Errorf("Cancelled = %v, want 1", got)
			}
			h.drain(due.Add(time.Hour))
			if n := len(h.Outbox.Sent()); n != 0 {
				t.Errorf("%d notifications, want none", n)
			}
			if got := h.status(tk); got != f.wantStatus {
				t.Errorf("status %q, want %q", got, f.wantStatus)
			}
			h.quiet()
		})
	}
}

// Every stage runs twice without harm: a replayed stream record, and a
// queue message delivered twice, give one effective delete and no error.
func TestReplayAndDuplicateDelivery(t *testing.T) {
	tests := []struct {
		name            string
		run             func(h *harness, now time.Time)
		wantDeletes     int
		wantAlreadyGone float64
	}{
		{"stream record replayed within the dedup window", func(h *harness, now time.Time) {
			h.PumpStream(ctx)
			h.ReplayStream(1)
			h.drain(now)
		}, 1, 0},
		{"stream record replayed after the dedup window", func(h *harness, now time.Time) {
			h.drain(now)
			h.ReplayStream(1)
			h.drain(now.Add(10 * time.Minute))
		}, 2, 1},
		{"queue message delivered twice (the first ack lost)", func(h *harness, now time.Time) {
			lost := false
			h.Queue.LoseAck = func(inproc.Received) bool {
				if lost {
					return false
				}
				lost = true
				return true
			}
			h.drain(now)
			h.drain(now.Add(31 * time.Second)) // past the visibility timeout
		}, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			tk := h.create(t0.Add(time.Hour))
			h.drain(t0)
			complete(h, tk)
			tt.run(h, t0.Add(time.Minute))
			if h.hasSchedule(tk) {
				t.Error("schedule still there")
			}
			if got := h.Scheduler.Calls["Disarm"]; got != tt.wantDeletes*deletesPerCancel {
				t.Errorf("%d delete calls, want %d", got, tt.wantDeletes*deletesPerCancel)
			}
			if got := h.metric(cancel.MetricCancelled); got != 1 {
				t.Errorf("Cancelled = %v, want exactly 1", got)
			}
			if got := h.metric(cancel.MetricAlreadyGone); got != tt.wantAlreadyGone {
				t.Errorf("AlreadyGone = %v, want %v", got, tt.wantAlreadyGone)
			}
			if got := h.metric(cancel.MetricRetryable) + h.metric(cancel.MetricMalformed); got != 0 {
				t.Errorf("%v failures, want none", got)
			}
			h.quiet()
		})
	}
}

// The schedule fires before the cancellation reaches it: the expiry finds
// the task finished and sends nothing; the worker then finds no schedule
// and succeeds.
func TestScheduleAlreadyFired(t *testing.T) {
	for _, f := range finishes {
		t.Run(f.name, func(t *testing.T) {
			h := newHarness(t)
			due := t0.Add(time.Hour)
			tk := h.create(due)
			h.drain(t0)
			f.finish(h, tk)
			h.Clock.Set(due)
			fired := h.FireSchedules(ctx)
			if fired.Fired != 1 || fired.Outcomes[string(task.Skipped)] != 1 {
				t.Fatalf("fire report %+v, want one skipped expiry", fired)
			}
			h.drain(due)
			if got := h.metric(cancel.MetricAlreadyGone); got != 1 {
				t.Errorf("AlreadyGone = %v, want 1", got)
			}
			if n := len(h.Outbox.Sent()); n != 0 {
				t.Errorf("%d notifications, want none", n)
			}
			if got := h.status(tk); got != f.wantStatus {
				t.Errorf("status %q, want %q", got, f.wantStatus)
			}
			h.quiet()
		})
	}
}

// A deadline moved later races the old schedule. Whichever wins, the task
// is never expired before its new deadline, and is expired and notified
// exactly once at it.
func TestDeadlineChangeRacingOldSchedule(t *testing.T) {
	tests := []struct {
		name string
		// race runs between the deadline change (at due-10s) and the old
		// deadline.
		race          func(h *harness, oldDue time.Time)
		wantRecreated float64
		wantMoved     float64
	}{
		{"the old schedule fires before the worker moves it", func(h *harness, oldDue time.Time) {
			h.Clock.Set(oldDue)
			r := h.FireSchedules(ctx) // the stream has not been processed yet
			if r.Fired != 1 || r.Outcomes[string(task.Skipped)] != 1 {
				h.t.Fatalf("old schedule fire %+v, want one skipped expiry", r)
			}
			h.drain(oldDue)
		}, 1, 0},
		{"the worker moves it before the old deadline", func(h *harness, oldDue time.Time) {
			h.drain(oldDue.Add(-5 * time.Second))
			h.drain(oldDue)
		}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			oldDue, newDue := t0.Add(time.Hour), t0.Add(2*time.Hour)
			tk := h.create(oldDue)
			h.drain(t0)
			h.Clock.Set(oldDue.Add(-10 * time.Second))
			if _, err := h.Service.Update(ctx, user, tk.TaskID, task.Patch{DueAt: &newDue}); err != nil {
				t.Fatal(err)
			}
			tt.race(h, oldDue)
			if got := h.status(tk); got != task.StatusPending {
				t.Fatalf("status %q at the old deadline, want Pending", got)
			}
			if n := len(h.Outbox.Sent()); n != 0 {
				t.Fatalf("%d notifications at the old deadline, want none", n)
			}
			sc, ok := h.Scheduler.Lookup(task.ScheduleName(tk.TaskID))
			moved := tk
			moved.DueAt = newDue
			if !ok || sc != task.ScheduleFor(moved) {
				t.Fatalf("schedule %+v (present %v), want the create contract at the new deadline", sc, ok)
			}
			h.drain(newDue.Add(-time.Second))
			if got := h.status(tk); got != task.StatusPending {
				t.Fatalf("status %q just before the new deadline, want Pending", got)
			}
			h.drain(newDue)
			if got := h.status(tk); got != task.StatusExpired {
				t.Errorf("status %q at the new deadline, want Expired", got)
			}
			sent := h.Outbox.Sent()
			if len(sent) != 1 || !sent[0].DueAt.Equal(newDue) {
				t.Errorf("notifications %+v, want one for the new deadline", sent)
			}
			if got := h.metric(cancel.MetricRecreated); got != tt.wantRecreated {
				t.Errorf("Recreated = %v, want %v", got, tt.wantRecreated)
			}
			if got := h.metric(cancel.MetricRescheduled); got != tt.wantMoved {
				t.Errorf("Rescheduled = %v, want %v", got, tt.wantMoved)
			}
			h.drain(newDue.Add(time.Hour))
			if n := len(h.Outbox.Sent()); n != 1 {
				t.Errorf("%d notifications in the end, want 1", n)
			}
			h.quiet()
		})
	}
}

// The reconciler repairs both directions of drift: a task whose schedule
// create failed, and a schedule whose cancellation was dead-lettered.
func TestReconcilerRepairsMissingScheduleAndOrphan(t *testing.T) {
	h := newHarness(t)
	due := t0.Add(2 * time.Hour)
	h.Scheduler.Fail = func(op, _ string) error {
		if op == "Arm" {
			return errThrottle
		}
		return nil
	}
	missing := h.create(due)
	h.Scheduler.Fail = nil
	if h.hasSchedule(missing) {
		t.Fatal("the failed create left a schedule")
	}
	orphaned := h.create(due)
	h.drain(t0)
	h.Scheduler.Fail = func(op, name string) error {
		if op == "Disarm" && name == task.ScheduleName(orphaned.TaskID) {
			return errThrottle
		}
		return nil
	}
	complete(h, orphaned)
	now := t0
	for i := 0; i < 10 && len(h.Queue.DLQ()) == 0; i++ {
		h.drain(now)
		now = now.Add(31 * time.Second)
	}
	if len(h.Queue.DLQ()) != 1 || !h.hasSchedule(orphaned) {
		t.Fatalf("setup: DLQ %d messages, orphan present %v", len(h.Queue.DLQ()), h.hasSchedule(orphaned))
	}
	h.Scheduler.Fail = nil

	res, err := h.Reconcile(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	want := reconcile.Result{SchedulesCreated: 1, SchedulesDeleted: 1, RepairFlagsCleared: 1, Completed: true}
	res.ItemsChecked, res.SchedulesChecked, res.SchedulerCalls = 0, 0, 0 // the run's cost, not its repairs
	if res != want {
		t.Errorf("Result = %+v, want %+v", res, want)
	}
	if sc, ok := h.Scheduler.Lookup(task.ScheduleName(missing.TaskID)); !ok || sc != task.ScheduleFor(missing) {
		t.Errorf("repaired schedule %+v (present %v), want %+v", sc, ok, task.ScheduleFor(missing))
	}
	if h.hasSchedule(orphaned) {
		t.Error("orphan schedule not deleted")
	}
	if got, _ := h.Store.Get(ctx, user, missing.TaskID); got.ScheduleRepair {
		t.Error("repair mark not cleared")
	}
	h.drain(due)
	if h.Outbox.SentFor(missing.TaskID) != 1 || h.Outbox.SentFor(orphaned.TaskID) != 0 {
		t.Errorf("notifications %+v, want one for the repaired task only", h.Outbox.Sent())
	}
	if got := h.metric(reconcile.MetricSchedulesDeleted); got != 1 {
		t.Errorf("SchedulesDeleted metric = %v, want 1", got)
	}
}

// A Pending task past its deadline with no schedule is expired by the
// reconciler, through the expiry's own path, and notified once however
// often the reconciler runs.
func TestReconcilerExpiresOverdueTask(t *testing.T) {
	h := newHarness(t)
	due := t0.Add(time.Hour)
	h.Scheduler.Fail = func(op, _ string) error {
		if op == "Arm" {
			return errThrottle
		}
		return nil
	}
	tk := h.create(due)
	h.Scheduler.Fail = nil
	h.drain(due.Add(10 * time.Minute))
	if got := h.status(tk); got != task.StatusPending {
		t.Fatalf("status %q without a schedule, want Pending", got)
	}
	for i, want := range []int{1, 0} {
		res, err := h.Reconcile(ctx, due.Add(10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if res.ItemsFired != want || !res.Completed {
			t.Errorf("run %d: Result %+v, want %d expired", i, res, want)
		}
		h.drain(h.Clock.Now())
	}
	if got := h.status(tk); got != task.StatusExpired {
		t.Errorf("status %q, want Expired", got)
	}
	if n := h.Outbox.SentFor(tk.TaskID); n != 1 {
		t.Errorf("%d notifications, want 1", n)
	}
	h.quiet()
}

// A record the queue rejects is delivered again by the stream (from the
// lowest failed record), and the cancellation still happens once.
func TestEnqueueFailureIsRetriedFromTheStream(t *testing.T) {
	h := newHarness(t)
	a, b := h.create(t0.Add(time.Hour)), h.create(t0.Add(time.Hour))
	h.drain(t0)
	rejected := false
	h.Queue.Fail = func(m cancel.Message) error {
		if m.Sort == a.TaskID && !rejected {
			rejected = true
			return errThrottle
		}
		return nil
	}
	complete(h, a)
	complete(h, b)
	first := h.Step(ctx, t0.Add(time.Minute))
	if first.RecordsFailed != 2 || first.StreamAdvanced != 0 {
		t.Errorf("first step %+v, want both records failed (b not sent after a) and the stream held", first)
	}
	h.drain(t0.Add(time.Minute))
	if h.hasSchedule(a) || h.hasSchedule(b) {
		t.Error("a schedule survived the retry")
	}
	if got := h.Scheduler.Calls["Disarm"]; got != 2*deletesPerCancel {
		t.Errorf("%d deletes, want %d", got, 2*deletesPerCancel)
	}
	h.quiet()
}

// A message that can never be handled is not lost silently: it fails on
// every delivery and lands in the dead-letter queue.
func TestMalformedMessageIsDeadLettered(t *testing.T) {
	h := newHarness(t)
	h.Queue.Send("g", "d", []byte(`{"action":"explode"}`))
	now := t0
	for i := 0; i < 10; i++ {
		h.drain(now)
		now = now.Add(31 * time.Second)
	}
	if dlq := h.Queue.DLQ(); len(dlq) != 1 || dlq[0].ReceiveCount != 5 {
		t.Errorf("DLQ %+v, want the message after 5 receives", dlq)
	}
	if got := h.metric(cancel.MetricMalformed); got != 5 {
		t.Errorf("Malformed = %v, want 5", got)
	}
}

// An expiry that fails (the notifier is down) is retried by the scheduler
// and notifies once when it recovers.
func TestExpiryRetried(t *testing.T) {
	h := newHarness(t)
	due := t0.Add(time.Hour)
	tk := h.create(due)
	down := true
	h.Outbox.Fail = func(task.Notification) error {
		if down {
			return errThrottle
		}
		return nil
	}
	h.drain(due)
	down = false
	h.drain(due.Add(time.Minute))
	if n := h.Outbox.SentFor(tk.TaskID); n != 1 || h.status(tk) != task.StatusExpired {
		t.Errorf("%d notifications, status %q; want 1, Expired", n, h.status(tk))
	}
	h.quiet()
}
