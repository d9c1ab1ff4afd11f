package send_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// Monday 2026-06-01 09:30 in Berlin, inside the 09:00-17:00 window.
var inWindow = time.Date(2026, 6, 1, 7, 30, 0, 0, time.UTC)

var key = campaign.Key{CampaignID: "c1", TaskID: "c1-00000"}

type env struct {
	st     *memory.CampaignStore
	sender *memory.CampaignSender
	owners *memory.CampaignSenders
	clock  *clock.Fake
	w      *send.Worker
}

func setup(t *testing.T, state campaign.State, status campaign.Status, at time.Time) env {
	t.Helper()
	st := memory.NewCampaignStore()
	st.PutCampaign(campaign.Campaign{ID: "c1", OwnerID: "u1", Body: "Hello!", Status: status,
		Rules: plan.Rules{Windows: []plan.Window{{Start: 540, End: 1020}}, TimeZone: "Europe/Berlin", Start: plan.Date{Year: 2026, Month: 6, Day: 1}}})
	st.PutTasks(campaign.SendTask{CampaignID: "c1", ID: key.TaskID, Email: "a@example.com", Subject: "Hi", State: state,
		SendAt: inWindow, SchedulerRequestToken: "tok", LeaseUntil: at.Add(time.Hour)})
	clock := clock.NewFake(at)
	sender := memory.NewCampaignSender(clock)
	senders := memory.NewCampaignSenders("u1")
	w, err := send.New(st, st, sender, senders, clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	return env{st, sender, senders, clock, w}
}

func (e env) task(t *testing.T) campaign.SendTask {
	t.Helper()
	task, err := e.st.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

var fire = campaign.FireEvent{CampaignID: "c1", TaskID: key.TaskID}

func TestHandle(t *testing.T) {
	cases := []struct {
		name      string
		state     campaign.State
		status    campaign.Status
		at        time.Time
		fault     error
		want      send.Outcome
		wantErr   bool
		wantState campaign.State
		wantSent  int
	}{
		{"pending in window is sent", campaign.Pending, campaign.Active, inWindow, nil, send.Sent, false, campaign.Finished, 1},
		{"finished is skipped", campaign.Finished, campaign.Active, inWindow, nil, send.Skipped, false, campaign.Finished, 0},
		{"cancelled is skipped", campaign.Cancelled, campaign.Active, inWindow, nil, send.Skipped, false, campaign.Cancelled, 0},
		{"failed is skipped", campaign.Failed, campaign.Active, inWindow, nil, send.Skipped, false, campaign.Failed, 0},
		{"running is left to its attempt", campaign.Running, campaign.Active, inWindow, nil, send.Skipped, false, campaign.Running, 0},
		{"late fire after the window", campaign.Pending, campaign.Active, inWindow.Add(8 * time.Hour), nil, send.OutsideWindow, false, campaign.Pending, 0},
		{"fire on a weekend", campaign.Pending, campaign.Active, inWindow.Add(5 * 24 * time.Hour), nil, send.OutsideWindow, false, campaign.Pending, 0},
		{"campaign cancelled", campaign.Pending, campaign.CampaignCancelled, inWindow, nil, send.Cancelled, false, campaign.Cancelled, 0},
		{"permanent send error", campaign.Pending, campaign.Active, inWindow, errors.New("MessageRejected: address blacklisted"), send.FailedSend, false, campaign.Failed, 0},
		{"retryable send error", campaign.Pending, campaign.Active, inWindow, fmt.Errorf("Throttling: %w", campaign.ErrRetryable), send.Released, true, campaign.Pending, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t, c.state, c.status, c.at)
			if c.fault != nil {
				e.sender.Fault = func(campaign.Message) error { return c.fault }
			}
			got, err := e.w.Handle(context.Background(), fire)
			if got != c.want || (err != nil) != c.wantErr {
				t.Fatalf("Handle = %s, %v; want %s (error %v)", got, err, c.want, c.wantErr)
			}
			task := e.task(t)
			if task.State != c.wantState || len(e.sender.Outbox) != c.wantSent {
				t.Fatalf("task %s, %d sent; want %s, %d", task.State, len(e.sender.Outbox), c.wantState, c.wantSent)
			}
			switch task.State {
			case campaign.Finished:
				if c.state == campaign.Pending && (!task.SentAt.Equal(c.at) || task.MessageID == "" || task.Attempt != 1) {
					t.Fatalf("finished task %+v", task)
				}
			case campaign.Failed:
				if c.state == campaign.Pending && task.Error != c.fault.Error() {
					t.Fatalf("failed task error %q", task.Error)
				}
			case campaign.Cancelled:
				if c.state == campaign.Pending && task.Reason == "" {
					t.Fatal("cancelled without a reason")
				}
			}
		})
	}
}

