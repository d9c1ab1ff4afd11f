package provision_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/core/clock"

	// The timer kinds whose stand-ins NewTimerOf picks.
	_ "github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

var t0 = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

// newTimer is the EventBridge Scheduler timer's stand-in, as a service.
func newTimer() *inmem.Remote { return newTimerOn(timerspec.EventBridgeScheduler) }

func newTimerOn(l timerspec.Name) *inmem.Remote {
	return inmem.NewRemote(inmem.NewTimerOf(l, campaign.TaskSchema, func() time.Time { return t0 }, nil), nil)
}

// name is the schedule name of task i of c1.
func name(i int) string {
	return campaign.ScheduleName(campaign.Key{CampaignID: "c1", TaskID: campaign.TaskID("c1", i)})
}

// seed stores a Draft campaign of n Pending tasks (tokens "tok-<i>").
func seed(tb testing.TB, n int) *memory.CampaignStore {
	tb.Helper()
	st := memory.NewCampaignStore()
	c := campaign.Campaign{ID: "c1", OwnerID: "u1", Subject: "Hello", Status: campaign.Draft, Total: n,
		Rules: plan.Rules{SendsPerDay: 1440, Weekdays: []time.Weekday{0, 1, 2, 3, 4, 5, 6}, Windows: []plan.Window{{Start: 0, End: 1440}}, TimeZone: "Europe/Berlin", Start: plan.Date{Year: 2026, Month: 6, Day: 2}}}
	sends, err := plan.Plan(n, c.Rules)
	if err != nil {
		tb.Fatal(err)
	}
	rs := make([]campaign.Recipient, n)
	for i := range rs {
		rs[i] = campaign.Recipient{Email: fmt.Sprintf("r%d@example.com", i)}
	}
	i := 0
	tasks, err := campaign.NewTasks(c, rs, sends, func() string { i++; return "tok-" + strconv.Itoa(i-1) }, t0)
	if err != nil {
		tb.Fatal(err)
	}
	st.PutCampaign(c)
	st.PutTasks(tasks...)
	return st
}

