package reconciler_test

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/memory"
	"github.com/unschedule/unschedule/internal/campaign/plan"
	"github.com/unschedule/unschedule/internal/campaign/reconciler"
	"github.com/unschedule/unschedule/internal/clock"
)

// Monday 2026-06-01 10:00 in Berlin: inside the 09:00-17:00 window.
var (
	noon   = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	target = campaign.Target{GroupName: "g", FunctionArn: "f", RoleArn: "r", DeadLetterArn: "d"}
)

type dispatches []campaign.FireEvent

func (d *dispatches) Dispatch(_ context.Context, e campaign.FireEvent) error {
	*d = append(*d, e)
	return nil
}

type env struct {
	st     *memory.CampaignStore
	sched  *memory.CampaignScheduler
	sender *memory.CampaignSender
	clock  *clock.Fake
	disp   *dispatches
	r      *reconciler.Reconciler
}

func setup(t *testing.T, at time.Time, status campaign.Status, tasks ...campaign.SendTask) env {
	t.Helper()
	st := memory.NewCampaignStore()
	st.PutCampaign(campaign.Campaign{ID: "c1", Status: status,
		Rules: plan.Rules{Windows: []plan.Window{{Start: 540, End: 1020}}, TimeZone: "Europe/Berlin", Start: plan.Date{Year: 2026, Month: 6, Day: 1}}})
	for i := range tasks {
		tasks[i].CampaignID, tasks[i].ID, tasks[i].Index = "c1", campaign.TaskID("c1", i), i
		tasks[i].SchedulerRequestToken = fmt.Sprintf("tok-%d", i)
		tasks[i].TimeZone, tasks[i].Local = "Europe/Berlin", tasks[i].SendAt.In(mustLoc(t)).Format(plan.LocalLayout)
	}
	st.PutTasks(tasks...)
	clock := clock.NewFake(at)
	e := env{st: st, sched: memory.NewCampaignScheduler(nil), sender: memory.NewCampaignSender(clock), clock: clock, disp: &dispatches{}}
	var err error
	e.r, err = reconciler.New(reconciler.Config{Target: target, Seed: 1}, st, st, e.sched, e.sender, e.disp, clock)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustLoc(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func (e env) task(t *testing.T, i int) campaign.SendTask {
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

func idle(r reconciler.Result) bool { return reflect.DeepEqual(r, reconciler.Result{Checked: 1}) }

func TestRecreatesMissingSchedulesWithTheSameToken(t *testing.T) {
	e := setup(t, noon, campaign.Active, pending(noon.Add(30*time.Minute)), pending(noon.Add(50*time.Minute)), pending(noon.Add(3*time.Hour)))
	if err := e.sched.Create(context.Background(), campaign.ScheduleFor(e.task(t, 1), target)); err != nil {
		t.Fatal(err)
	}
	res, err := e.r.Run(context.Background(), noon.Add(time.Hour))
	if err != nil || res.Recreated != 1 || res.Checked != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	live := e.sched.Schedules()
	if len(live) != 2 || live["camp-c1-00000"].ClientToken != "tok-0" || live["camp-c1-00000"] != campaign.ScheduleFor(e.task(t, 0), target) {
		t.Fatalf("schedules %+v", live)
	}
	if st := e.sched.Stats(); st.Creates != 2 || st.Calls != 4 {
		t.Fatalf("%+v: want 2 creates (the test's and the recreated one) and 4 calls (2 checks, 1 create, the test's; the task due in 3 h is not checked yet)", st)
	}
	// Two hours later the third is near: it is checked and recreated.
	e.clock.Advance(2 * time.Hour)
	if res, err := e.r.Run(context.Background(), e.clock.Now().Add(time.Hour)); err != nil || res.Recreated != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if live := e.sched.Schedules(); live["camp-c1-00002"].ClientToken != "tok-2" {
		t.Fatalf("schedules %+v", live)
	}
}

func TestOverduePending(t *testing.T) {
	cases := []struct {
		name    string
		now     time.Time
		attempt int
		want    func(reconciler.Result) bool
		state   campaign.State
		sent    int
	}{
		{"in window: dispatched", noon, 0, func(r reconciler.Result) bool { return r.Dispatched == 1 }, campaign.Pending, 1},
		{"outside window: moved to the next window", noon.Add(8 * time.Hour), 0, func(r reconciler.Result) bool { return r.Retimed == 1 }, campaign.Pending, 0},
		{"within grace: left alone", noon.Add(-50 * time.Minute), 0, idle, campaign.Pending, 0},
		{"attempts used up: failed", noon, 3, func(r reconciler.Result) bool { return r.Failed == 1 }, campaign.Failed, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := pending(noon.Add(-time.Hour))
			task.Attempt = c.attempt
			e := setup(t, c.now, campaign.Active, task)
			res, err := e.r.Run(context.Background(), c.now.Add(time.Hour))
			if err != nil || !c.want(res) {
				t.Fatalf("%+v %v", res, err)
			}
			if got := e.task(t, 0); got.State != c.state || len(*e.disp) != c.sent || (c.state == campaign.Failed && got.Error == "") {
				t.Fatalf("task %+v, %d dispatched", got, len(*e.disp))
			}
		})
	}
}

func TestRecoversStaleRunning(t *testing.T) {
	sentAt := noon.Add(-30 * time.Minute)
	cases := []struct {
		name      string
		task      campaign.SendTask
		sent      bool
		wantState campaign.State
		want      func(reconciler.Result) bool
	}{
		{"sent: finished with its receipt", running(noon.Add(-time.Hour), noon.Add(-time.Minute), 1), true, campaign.Finished, func(r reconciler.Result) bool { return r.Finished == 1 }},
		{"not sent: re-queued and dispatched", running(noon.Add(-time.Hour), noon.Add(-time.Minute), 1), false, campaign.Pending, func(r reconciler.Result) bool { return r.Requeued == 1 && r.Dispatched == 1 }},
		{"not sent, attempts used up: failed", running(noon.Add(-time.Hour), noon.Add(-time.Minute), 3), false, campaign.Failed, func(r reconciler.Result) bool { return r.Failed == 1 }},
		{"lease not passed: left alone", running(noon.Add(-time.Hour), noon.Add(time.Minute), 1), false, campaign.Running, idle},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t, noon, campaign.Active, c.task)
			if c.sent {
				e.clock.Set(sentAt)
				e.sender = memory.NewCampaignSender(clock.NewFake(sentAt))
				_, _ = e.sender.Send(context.Background(), campaign.Message{IdempotencyKey: e.task(t, 0).IdempotencyKey()})
				e.r, _ = reconciler.New(reconciler.Config{Target: target, Seed: 1}, e.st, e.st, e.sched, e.sender, e.disp, e.clock)
			}
			res, err := e.r.Run(context.Background(), noon.Add(time.Hour))
			got := e.task(t, 0)
			if err != nil || !c.want(res) || got.State != c.wantState {
				t.Fatalf("%+v %v, task %+v", res, err, got)
			}
			if c.sent && (!got.SentAt.Equal(sentAt) || got.MessageID != "msg-1") {
				t.Fatalf("finished without the receipt: %+v", got)
			}
			if c.sent && len(e.sender.Outbox) != 1 {
				t.Fatal("sent again")
			}
		})
	}
}