// An early fire (EventBridge Scheduler fires within the minute) sends
// nothing and fails, so Lambda's retry a minute later sends it once, at
// or after its planned time: never before it, never lost.
func TestEarlyFireIsRetriedThenSendsOnce(t *testing.T) {
	for _, early := range []time.Duration{59 * time.Second, time.Second} {
		t.Run(fmt.Sprint(early, " early"), func(t *testing.T) {
			e := setup(t, campaign.Pending, campaign.Active, inWindow.Add(-early))
			got, err := e.w.Handle(context.Background(), fire)
			if !errors.Is(err, send.ErrTooEarly) || len(e.sender.Outbox) != 0 || e.task(t).State != campaign.Pending {
				t.Fatalf("early fire: %s, %v, %d sent, task %s; want ErrTooEarly, nothing sent, Pending", got, err, len(e.sender.Outbox), e.task(t).State)
			}
			e.clock.Set(inWindow.Add(-early).Add(time.Minute)) // Lambda's first retry
			if got, err := e.w.Handle(context.Background(), fire); got != send.Sent || err != nil {
				t.Fatalf("retry: %s, %v; want sent", got, err)
			}
			if task := e.task(t); len(e.sender.Outbox) != 1 || task.SentAt.Before(task.SendAt) {
				t.Fatalf("%d sent at %s for %s; want one, at or after its time", len(e.sender.Outbox), task.SentAt, task.SendAt)
			}
		})
	}
}

// A fire long before the send time (a mis-timed or replayed delivery:
// EventBridge Scheduler documents fires only within the minute after
// the time, never before it,
// https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html)
// sends nothing and leaves the task Pending for its own time; one at
// the very instant sends.
func TestFireBeforeTheSendTimeNeverSends(t *testing.T) {
	for _, early := range []time.Duration{3 * time.Hour, 24 * time.Hour, time.Nanosecond} {
		e := setup(t, campaign.Pending, campaign.Active, inWindow.Add(-early))
		got, err := e.w.Handle(context.Background(), fire)
		if !errors.Is(err, send.ErrTooEarly) || len(e.sender.Outbox) != 0 || e.task(t).State != campaign.Pending || e.task(t).Attempt != 0 {
			t.Fatalf("%s early: %s, %v, %d sent, task %+v; want ErrTooEarly, nothing sent, Pending and unclaimed", early, got, err, len(e.sender.Outbox), e.task(t))
		}
	}
	e := setup(t, campaign.Pending, campaign.Active, inWindow)
	if got, err := e.w.Handle(context.Background(), fire); got != send.Sent || err != nil {
		t.Fatalf("at the send time: %s, %v; want sent", got, err)
	}
}

func TestDuplicateFireSendsOnce(t *testing.T) {
	e := setup(t, campaign.Pending, campaign.Active, inWindow)
	for i, want := range []send.Outcome{send.Sent, send.Skipped, send.Skipped} {
		if got, err := e.w.Handle(context.Background(), fire); got != want || err != nil {
			t.Fatalf("fire %d: %s %v, want %s", i, got, err, want)
		}
	}
	if len(e.sender.Outbox) != 1 || e.sender.Outbox[0].IdempotencyKey != "send-c1-00000" || e.sender.Outbox[0].Body != "Hello!" || e.sender.Outbox[0].To != "a@example.com" {
		t.Fatalf("outbox %+v", e.sender.Outbox)
	}
}

