package campaign_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/core/clock"
	// The timer kinds whose stand-ins NewTimerOf picks.
	_ "github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/paced"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// Monday 2026-06-01 10:00 in Berlin: inside the 09:00-17:00 window.
var noon = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

type dispatches []campaign.FireEvent

func (d *dispatches) Dispatch(_ context.Context, e campaign.FireEvent) error {
	*d = append(*d, e)
	return nil
}

// repairEnv is one campaign c1 (window 09:00-17:00 Berlin) and its
// tasks, under the core reconciler with the campaign's rules.
type repairEnv struct {
	st     *memory.CampaignStore
	sched  *inmem.Remote
	sender *memory.CampaignSender
	owners *memory.CampaignSenders
	clock  *clock.Fake
	disp   *dispatches
	ports  campaign.ReconcilePorts
	cfg    reconcile.Config
}

// newRepairEnv runs on the EventBridge Scheduler timer's stand-in;
// newRepairEnvOn on any timer's.
func newRepairEnv(t *testing.T, at time.Time, status campaign.Status, tasks ...campaign.SendTask) *repairEnv {
	t.Helper()
	return newRepairEnvOn(t, timerspec.EventBridgeScheduler, at, status, tasks...)
}

func newRepairEnvOn(t *testing.T, l timerspec.Name, at time.Time, status campaign.Status, tasks ...campaign.SendTask) *repairEnv {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	st := memory.NewCampaignStore()
	st.PutCampaign(campaign.Campaign{ID: "c1", OwnerID: "u1", Status: status,
		Rules: plan.Rules{Windows: []plan.Window{{Start: 540, End: 1020}}, TimeZone: "Europe/Berlin", Start: plan.Date{Year: 2026, Month: 6, Day: 1}}})
	for i := range tasks {
		tasks[i].CampaignID, tasks[i].ID, tasks[i].Index = "c1", campaign.TaskID("c1", i), i
		tasks[i].SchedulerRequestToken = fmt.Sprintf("tok-%d", i)
		tasks[i].TimeZone, tasks[i].Local = "Europe/Berlin", tasks[i].SendAt.In(loc).Format(plan.LocalLayout)
	}
	st.PutTasks(tasks...)
	clk := clock.NewFake(at)
	tm := inmem.NewRemote(inmem.NewTimerOf(l, campaign.TaskSchema, clk.Now, nil), nil)
	e := &repairEnv{st: st, sched: tm, sender: memory.NewCampaignSender(clk), owners: memory.NewCampaignSenders("u1"), clock: clk, disp: &dispatches{}}
	e.ports = campaign.ReconcilePorts{Tasks: st, Campaigns: st, Timer: tm, Sender: e.sender, Owners: e.owners, Dispatcher: e.disp,
		Clock: clk, Checkpoints: &inmem.Checkpoints{}, Log: slog.New(slog.DiscardHandler)}
	return e
}

// live is the timer's schedules by name.
func (e *repairEnv) live() map[string]timer.Schedule {
	out := map[string]timer.Schedule{}
	for _, s := range e.sched.All() {
		out[s.Name] = s
	}
	return out
}

// arm creates task i's schedule as provisioning does.
func (e *repairEnv) arm(t *testing.T, i int) {
	t.Helper()
	if err := e.sched.Arm(context.Background(), e.task(t, i).Schedule()); err != nil {
		t.Fatal(err)
	}
}

// run makes one pass.
func (e *repairEnv) run(t *testing.T) (reconcile.Result, campaign.RepairCounts) {
	t.Helper()
	rules := &campaign.Repair{}
	r, err := campaign.NewReconciler(e.cfg, rules, e.ports)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res, rules.Counts()
}

