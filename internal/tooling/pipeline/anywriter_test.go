package pipeline

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/fire/firetest"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/inproc"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// recorder is an adopter's target function: it records every payload.
type recorder struct{ got []contract.Payload }

func (r *recorder) Deliver(_ context.Context, p contract.Payload) error {
	r.got = append(r.got, p)
	return nil
}

func (r *recorder) count(p contract.Payload) int {
	n := 0
	for _, g := range r.got {
		if g.Equal(p) {
			n++
		}
	}
	return n
}

// A consumer's own table (keys tenantId/jobId, due attribute runAt, armed
// state Queued, fired state Done), written only by plain puts and deletes
// (no code of ours): its items are scheduled, cancelled (state ->
// Cancelled, and delete), moved (runAt changed) and fired exactly once,
// the target getting the key and runAt; one CreateSchedule per item.
func TestConsumerSchemaThroughThePipeline(t *testing.T) {
	s := firetest.ConsumerSchema()
	target := &recorder{}
	p, err := inproc.NewForSchema(s, target, inproc.Options{Start: t0, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	job := func(id string, at time.Time) map[string]string {
		return map[string]string{"tenantId": "acme", "jobId": id, "status": "Queued", "runAt": contract.FormatTime(at), "kind": "report"}
	}
	put := func(a map[string]string) {
		t.Helper()
		if err := p.Items.Put(a); err != nil {
			t.Fatal(err)
		}
	}
	drain := func(now time.Time) {
		t.Helper()
		if _, err := p.Drain(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	key := func(id string) contract.Key { return contract.Key{Partition: "acme", Sort: id} }
	scheduled := func(id string) (contract.Schedule, bool) { return p.Scheduler.Lookup(s.ScheduleName(key(id))) }
	at1, at3 := t0.Add(time.Hour), t0.Add(3*time.Hour)
	for _, id := range []string{"fires", "cancelled", "deleted", "moved"} {
		put(job(id, at1))
	}
	drain(t0)
	for _, id := range []string{"fires", "cancelled", "deleted", "moved"} {
		sc, ok := scheduled(id)
		if want := s.ScheduleFor(contract.Item{Key: key(id), Due: at1}); !ok || sc != want {
			t.Fatalf("schedule of %s = %+v (present %v), want %+v", id, sc, ok, want)
		}
	}

	cancelled := job("cancelled", at1)
	cancelled["status"] = "Cancelled"
	put(cancelled)
	p.Items.Delete(key("deleted"))
	moved := job("moved", at3)
	put(moved)
	drain(t0.Add(time.Minute))
	for id, want := range map[string]bool{"fires": true, "cancelled": false, "deleted": false, "moved": true} {
		if _, ok := scheduled(id); ok != want {
			t.Errorf("schedule of %s present %v, want %v", id, ok, want)
		}
	}
	if sc, _ := scheduled("moved"); !sc.At.Equal(at3) || !sc.Payload.Due.Equal(at3) {
		t.Errorf("moved schedule at %v for %v, want %v", sc.At, sc.Payload.Due, at3)
	}

	drain(at1)
	drain(at3)
	if n := p.Scheduler.Calls["Arm"]; n != 4 {
		t.Errorf("%d CreateSchedule calls, want 4 (one per item)", n)
	}
	// Every record delivered again, long after the queue's deduplication
	// window (schedules made again fire and find the items fired), and a
	// duplicate firing of each schedule: nothing runs twice.
	p.ReplayStream(1 << 20)
	drain(at3.Add(time.Minute))
	for _, id := range []string{"fires", "moved"} {
		for _, due := range []time.Time{at1, at3} {
			if out, err := p.Fire.Fire(ctx, contract.Payload{Key: key(id), Due: due}, target); err != nil || out != fire.Skipped {
				t.Fatalf("a late duplicate firing of %s at %v: %v, %v; want skipped", id, due, out, err)
			}
		}
	}
	fires, movedAt3, movedAt1 := contract.Payload{Key: key("fires"), Due: at1}, contract.Payload{Key: key("moved"), Due: at3},
		contract.Payload{Key: key("moved"), Due: at1}
	if target.count(fires) != 1 || target.count(movedAt3) != 1 || target.count(movedAt1) != 0 || len(target.got) != 2 {
		t.Fatalf("target ran with %+v; want once for fires at %v and once for moved at %v", target.got, at1, at3)
	}
	for id, want := range map[string]string{"fires": "Done", "moved": "Done", "cancelled": "Cancelled"} {
		a, _ := p.Items.Attrs(key(id))
		if a["status"] != want || (want == "Done") != (a[s.DeliveredAtAttr] != "") || a["kind"] != "report" {
			t.Errorf("item %s = %v, want status %s, delivery recorded when fired, its own attributes kept", id, a, want)
		}
	}
	if left := p.Scheduler.All(); len(left) != 0 {
		t.Errorf("schedules left: %+v", left)
	}
	if dlq := p.Queue.DLQ(); len(dlq) != 0 {
		t.Errorf("dead-lettered messages: %+v", dlq)
	}
}

// At most one CreateSchedule per item in the normal path: a task created
// through the API (which creates its schedule inline and marks the item),
// and a task put into the table by other code (the stream path creates
// it). Both then expire exactly once.
func TestOneCreateSchedulePerItem(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(h *harness, due time.Time) task.Task
	}{
		{"created through the API", func(h *harness, due time.Time) task.Task { return h.create(due) }},
		{"put by another writer", func(h *harness, due time.Time) task.Task {
			tk := task.Task{UserID: user, TaskID: task.RandomIDs{}.NewID(t0), Title: "from a batch job", Status: task.StatusPending,
				DueAt: due, CreatedAt: t0, UpdatedAt: t0}
			h.Store.PutItem(tk)
			return tk
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			var tasks []task.Task
			for i := range 3 {
				tasks = append(tasks, tc.write(h, t0.Add(time.Duration(i+1)*time.Hour)))
			}
			h.drain(t0)
			for _, tk := range tasks {
				if !h.hasSchedule(tk) {
					t.Fatalf("task %s has no schedule", tk.TaskID)
				}
			}
			// A replay of every record creates nothing more.
			h.ReplayStream(1 << 20)
			h.drain(t0)
			if n := h.Scheduler.Calls["Arm"]; n != len(tasks) {
				t.Fatalf("%d CreateSchedule calls for %d tasks, want one each", n, len(tasks))
			}
			h.drain(t0.Add(4 * time.Hour))
			for _, tk := range tasks {
				if got := h.status(tk); got != task.StatusExpired {
					t.Errorf("task %s is %s, want Expired", tk.TaskID, got)
				}
			}
			if n := len(h.Outbox.Sent()); n != len(tasks) {
				t.Errorf("%d notifications, want %d", n, len(tasks))
			}
			if n := h.Scheduler.Calls["Arm"]; n != len(tasks) {
				t.Errorf("%d CreateSchedule calls in all, want %d", n, len(tasks))
			}
			h.quiet()
		})
	}
}

// An item whose due time another writer spelled in any RFC 3339 form
// (contract.WriterSpellings: other offsets, fractions, lower case) fires
// once, at its instant and not a second before, on a consumer's table and
// on the to-do app's; a re-spelling of the same instant before it fires
// moves nothing.
func TestEveryWriterSpellingFiresOnceAtItsInstant(t *testing.T) {
	at := t0.Add(time.Hour)
	spellings := contract.WriterSpellings(at)
	for i, v := range spellings {
		respelled := spellings[(i+4)%len(spellings)]
		t.Run("consumer "+v, func(t *testing.T) {
			s := firetest.ConsumerSchema()
			target := &recorder{}
			p, err := inproc.NewForSchema(s, target, inproc.Options{Start: t0, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			job := func(due string) map[string]string {
				return map[string]string{"tenantId": "acme", "jobId": "j1", "status": "Queued", "runAt": due}
			}
			for _, w := range []struct {
				now time.Time
				due string
			}{{t0, v}, {t0.Add(time.Minute), respelled}} {
				if err := p.Items.Put(job(w.due)); err != nil {
					t.Fatal(err)
				}
				if _, err := p.Drain(ctx, w.now); err != nil {
					t.Fatal(err)
				}
			}
			want := contract.Payload{Key: contract.Key{Partition: "acme", Sort: "j1"}, Due: at}
			for _, step := range []struct {
				now  time.Time
				runs int
			}{{at.Add(-time.Second), 0}, {at, 1}, {at.Add(time.Hour), 1}} {
				if _, err := p.Drain(ctx, step.now); err != nil {
					t.Fatal(err)
				}
				if got := target.count(want); got != step.runs || len(target.got) != step.runs {
					t.Fatalf("at %v the target ran with %+v, want %d run(s) of %+v", step.now, target.got, step.runs, want)
				}
			}
			a, _ := p.Items.Attrs(want.Key)
			if a["status"] != s.FiredState || a["runAt"] != respelled {
				t.Errorf("item = %v, want fired with runAt as written (%q)", a, respelled)
			}
			if n := p.Scheduler.Calls["Arm"]; n != 1 {
				t.Errorf("%d CreateSchedule calls, want 1", n)
			}
		})
		t.Run("to-do "+v, func(t *testing.T) {
			h := newHarness(t)
			tk := task.Task{UserID: user, TaskID: task.RandomIDs{}.NewID(t0), Title: "from another service", Status: task.StatusPending,
				DueAt: at, CreatedAt: t0, UpdatedAt: t0}
			if err := h.Store.PutItemSpelled(tk, v); err != nil {
				t.Fatal(err)
			}
			h.drain(t0)
			if !h.hasSchedule(tk) {
				t.Fatal("no schedule")
			}
			for _, step := range []struct {
				now  time.Time
				want task.Status
				sent int
			}{{at.Add(-time.Second), task.StatusPending, 0}, {at, task.StatusExpired, 1}, {at.Add(time.Hour), task.StatusExpired, 1}} {
				h.drain(step.now)
				if got, n := h.status(tk), len(h.Outbox.Sent()); got != step.want || n != step.sent {
					t.Fatalf("at %v the task is %s with %d notification(s), want %s with %d", step.now, got, n, step.want, step.sent)
				}
			}
			if got := h.Store.DueAttr(tk.UserID, tk.TaskID); got != v {
				t.Errorf("dueAt = %q after the expiry, want it as written (%q)", got, v)
			}
		})
	}
}

// On every timer, a consumer's writer completes a job by writing the
// schema's fired state itself (the jobs example's `-done`: SET status =
// Done, which is also what the claim writes). That is a cancel: the
// job's schedule, execution or marker is removed, and the target never
// runs for it, not even once the due time (plus the TTL delay) passed.
// When the cancel is lost (every delete fails), the firing finds the
// job in the fired state without the library's claim and runs nothing.
// A job left Queued beside it fires once by the library's claim, which
// queues no cancel.
func TestWriterCompletesWithTheFiredStateOnEveryTimer(t *testing.T) {
	s := firetest.ConsumerSchema()
	const delay = 90 * time.Minute
	errDown := errors.New("delete refused")
	for _, l := range timerkind.Names() {
		for _, tc := range []struct {
			name       string
			cancelLost bool
		}{{"cancelled", false}, {"the cancel lost", true}} {
			t.Run(string(l)+"/"+tc.name, func(t *testing.T) {
				out := &bytes.Buffer{}
				rec := metrics.New("pipeline", out)
				target := &recorder{}
				p, err := inproc.NewForSchema(s, target, inproc.Options{Start: t0, Timer: l, Metrics: rec,
					TTLDelay: func() time.Duration { return delay }, Log: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				h := &harness{Pipeline: &Pipeline{Engine: p.Engine}, t: t, rec: rec, out: out}
				due := t0.Add(time.Hour)
				key := func(id string) contract.Key { return contract.Key{Partition: "acme", Sort: id} }
				job := func(id, state string) map[string]string {
					return map[string]string{"tenantId": "acme", "jobId": id, s.StateAttr: state, s.DueAttr: contract.FormatTime(due)}
				}
				for _, id := range []string{"completed", "fires"} {
					if err := p.Items.Put(job(id, "Queued")); err != nil {
						t.Fatal(err)
					}
				}
				h.drain(t0)
				if n := len(p.Timer.All()); n != 2 {
					t.Fatalf("%d schedules after the puts, want 2: %+v", n, p.Timer.All())
				}
				if tc.cancelLost {
					failDeletes(p.Timer, errDown)
				}
				if err := p.Items.Put(job("completed", s.FiredState)); err != nil {
					t.Fatal(err)
				}
				for i := range 10 { // past every redelivery of the cancel
					h.drain(t0.Add(time.Duration(i+1) * time.Minute))
				}
				_, kept := p.Timer.Lookup(s.ScheduleName(key("completed")))
				if kept != tc.cancelLost {
					t.Fatalf("the completed job keeps its schedule: %v, want %v", kept, tc.cancelLost)
				}
				if _, ok := p.Timer.Lookup(s.ScheduleName(key("fires"))); !ok {
					t.Fatal("the queued job lost its schedule")
				}
				h.drain(due.Add(delay + time.Minute))
				h.drain(due.Add(delay + time.Hour)) // past every lease and retry
				want := contract.Payload{Key: key("fires"), Due: due}
				if len(target.got) != 1 || !target.got[0].Equal(want) {
					t.Fatalf("target ran with %+v, want %+v only", target.got, want)
				}
				if a, _ := p.Items.Attrs(key("completed")); a[s.DeliveredAtAttr] != "" || a[s.ClaimAtAttr] != "" {
					t.Errorf("the completed job was claimed or delivered: %v", a)
				}
				if left := p.Timer.All(); len(left) != 0 {
					t.Errorf("schedules left: %+v", left)
				}
				// One cancel, the writer's: the claim of "fires" queued none.
				wantCancels := 1.0
				if tc.cancelLost {
					wantCancels = 0
				}
				if c, g := h.metric(cancel.MetricCancelled), h.metric(cancel.MetricAlreadyGone); c != wantCancels || g != 0 {
					t.Errorf("%v cancels deleted a schedule and %v found none, want %v and 0", c, g, wantCancels)
				}
			})
		}
	}
}

// failDeletes makes every delete of a timer's stand-in fail.
func failDeletes(l inmem.TimerScheduler, err error) {
	fail := func(op, _ string) error {
		if op == "Disarm" {
			return err
		}
		return nil
	}
	switch l := l.(type) {
	case *inmem.Scheduler:
		l.Fail = fail
	case *inmem.Executions:
		l.Fail = fail
	case *inmem.TTLMarkers:
		l.Fail = fail
	}
}