func newProv(tb testing.TB, cfg provision.Config, st *memory.CampaignStore, s timer.Timer, cps provision.Checkpoints, clock campaign.Clock) *provision.Provisioner {
	tb.Helper()
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	p, err := provision.New(cfg, st, st, memory.NewCampaignSenders("u1"), s, cps, clock)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// live is the timer's schedules by name.
func live(s *inmem.Remote) map[string]timer.Schedule {
	out := map[string]timer.Schedule{}
	for _, sc := range s.All() {
		out[sc.Name] = sc
	}
	return out
}

// checkAll: every Pending task has exactly its one schedule, made with
// the token derived from its own, and no other schedule exists.
func checkAll(t *testing.T, st *memory.CampaignStore, s *inmem.Remote) {
	t.Helper()
	live := live(s)
	want := 0
	for _, task := range st.All("c1") {
		r, ok := live[campaign.ScheduleName(task.Key())]
		if task.State != campaign.Pending {
			if ok {
				t.Fatalf("task %s is %s but has a schedule", task.ID, task.State)
			}
			continue
		}
		want++
		if !ok {
			t.Fatalf("task %s has no schedule (lost)", task.ID)
		}
		if r != task.Schedule() || r.ClientToken != campaign.TaskSchema.ClientToken(r.Payload.Key, task.SchedulerRequestToken, task.SendAt) {
			t.Fatalf("task %s schedule %+v, want %+v with the token of its stored %s", task.ID, r, task.Schedule(), task.SchedulerRequestToken)
		}
	}
	if len(live) != want {
		t.Fatalf("%d schedules for %d Pending tasks", len(live), want)
	}
}

// TestScheduleCarriesTheContract: on every core timer, the task's
// schedule is TaskSchema's: due at its send time, the token derived from
// its stored one, its key and send time as the payload, which the send
// function decodes back to the task.
func TestScheduleCarriesTheContract(t *testing.T) {
	for _, l := range timerkind.Names() {
		t.Run(string(l), func(t *testing.T) {
			st := seed(t, 1)
			s := newTimerOn(l)
			res, err := newProv(t, provision.Config{}, st, s, memory.NewCampaignCheckpoints(), clock.NewFake(t0)).Run(context.Background(), "c1", t0.Add(15*time.Minute))
			if err != nil || !res.Done || res.Continue {
				t.Fatalf("run: %+v %v", res, err)
			}
			task := st.All("c1")[0]
			at := time.Date(2026, 6, 2, 10, 0, 0, 0, time.UTC) // 12:00 in Berlin, the middle of the one usable day
			k := campaign.ItemKey(task.Key())
			want := timer.Schedule{Name: campaign.TaskSchema.ScheduleName(k), At: at,
				ClientToken: campaign.TaskSchema.ClientToken(k, "tok-0", at), Payload: contract.Payload{Key: k, Due: at}}
			got, ok := s.Lookup(name(0))
			if !ok || got != want || !strings.HasPrefix(got.Name, "camp-") {
				t.Fatalf("schedule\n got %+v\nwant %+v", got, want)
			}
			if e, err := campaign.DecodeFire([]byte(campaign.TaskSchema.EncodePayload(got.Payload))); err != nil ||
				e != (campaign.FireEvent{CampaignID: "c1", TaskID: task.ID, Due: at}) {
				t.Fatalf("the send function reads %+v %v", e, err)
			}
			if task.Local != "2026-06-02T12:00:00" {
				t.Fatalf("local %s", task.Local)
			}
			c, _ := st.Campaign(context.Background(), "c1")
			if c.Status != campaign.Active {
				t.Fatalf("campaign %s, want Active", c.Status)
			}
		})
	}
}

func TestOnlyPendingTasksGetSchedules(t *testing.T) {
	st := seed(t, 250)
	for i, state := range map[int]campaign.State{3: campaign.Cancelled, 100: campaign.Finished, 249: campaign.Running} {
		k := campaign.Key{CampaignID: "c1", TaskID: campaign.TaskID("c1", i)}
		task, _ := st.Get(context.Background(), k)
		task.State = state
		st.PutTasks(task)
	}
	s := newTimer()
	cps := memory.NewCampaignCheckpoints()
	res, err := newProv(t, provision.Config{}, st, s, cps, clock.NewFake(t0)).Run(context.Background(), "c1", t0.Add(15*time.Minute))
	if err != nil || !res.Done || res.Next != 250 || res.Created != 247 {
		t.Fatalf("run: %+v %v", res, err)
	}
	checkAll(t, st, s)
	if cp, _ := cps.Load(context.Background(), "c1"); !cp.Done || cp.Next != 250 {
		t.Fatalf("checkpoint %+v", cp)
	}
}

func TestAtMostConcurrencyInFlight(t *testing.T) {
	for _, conc := range []int{0, 3} {
		t.Run(strconv.Itoa(conc), func(t *testing.T) {
			st := seed(t, 120)
			s := newTimer()
			s.Clock, s.Latency = clock.System{}, time.Millisecond
			res, err := newProv(t, provision.Config{Concurrency: conc, CallsPerSecond: 1e6}, st, s, memory.NewCampaignCheckpoints(), clock.System{}).
				Run(context.Background(), "c1", time.Now().Add(time.Hour))
			if err != nil || !res.Done {
				t.Fatalf("run: %+v %v", res, err)
			}
			limit := int64(conc)
			if conc == 0 {
				limit = provision.DefaultConcurrency
			}
			if m := s.Stats().MaxInFlight; m > limit || m < 1 {
				t.Fatalf("max in flight %d, limit %d", m, limit)
			}
			checkAll(t, st, s)
		})
	}
}

// TestThrottlesAreRetriedNeverLost: most calls are throttled; every task
// still gets its schedule, and the throttles were retried.
func TestThrottlesAreRetriedNeverLost(t *testing.T) {
	st := seed(t, 300)
	s := newTimer()
	var n atomic.Int64
	s.Fault = func(op, name string) (error, bool) {
		if n.Add(1)%4 != 0 {
			return fmt.Errorf("%s %s: %w", op, name, timer.ErrThrottled), false
		}
		return nil, false
	}
	res, err := newProv(t, provision.Config{}, st, s, memory.NewCampaignCheckpoints(), clock.NewFake(t0)).Run(context.Background(), "c1", t0.Add(1000*time.Hour))
	if err != nil || !res.Done || res.Created != 300 {
		t.Fatalf("run: %+v %v", res, err)
	}
	if res.Throttles < 600 || res.Calls != res.Throttles+300 {
		t.Fatalf("throttles %d calls %d: want every throttle retried", res.Throttles, res.Calls)
	}
	checkAll(t, st, s)
}

// TestStopsBeforeDeadlineAndResumes: each call takes a virtual second; a
// run stops a margin before its deadline with a saved checkpoint and asks
// to be invoked again; runs continue until done, creating every schedule
// once.
func TestStopsBeforeDeadlineAndResumes(t *testing.T) {
	st := seed(t, 500)
	clock := clock.NewFake(t0)
	s := newTimer()
	s.Clock, s.Latency = clock, time.Second
	cps := memory.NewCampaignCheckpoints()
	p := newProv(t, provision.Config{Concurrency: 1, PageSize: 50}, st, s, cps, clock)
	runs := 0
	for {
		runs++
		if runs > 100 {
			t.Fatal("no end after 100 runs")
		}
		deadline := clock.Now().Add(provision.DefaultMargin + 2*time.Minute)
		res, err := p.Run(context.Background(), "c1", deadline)
		if err != nil {
			t.Fatal(err)
		}
		if now := clock.Now(); now.After(deadline.Add(-provision.DefaultMargin).Add(2 * time.Second)) {
			t.Fatalf("run %d went on to %s, past deadline-margin %s", runs, now, deadline.Add(-provision.DefaultMargin))
		}
		cp, _ := cps.Load(context.Background(), "c1")
		if cp != res.Checkpoint {
			t.Fatalf("saved %+v, result %+v", cp, res.Checkpoint)
		}
		if !res.Continue {
			break
		}
		if res.Done {
			t.Fatal("Continue and Done")
		}
	}
	if runs < 3 {
		t.Fatalf("%d runs: the deadline never stopped one", runs)
	}
	checkAll(t, st, s)
	if st := s.Stats(); st.Creates != 500 {
		t.Fatalf("%d creates, want 500", st.Creates)
	}
}

// TestCrashResumesFromCheckpoint: a run killed midway (its context
// cancelled, nothing saved at the crash) is followed by a run that
// resumes from the last saved checkpoint: every schedule exists once, and
// the calls repeated are bounded by the checkpoint interval.
func TestCrashResumesFromCheckpoint(t *testing.T) {
	const n, page, ahead = 1000, 100, 40
	for _, crashAt := range []int64{1, 150, 555, 999} {
		t.Run(strconv.Itoa(int(crashAt)), func(t *testing.T) {
			st := seed(t, n)
			s := newTimer()
			ctx, crash := context.WithCancel(context.Background())
			var calls atomic.Int64
			s.Fault = func(string, string) (error, bool) {
				if calls.Add(1) == crashAt {
					crash()
				}
				return nil, false
			}
			cps := memory.NewCampaignCheckpoints()
			p := newProv(t, provision.Config{PageSize: page, MaxAhead: ahead}, st, s, cps, clock.NewFake(t0))
			if _, err := p.Run(ctx, "c1", t0.Add(time.Hour)); !errors.Is(err, context.Canceled) {
				t.Fatalf("crashed run: %v", err)
			}
			before, _ := cps.Load(context.Background(), "c1")
			res, err := p.Run(context.Background(), "c1", t0.Add(time.Hour))
			if err != nil || !res.Done {
				t.Fatalf("resumed run: %+v %v", res, err)
			}
			checkAll(t, st, s)
			stats := s.Stats()
			if stats.Creates != n {
				t.Fatalf("%d schedules created, want %d", stats.Creates, n)
			}
			if stats.Calls > n+page+ahead {
				t.Fatalf("%d calls for %d tasks (checkpoint %+v): the resume repeated more than a checkpoint interval", stats.Calls, n, before)
			}
			if res.Calls != n-before.Next {
				t.Fatalf("resumed run made %d calls, want %d (from checkpoint %d)", res.Calls, n-before.Next, before.Next)
			}
		})
	}
}

// TestLostAnswerIsHarmless: a create that took effect but whose answer
// was lost is retried with the same token and succeeds; one schedule.
func TestLostAnswerIsHarmless(t *testing.T) {
	st := seed(t, 50)
	s := newTimer()
	var mu sync.Mutex
	seen := map[string]bool{}
	s.Fault = func(_, name string) (error, bool) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[name] {
			seen[name] = true
			return errors.New("connection reset"), true
		}
		return nil, false
	}
	res, err := newProv(t, provision.Config{}, st, s, memory.NewCampaignCheckpoints(), clock.NewFake(t0)).Run(context.Background(), "c1", t0.Add(time.Hour))
	if err != nil || !res.Done || res.Calls != 100 || res.Errors != 0 {
		t.Fatalf("run: %+v %v", res, err)
	}
	checkAll(t, st, s)
}