func TestMissingTaskIsSkipped(t *testing.T) {
	e := setup(t, campaign.Pending, campaign.Active, inWindow)
	if got, err := e.w.Handle(context.Background(), campaign.FireEvent{CampaignID: "c1", TaskID: "gone"}); got != send.Skipped || err != nil {
		t.Fatalf("%s %v", got, err)
	}
}

// TestRecoveredTaskIsNotSentTwice: a task whose send happened but whose
// Finished write was lost, re-queued and fired again, is finished with
// the first receipt and not sent again.
func TestRecoveredTaskIsNotSentTwice(t *testing.T) {
	e := setup(t, campaign.Pending, campaign.Active, inWindow)
	first, _ := e.sender.Send(context.Background(), campaign.Message{IdempotencyKey: "send-c1-00000", To: "a@example.com"})
	e.clock.Advance(time.Minute)
	if got, err := e.w.Handle(context.Background(), fire); got != send.Sent || err != nil {
		t.Fatalf("%s %v", got, err)
	}
	if task := e.task(t); len(e.sender.Outbox) != 1 || !task.SentAt.Equal(first.SentAt) || task.MessageID != first.MessageID {
		t.Fatalf("sent %d times; task %+v", len(e.sender.Outbox), task)
	}
}

// racingStore answers Get with a Pending copy while the stored task has
// already been claimed by another fire: the claim's condition decides.
type racingStore struct{ *memory.CampaignStore }

func (r racingStore) Get(ctx context.Context, k campaign.Key) (campaign.SendTask, error) {
	t, err := r.CampaignStore.Get(ctx, k)
	t.State = campaign.Pending
	return t, err
}

func TestClaimIsConditional(t *testing.T) {
	e := setup(t, campaign.Running, campaign.Active, inWindow)
	w, _ := send.New(racingStore{e.st}, e.st, e.sender, e.owners, e.clock, time.Minute)
	if got, err := w.Handle(context.Background(), fire); got != send.Skipped || err != nil || len(e.sender.Outbox) != 0 {
		t.Fatalf("%s %v, %d sent", got, err, len(e.sender.Outbox))
	}
}

// lostWrite fails every Replace: a crash after the send.
type lostWrite struct{ *memory.CampaignStore }

func (lostWrite) Replace(context.Context, campaign.SendTask, campaign.SendTask) error {
	return errors.New("connection reset")
}

func TestLostFinishIsAnErrorLeftToTheReconciler(t *testing.T) {
	e := setup(t, campaign.Pending, campaign.Active, inWindow)
	w, _ := send.New(lostWrite{e.st}, e.st, e.sender, e.owners, e.clock, time.Minute)
	if _, err := w.Handle(context.Background(), fire); err == nil {
		t.Fatal("lost write not reported")
	}
	if task := e.task(t); task.State != campaign.Running || !task.LeaseUntil.Equal(inWindow.Add(time.Minute)) || len(e.sender.Outbox) != 1 {
		t.Fatalf("task %+v, %d sent", task, len(e.sender.Outbox))
	}
}

func TestNewNeedsPorts(t *testing.T) {
	if _, err := send.New(nil, nil, nil, nil, nil, 0); err == nil {
		t.Fatal("nil ports accepted")
	}
}

// TestFireTakesOverAStaleClaim: the core takes over a Running task whose
// claim lapsed without a recorded send (its attempt died), and the send
// goes out once, under the same idempotency key; a live claim is left to
// its attempt.
func TestFireTakesOverAStaleClaim(t *testing.T) {
	for _, c := range []struct {
		name    string
		after   time.Duration
		want    send.Outcome
		state   campaign.State
		attempt int
	}{
		{"within the lease", 4 * time.Minute, send.Skipped, campaign.Running, 1},
		{"after the lease", send.DefaultLease, send.Sent, campaign.Finished, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t, campaign.Pending, campaign.Active, inWindow)
			if _, err := e.st.Claim(context.Background(), key, inWindow, inWindow, send.DefaultLease); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(c.after)
			got, err := e.w.Handle(context.Background(), fire)
			task := e.task(t)
			if got != c.want || err != nil || task.State != c.state || task.Attempt != c.attempt {
				t.Fatalf("Handle = %s, %v; task %s attempt %d; want %s, %s attempt %d", got, err, task.State, task.Attempt, c.want, c.state, c.attempt)
			}
			if c.want == send.Sent && (len(e.sender.Outbox) != 1 || e.sender.Outbox[0].IdempotencyKey != "send-c1-00000" || task.SentAt.IsZero()) {
				t.Fatalf("outbox %+v, task %+v", e.sender.Outbox, task)
			}
		})
	}
}