func TestCompletesACancel(t *testing.T) {
	e := setup(t, noon, campaign.CampaignCancelled, pending(noon.Add(time.Hour)), pending(noon.Add(2*time.Hour)))
	_ = e.sched.Create(context.Background(), campaign.ScheduleFor(e.task(t, 0), target))
	res, err := e.r.Run(context.Background(), noon.Add(time.Hour))
	if err != nil || res.Cancelled != 2 || len(e.sched.Schedules()) != 0 {
		t.Fatalf("%+v %v, %d schedules", res, err, len(e.sched.Schedules()))
	}
	if got := e.task(t, 1); got.State != campaign.Cancelled || got.Reason == "" {
		t.Fatalf("task %+v", got)
	}
}

func TestStaleRunningOfACancelledCampaignIsCancelled(t *testing.T) {
	e := setup(t, noon, campaign.CampaignCancelled, running(noon.Add(-time.Hour), noon.Add(-time.Minute), 1))
	res, err := e.r.Run(context.Background(), noon.Add(time.Hour))
	if got := e.task(t, 0); err != nil || res.Requeued != 1 || res.Cancelled != 1 || got.State != campaign.Cancelled || len(*e.disp) != 0 {
		t.Fatalf("%+v %v, task %+v", res, err, got)
	}
}