// TestPersistentErrorsLeftToReconciler: a task whose create keeps
// failing is given up after MaxErrorAttempts, counted, and does not block
// the rest.
func TestPersistentErrorsLeftToReconciler(t *testing.T) {
	st := seed(t, 20)
	s := newTimer()
	bad := name(7)
	s.Fault = func(_, name string) (error, bool) {
		if name == bad {
			return errors.New("ValidationException"), false
		}
		return nil, false
	}
	res, err := newProv(t, provision.Config{MaxErrorAttempts: 3}, st, s, memory.NewCampaignCheckpoints(), clock.NewFake(t0)).Run(context.Background(), "c1", t0.Add(time.Hour))
	if err != nil || !res.Done || res.Errors != 1 || res.Created != 19 || res.Calls != 22 {
		t.Fatalf("run: %+v %v", res, err)
	}
	if _, ok := s.Lookup(bad); ok || len(s.All()) != 19 {
		t.Fatal("want 19 schedules, none for the failing task")
	}
}

func TestCancelledCampaignCreatesNothing(t *testing.T) {
	st := seed(t, 10)
	_ = st.SetStatus(context.Background(), "c1", []campaign.Status{campaign.Draft}, campaign.CampaignCancelled, "user", t0)
	s := newTimer()
	res, err := newProv(t, provision.Config{}, st, s, memory.NewCampaignCheckpoints(), clock.NewFake(t0)).Run(context.Background(), "c1", t0.Add(time.Hour))
	if err != nil || !res.Done || s.Stats().Calls != 0 {
		t.Fatalf("run: %+v %v, %d calls", res, err, s.Stats().Calls)
	}
}