func (e *repairEnv) task(t *testing.T, i int) campaign.SendTask {
	t.Helper()
	task, err := e.st.Get(context.Background(), campaign.Key{CampaignID: "c1", TaskID: campaign.TaskID("c1", i)})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func pending(at time.Time) campaign.SendTask {
	return campaign.SendTask{State: campaign.Pending, SendAt: at}
}

func running(at, lease time.Time, attempt int) campaign.SendTask {
	return campaign.SendTask{State: campaign.Running, SendAt: at, ClaimedAt: at, LeaseUntil: lease, Attempt: attempt}
}

// quiet: the pass repaired nothing and the rules decided nothing.
func quiet(res reconcile.Result, n campaign.RepairCounts) bool {
	return res.Repaired() == 0 && res.ItemsMoved+res.ItemsRearmed+res.ItemsEnded == 0 && res.Errors == 0 && n == campaign.RepairCounts{}
}

func TestRepairRecreatesMissingSchedulesWithTheSameToken(t *testing.T) {
	for _, l := range timerkind.Names() {
		t.Run(string(l), func(t *testing.T) {
			e := newRepairEnvOn(t, l, noon, campaign.Active, pending(noon.Add(30*time.Minute)), pending(noon.Add(50*time.Minute)), pending(noon.Add(3*time.Hour)))
			e.arm(t, 1)
			if res, _ := e.run(t); res.SchedulesCreated != 1 || res.ItemsChecked != 3 || !res.Completed {
				t.Fatalf("%+v", res)
			}
			live := e.live()
			name0 := campaign.ScheduleName(e.task(t, 0).Key())
			if len(live) != 2 || live[name0] != e.task(t, 0).Schedule() {
				t.Fatalf("schedules %+v, want task 0's %+v", live, e.task(t, 0).Schedule())
			}
			if st := e.sched.Stats(); st.Creates != 2 || st.Calls != 5 {
				t.Fatalf("%+v: want 2 creates (the test's and the recreated one) and 5 calls (2 checks, 1 create, 1 listing of the timer, the test's; the task due in 3 h is not checked yet)", st)
			}
			// Two hours later the third is near: it is checked and recreated.
			e.clock.Advance(2 * time.Hour)
			if res, _ := e.run(t); res.SchedulesCreated != 1 {
				t.Fatalf("%+v", res)
			}
			if got := e.live()[campaign.ScheduleName(e.task(t, 2).Key())]; got != e.task(t, 2).Schedule() {
				t.Fatalf("schedule %+v, want %+v", got, e.task(t, 2).Schedule())
			}
		})
	}
}

// TestRepairRules covers each rule in one pass over one task.
func TestRepairRules(t *testing.T) {
	sentAt := noon.Add(-30 * time.Minute)
	evening := time.Date(2026, 6, 1, 18, 0, 0, 0, time.UTC) // 20:00 Berlin: the window is closed
	cases := []struct {
		name   string
		now    time.Time
		status campaign.Status
		task   campaign.SendTask
		sent   bool // the sender recorded the task's send
		want   campaign.RepairCounts
		state  campaign.State
		disp   int
		check  func(t *testing.T, e *repairEnv, res reconcile.Result)
	}{
		{name: "overdue in the window: dispatched", now: noon, status: campaign.Active, task: pending(noon.Add(-time.Hour)),
			state: campaign.Pending, disp: 1,
			check: func(t *testing.T, _ *repairEnv, res reconcile.Result) {
				if res.ItemsFired != 1 {
					t.Errorf("fired %d, want 1", res.ItemsFired)
				}
			}},
		{name: "overdue outside the window: retimed to the next window, new token", now: evening, status: campaign.Active,
			task: pending(noon), want: campaign.RepairCounts{Retimed: 1}, state: campaign.Pending,
			check: func(t *testing.T, e *repairEnv, res reconcile.Result) {
				task := e.task(t, 0)
				got, n := e.live()[campaign.ScheduleName(task.Key())], len(e.live())
				if task.Local != "2026-06-02T09:00:00" || task.Retimed != 1 || got != task.Schedule() || n != 1 ||
					!got.At.Equal(time.Date(2026, 6, 2, 7, 0, 0, 0, time.UTC)) || res.SchedulesMoved != 1 {
					t.Errorf("task %+v, schedule %+v, %+v", task, got, res)
				}
			}},
		{name: "overdue within the grace period: left alone", now: noon.Add(-50 * time.Minute), status: campaign.Active,
			task: pending(noon.Add(-time.Hour)), state: campaign.Pending},
		{name: "overdue after 3 claims: failed", now: noon, status: campaign.Active,
			task: func() campaign.SendTask { p := pending(noon.Add(-time.Hour)); p.Attempt = 3; return p }(),
			want: campaign.RepairCounts{Failed: 1}, state: campaign.Failed},
		{name: "overdue after 5 moves: failed", now: evening, status: campaign.Active,
			task: func() campaign.SendTask { p := pending(noon); p.Retimed = 5; return p }(),
			want: campaign.RepairCounts{Failed: 1}, state: campaign.Failed},
		{name: "stale claim, sent: finished with its receipt", now: noon, status: campaign.Active,
			task: running(noon.Add(-time.Hour), noon.Add(-time.Minute), 1), sent: true,
			want: campaign.RepairCounts{Finished: 1}, state: campaign.Finished,
			check: func(t *testing.T, e *repairEnv, _ reconcile.Result) {
				if got := e.task(t, 0); !got.SentAt.Equal(sentAt) || got.MessageID != "msg-1" || len(e.sender.Outbox) != 1 {
					t.Errorf("finished without the receipt, or sent again: %+v", got)
				}
			}},
		{name: "stale claim, not sent: requeued and dispatched", now: noon, status: campaign.Active,
			task: running(noon.Add(-time.Hour), noon.Add(-time.Minute), 1), want: campaign.RepairCounts{Requeued: 1},
			state: campaign.Pending, disp: 1},
		{name: "stale claim, not sent, 3 claims: failed", now: noon, status: campaign.Active,
			task: running(noon.Add(-time.Hour), noon.Add(-time.Minute), 3), want: campaign.RepairCounts{Failed: 1}, state: campaign.Failed},
		{name: "claim within its lease: left alone", now: noon, status: campaign.Active,
			task: running(noon.Add(-time.Hour), noon.Add(time.Minute), 1), state: campaign.Running},
		{name: "stale claim of a cancelled campaign: requeued, then cancelled", now: noon, status: campaign.CampaignCancelled,
			task: running(noon.Add(-time.Hour), noon.Add(-time.Minute), 1), want: campaign.RepairCounts{Requeued: 1, Cancelled: 1},
			state: campaign.Cancelled},
		{name: "interrupted cancel: completed, schedule deleted", now: noon, status: campaign.CampaignCancelled,
			task: pending(noon.Add(2 * time.Hour)), want: campaign.RepairCounts{Cancelled: 1}, state: campaign.Cancelled,
			check: func(t *testing.T, e *repairEnv, res reconcile.Result) {
				if n := len(e.live()); n != 0 || res.SchedulesDeleted != 1 || e.task(t, 0).Reason == "" {
					t.Errorf("%d schedules left, %+v, task %+v", n, res, e.task(t, 0))
				}
			}},
		{name: "draft campaign: nothing owed", now: noon, status: campaign.Draft, task: pending(noon.Add(-2 * time.Hour)),
			state: campaign.Pending},
	}
	for _, l := range timerkind.Names() {
		for _, c := range cases {
			t.Run(string(l)+"/"+c.name, func(t *testing.T) {
				e := newRepairEnvOn(t, l, c.now, c.status, c.task)
				if c.status == campaign.CampaignCancelled && c.task.State == campaign.Pending {
					e.arm(t, 0)
				}
				if c.sent {
					s := memory.NewCampaignSender(clock.NewFake(sentAt))
					_, _ = s.Send(context.Background(), campaign.Message{IdempotencyKey: e.task(t, 0).IdempotencyKey()})
					e.sender, e.ports.Sender = s, s
				}
				res, n := e.run(t)
				if n != c.want || res.Errors != 0 || e.task(t, 0).State != c.state || len(*e.disp) != c.disp {
					t.Fatalf("counts %+v (want %+v), %+v, task %+v, %d dispatched", n, c.want, res, e.task(t, 0), len(*e.disp))
				}
				if c.check != nil {
					c.check(t, e, res)
				}
				if c.status == campaign.Draft && len(e.live()) != 0 {
					t.Fatal("a draft campaign's task got a schedule")
				}
			})
		}
	}
}

// TestRepairSecondPassIsIdempotent: what one pass repaired, the next
// finds in order.
func TestRepairSecondPassIsIdempotent(t *testing.T) {
	evening := time.Date(2026, 6, 1, 15, 30, 0, 0, time.UTC) // 17:30 Berlin
	for _, l := range timerkind.Names() {
		e := newRepairEnvOn(t, l, evening, campaign.Active,
			pending(evening.Add(20*time.Minute)), // missing schedule
			pending(noon),                        // overdue, window closed: retimed
			running(noon.Add(-time.Hour), noon.Add(-time.Minute), 3),       // stale, used up: failed
			running(evening.Add(-time.Hour), evening.Add(-time.Minute), 1)) // stale, not sent: requeued, retimed
		res, n := e.run(t)
		if quiet(res, n) || res.Errors != 0 {
			t.Fatalf("first pass did nothing: %+v %+v", res, n)
		}
		live := len(e.live())
		if res, n := e.run(t); !quiet(res, n) || len(e.live()) != live {
			t.Fatalf("%s: second pass: %+v %+v", l, res, n)
		}
	}
}

func TestRepairRetriesThrottledCalls(t *testing.T) {
	e := newRepairEnv(t, noon, campaign.Active, pending(noon.Add(30*time.Minute)))
	var n atomic.Int64
	e.sched.Fault = func(op, name string) (error, bool) {
		if n.Add(1)%3 != 0 {
			return fmt.Errorf("%s: %w", op, timer.ErrThrottled), false
		}
		return nil, false
	}
	caller, err := paced.New(paced.Config{Concurrency: 1, Seed: 1}, e.clock)
	if err != nil {
		t.Fatal(err)
	}
	e.ports.Caller = caller
	if res, _ := e.run(t); res.SchedulesCreated != 1 || res.Errors != 0 || len(e.live()) != 1 || e.sched.Stats().Throttled == 0 {
		t.Fatalf("%+v", res)
	}
}

func TestRepairStopsAtItsBudget(t *testing.T) {
	var ts []campaign.SendTask
	for i := range 10 {
		ts = append(ts, pending(noon.Add(time.Duration(i+1)*5*time.Minute)))
	}
	e := newRepairEnv(t, noon, campaign.Active, ts...)
	e.sched.Clock, e.sched.Latency = e.clock, 10*time.Second
	e.cfg.Budget = 30 * time.Second
	if res, _ := e.run(t); res.Completed || res.LeftOver == 0 || res.ItemsChecked >= 10 {
		t.Fatalf("%+v", res)
	}
}

// TestRepairCancelsARemovedSendersCampaigns: a pass cancels the campaign
// of an owner no longer in the sender group (senderRemoved), cancels its
// Pending tasks, even those due years ahead, and deletes their schedules;
// an overdue one is not dispatched. A sender still in the group keeps
// their campaign.
func TestRepairCancelsARemovedSendersCampaigns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		removed bool
		task    campaign.SendTask
		want    campaign.State
	}{
		{"removed, due in two years", true, pending(noon.Add(2 * 365 * 24 * time.Hour)), campaign.Cancelled},
		{"removed, due within the hour", true, pending(noon.Add(30 * time.Minute)), campaign.Cancelled},
		{"removed, overdue", true, pending(noon.Add(-2 * time.Hour)), campaign.Cancelled},
		{"still a sender, due in two years", false, pending(noon.Add(2 * 365 * 24 * time.Hour)), campaign.Pending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRepairEnv(t, noon, campaign.Active, tc.task)
			e.arm(t, 0)
			if tc.removed {
				e.owners.Remove("u1")
			}
			_, n := e.run(t)
			c, _ := e.st.Campaign(context.Background(), "c1")
			if got := e.task(t, 0).State; got != tc.want || campaign.SenderRemoved(c) != tc.removed || len(*e.disp) != 0 {
				t.Fatalf("task %s, campaign %s (%q), %d dispatched; want %s, senderRemoved %v, none dispatched", got, c.Status, c.CancelReason, len(*e.disp), tc.want, tc.removed)
			}
			if tc.removed && (n.SenderRemoved != 1 || len(e.live()) != 0) {
				t.Fatalf("counts %+v, %d schedules left; want one campaign cancelled, none left", n, len(e.live()))
			}
		})
	}
}