func TestThrottledCallsAreRetried(t *testing.T) {
	e := setup(t, noon, campaign.Active, pending(noon.Add(30*time.Minute)))
	var n atomic.Int64
	e.sched.Fault = func(op, name string) (error, bool) {
		if n.Add(1)%3 != 0 {
			return fmt.Errorf("%s: %w", op, campaign.ErrThrottled), false
		}
		return nil, false
	}
	res, err := e.r.Run(context.Background(), noon.Add(time.Hour))
	if err != nil || res.Recreated != 1 || len(e.sched.Schedules()) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestStopsAtDeadline(t *testing.T) {
	var ts []campaign.SendTask
	for i := range 10 {
		ts = append(ts, pending(noon.Add(time.Duration(i+1)*5*time.Minute)))
	}
	e := setup(t, noon, campaign.Active, ts...)
	e.sched.Clock, e.sched.Latency = e.clock, 10*time.Second
	res, err := e.r.Run(context.Background(), noon.Add(reconciler.DefaultMargin+30*time.Second))
	if err != nil || !res.LeftOver || res.Checked >= 10 {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestRetimesAnOverdueTaskOutsideTheWindow: a task whose fire was lost,
// found after the day's window closed, gets a schedule at the next
// window's first minute, with a new ClientToken; a stuck old schedule of
// the same name is replaced.
func TestRetimesAnOverdueTaskOutsideTheWindow(t *testing.T) {
	evening := time.Date(2026, 6, 1, 18, 0, 0, 0, time.UTC) // 20:00 Berlin
	e := setup(t, evening, campaign.Active, pending(noon))
	stuck := campaign.ScheduleFor(e.task(t, 0), target)
	_ = e.sched.Create(context.Background(), stuck)
	res, err := e.r.Run(context.Background(), evening.Add(time.Hour))
	if err != nil || res.Retimed != 1 || len(*e.disp) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	task := e.task(t, 0)
	if task.Local != "2026-06-02T09:00:00" || task.Retimed != 1 || task.State != campaign.Pending {
		t.Fatalf("task %+v", task)
	}
	got := e.sched.Schedules()["camp-c1-00000"]
	if got.Expression != "at(2026-06-02T09:00:00)" || got.ClientToken != "tok-0-r1" {
		t.Fatalf("schedule %+v", got)
	}
	// Moved too often: failed.
	task.Retimed, task.SendAt = reconciler.DefaultMaxRetimes, noon
	e.st.PutTasks(task)
	if res, err := e.r.Run(context.Background(), evening.Add(time.Hour)); err != nil || res.Failed != 1 {
		t.Fatalf("%+v %v", res, err)
	}
}

// A Draft campaign (created, not provisioned) owes no schedule: its
// Pending tasks are in the open index from creation on, and the
// reconciler must neither schedule nor send them.
func TestDraftCampaignIsLeftAlone(t *testing.T) {
	e := setup(t, noon, campaign.Draft, pending(noon.Add(30*time.Minute)), pending(noon.Add(-2*time.Hour)))
	res, err := e.r.Run(context.Background(), noon.Add(time.Hour))
	if err != nil || !reflect.DeepEqual(res, reconciler.Result{Checked: 2}) {
		t.Fatalf("%+v %v: want two tasks checked and nothing done", res, err)
	}
	if n := len(e.sched.Schedules()); n != 0 || len(*e.disp) != 0 {
		t.Fatalf("%d schedules, %d dispatches: want none", n, len(*e.disp))
	}
}