// BenchmarkProvision10000At50PerSecond provisions 10,000 sends against a
// fake scheduler whose token bucket allows 50 calls a second (burst 10),
// with 20 ms per call, on real time run CAMPAIGN_BENCH_SPEED (default 20)
// times faster. It reports the achieved rate of created schedules, that
// rate as a percentage of the limit, the throttles and the schedules lost.
// "paced" paces calls at the limit (the default CallsPerSecond);
// "paced-x2" paces at twice the limit, so the throttle back-off does the
// rest.
//
//	go test -run '^$' -bench Provision10000 -benchtime 1x ./internal/campaigns/provision/
func BenchmarkProvision10000At50PerSecond(b *testing.B) {
	const n, limit = 10_000, 50.0
	speed := 20.0
	if v, err := strconv.ParseFloat(os.Getenv("CAMPAIGN_BENCH_SPEED"), 64); err == nil && v > 0 {
		speed = v
	}
	for _, bc := range []struct {
		name string
		pace float64
	}{{"paced", 0}, {"paced-x2", 2 * limit}} {
		b.Run(bc.name, func(b *testing.B) { benchProvision(b, n, limit, speed, bc.pace) })
	}
}

func benchProvision(b *testing.B, n int, limit, speed, pace float64) {
	for b.Loop() {
		b.StopTimer()
		st := seed(b, n)
		clock := inmem.NewScaledClock(t0, speed)
		s := inmem.NewRemote(inmem.NewScheduler(), inmem.NewBucket(clock, limit, 10))
		s.Clock, s.Latency = clock, 20*time.Millisecond
		p := newProv(b, provision.Config{CallsPerSecond: pace}, st, s, memory.NewCampaignCheckpoints(), clock)
		b.StartTimer()
		start := clock.Now()
		res, err := p.Run(context.Background(), "c1", start.Add(24*time.Hour))
		elapsed := clock.Now().Sub(start)
		b.StopTimer()
		if err != nil || !res.Done {
			b.Fatalf("run: %+v %v", res, err)
		}
		lost := 0
		for _, task := range st.All("c1") {
			if _, ok := s.Lookup(campaign.ScheduleName(task.Key())); !ok {
				lost++
			}
		}
		rate := float64(res.Created) / elapsed.Seconds()
		b.ReportMetric(rate, "calls/s")
		b.ReportMetric(100*rate/limit, "%_of_limit")
		b.ReportMetric(float64(res.Throttles), "throttled")
		b.ReportMetric(float64(lost), "lost")
		b.ReportMetric(float64(s.Stats().MaxInFlight), "max_in_flight")
		b.StartTimer()
	}
}