// TestFireOfEveryForm: the timers' payload for the task's send time and
// the older event both send it once; a payload armed for another send
// time (left over from before a retime) sends nothing.
func TestFireOfEveryForm(t *testing.T) {
	payload := campaign.TaskSchema.EncodePayload(contract.Payload{Key: campaign.ItemKey(key), Due: inWindow})
	stale := campaign.TaskSchema.EncodePayload(contract.Payload{Key: campaign.ItemKey(key), Due: inWindow.Add(-time.Hour)})
	for _, tc := range []struct {
		name, in  string
		want      send.Outcome
		wantState campaign.State
	}{
		{"core timer payload", payload, send.Sent, campaign.Finished},
		{"older fire event", `{"campaignId":"c1","taskId":"c1-00000"}`, send.Sent, campaign.Finished},
		{"payload of another send time", stale, send.Skipped, campaign.Pending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, campaign.Pending, campaign.Active, inWindow)
			ev, err := campaign.DecodeFire([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.w.Handle(context.Background(), ev)
			if got != tc.want || err != nil || e.task(t).State != tc.wantState {
				t.Fatalf("Handle = %s, %v, task %s; want %s, task %s", got, err, e.task(t).State, tc.want, tc.wantState)
			}
		})
	}
}

// TestRemovedSenderSendsNothing: a planned send of an owner taken out of
// the sender group (or whose check fails) does not go out. A removal
// cancels the campaign with the senderRemoved reason and the task with
// it; a check that cannot answer sends nothing and returns an error, so
// the fire is retried.
func TestRemovedSenderSendsNothing(t *testing.T) {
	for _, tc := range []struct {
		name       string
		state      campaign.State
		fault      error
		want       send.Outcome
		wantErr    bool
		wantState  campaign.State
		wantStatus campaign.Status
	}{
		{"pending task of a removed sender", campaign.Pending, nil, send.Cancelled, false, campaign.Cancelled, campaign.CampaignCancelled},
		{"stale running task of a removed sender", campaign.Running, nil, send.Skipped, false, campaign.Running, campaign.CampaignCancelled},
		{"check fails", campaign.Pending, errors.New("TooManyRequestsException"), "", true, campaign.Pending, campaign.Active},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, tc.state, campaign.Active, inWindow)
			if tc.state == campaign.Running {
				e.clock.Set(inWindow.Add(2 * time.Hour)) // its lease passed: a take-over would send
			}
			e.owners.Remove("u1")
			if tc.fault != nil {
				e.owners.Add("u1")
				e.owners.Fault = func(string) error { return tc.fault }
			}
			got, err := e.w.Handle(context.Background(), fire)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("Handle = %s, %v; want %s (error %v)", got, err, tc.want, tc.wantErr)
			}
			if len(e.sender.Outbox) != 0 {
				t.Fatalf("%d sent; want none", len(e.sender.Outbox))
			}
			c, _ := e.st.Campaign(context.Background(), "c1")
			if task := e.task(t); task.State != tc.wantState || c.Status != tc.wantStatus {
				t.Fatalf("task %s, campaign %s; want %s, %s", task.State, c.Status, tc.wantState, tc.wantStatus)
			}
			if tc.wantStatus == campaign.CampaignCancelled && !campaign.SenderRemoved(c) {
				t.Fatalf("cancel reason %q; want senderRemoved", c.CancelReason)
			}
		})
	}
}