// TestDoneCheckpointMarksActive: a run that saved Done and died before
// marking the campaign Active is finished by the next run, with no call.
func TestDoneCheckpointMarksActive(t *testing.T) {
	st := seed(t, 3)
	_ = st.SetStatus(context.Background(), "c1", []campaign.Status{campaign.Draft}, campaign.Provisioning, "", t0)
	cps := memory.NewCampaignCheckpoints()
	_ = cps.Save(context.Background(), provision.Checkpoint{CampaignID: "c1", Next: 3, Done: true})
	s := newTimer()
	res, err := newProv(t, provision.Config{}, st, s, cps, clock.NewFake(t0)).Run(context.Background(), "c1", t0.Add(time.Hour))
	if c, _ := st.Campaign(context.Background(), "c1"); err != nil || !res.Done || c.Status != campaign.Active || s.Stats().Calls != 0 {
		t.Fatalf("%+v %v, campaign %s, %d calls", res, err, c.Status, s.Stats().Calls)
	}
}

// TestStoppedTaskIsNeverCheckpointed: a task still throttled when the run
// stops is not counted done, however the run's goroutines interleave (a
// closed results channel once yielded zero outcomes that marked task 0
// done, so its schedule would never have been created).
func TestStoppedTaskIsNeverCheckpointed(t *testing.T) {
	for i := range 200 {
		st := seed(t, 3)
		s := newTimer()
		first := name(0)
		s.Fault = func(_, name string) (error, bool) {
			if name == first {
				return timer.ErrThrottled, false
			}
			return nil, false
		}
		clock := clock.NewFake(t0)
		cps := memory.NewCampaignCheckpoints()
		res, err := newProv(t, provision.Config{Seed: uint64(i + 1)}, st, s, cps, clock).Run(context.Background(), "c1", t0.Add(provision.DefaultMargin+10*time.Second))
		if err != nil || !res.Continue || res.Done {
			t.Fatalf("run %d: %+v %v", i, res, err)
		}
		if cp, _ := cps.Load(context.Background(), "c1"); cp.Next != 0 {
			t.Fatalf("run %d: checkpoint %d past the task that was never created", i, cp.Next)
		}
	}
}

// TestRemovedSenderProvisionsNothing: provisioning asks the sender check
// at the start of every run (the first, and each self re-invoke); an
// owner no longer in the sender group gets the campaign Cancelled with
// the senderRemoved reason and no further schedule.
func TestRemovedSenderProvisionsNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		// partial: a first run, stopped by its deadline, makes some
		// schedules before the removal.
		partial bool
	}{{"removed before the first run", false}, {"removed between two runs", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := seed(t, 300)
			s := newTimer()
			clk := clock.NewFake(t0)
			owners := memory.NewCampaignSenders("u1")
			p, err := provision.New(provision.Config{Seed: 1, Concurrency: 1, PageSize: 10, MaxAhead: 10, Margin: time.Second}, st, st, owners, s, memory.NewCampaignCheckpoints(), clk)
			if err != nil {
				t.Fatal(err)
			}
			before := 0
			if tc.partial {
				// CallsPerSecond 50 on the fake clock: a 2 s run makes
				// about 50 schedules, then stops.
				res, err := p.Run(ctx, "c1", t0.Add(2*time.Second))
				if err != nil || res.Done || res.Created == 0 {
					t.Fatalf("first run: %+v %v; want a partial run", res, err)
				}
				before = len(s.All())
			}
			owners.Remove("u1")
			res, err := p.Run(ctx, "c1", clk.Now().Add(time.Hour))
			if err != nil || !res.Done || len(s.All()) != before {
				t.Fatalf("run after removal: %+v %v, %d schedules (%d before); want done, no new schedule", res, err, len(s.All()), before)
			}
			c, _ := st.Campaign(ctx, "c1")
			if c.Status != campaign.CampaignCancelled || !campaign.SenderRemoved(c) {
				t.Fatalf("campaign %s (%q); want Cancelled, senderRemoved", c.Status, c.CancelReason)
			}
		})
	}
}

// TestSenderCheckErrorProvisionsNothing: a check that cannot answer
// stops the run with an error (the asynchronous invoke retries it) and
// neither creates a schedule nor cancels.
func TestSenderCheckErrorProvisionsNothing(t *testing.T) {
	st := seed(t, 5)
	s := newTimer()
	owners := memory.NewCampaignSenders("u1")
	owners.Fault = func(string) error { return errors.New("TooManyRequestsException") }
	p, err := provision.New(provision.Config{Seed: 1}, st, st, owners, s, memory.NewCampaignCheckpoints(), clock.NewFake(t0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), "c1", t0.Add(time.Hour)); err == nil || len(s.All()) != 0 {
		t.Fatalf("run: %v, %d schedules; want an error and none", err, len(s.All()))
	}
	if c, _ := st.Campaign(context.Background(), "c1"); c.Status != campaign.Draft {
		t.Fatalf("campaign %s; want Draft", c.Status)
	}
}
