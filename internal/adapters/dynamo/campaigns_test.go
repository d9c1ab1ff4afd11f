package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/plan"
	"github.com/unschedule/unschedule/internal/campaign/provision"
	"github.com/unschedule/unschedule/internal/campaign/send"
	"github.com/unschedule/unschedule/internal/clock"
	"github.com/unschedule/unschedule/internal/memory"
	"github.com/unschedule/unschedule/internal/testenv"
)

var t0 = time.Date(2026, 6, 1, 7, 0, 0, 0, time.UTC) // a Monday, 09:00 in Berlin

// newCampaignStore makes a fresh table and a store on it.
func newCampaignStore(t *testing.T) *CampaignStore {
	t.Helper()
	client := testenv.NewDynamoClient(endpoint)
	name := fmt.Sprintf("campaigns-%d", time.Now().UnixNano())
	testenv.CreateTable(t, client, CampaignTableInput(name))
	st, err := NewCampaignStore(client, name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func rules() plan.Rules {
	return plan.Rules{SendsPerDay: 20, Windows: []plan.Window{{Start: 9 * 60, End: 17 * 60}}, TimeZone: "Europe/Berlin",
		Start: plan.Date{Year: 2026, Month: time.June, Day: 1}}
}

// seed creates a campaign of n recipients through the store.
func seed(t *testing.T, st *CampaignStore, id string, n int) (campaign.Campaign, []campaign.SendTask) {
	t.Helper()
	var rs []campaign.Recipient
	for i := range n {
		rs = append(rs, campaign.Recipient{Email: fmt.Sprintf("r%d@example.com", i)})
	}
	c, tasks, err := campaign.Build(id, "owner-1", campaign.Request{Subject: "Hello", Body: "Hi there", Rules: rules(), Recipients: rs}, t0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(context.Background(), c, tasks); err != nil {
		t.Fatal(err)
	}
	return c, tasks
}

func TestStoreRoundTripsAndConditions(t *testing.T) {
	ctx := context.Background()
	st := newCampaignStore(t)
	c, tasks := seed(t, st, "c1", 30)

	got, err := st.Campaign(ctx, "c1")
	if err != nil || got.Total != 30 || got.Status != campaign.Draft || got.OwnerID != "owner-1" || got.Rules.TimeZone != "Europe/Berlin" {
		t.Fatalf("Campaign = %+v, %v", got, err)
	}
	if err := st.Create(ctx, c, tasks); !errors.Is(err, ErrCampaignExists) {
		t.Fatalf("second Create = %v, want ErrCampaignExists", err)
	}
	if ok, err := st.Complete(ctx, got); !ok || err != nil {
		t.Fatalf("Complete = %v, %v", ok, err)
	}
	if ok, _ := st.Complete(ctx, campaign.Campaign{ID: "c1", Total: 31}); ok {
		t.Fatal("Complete is true for a campaign missing its last task")
	}

	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"get round-trips every field", func(t *testing.T) {
			g, err := st.Get(ctx, tasks[3].Key())
			if err != nil || g != tasks[3] {
				t.Fatalf("Get = %+v, %v\nwant %+v", g, err, tasks[3])
			}
		}},
		{"get of a missing task is ErrNotFound", func(t *testing.T) {
			if _, err := st.Get(ctx, campaign.Key{CampaignID: "c1", TaskID: "nope"}); !errors.Is(err, campaign.ErrNotFound) {
				t.Fatalf("err = %v", err)
			}
		}},
		{"list pages in index order", func(t *testing.T) {
			page, err := st.List(ctx, "c1", 10, 7)
			if err != nil || len(page) != 7 || page[0].Index != 10 || page[6].Index != 16 {
				t.Fatalf("List = %d tasks from %v, %v", len(page), page, err)
			}
			rest, err := st.List(ctx, "c1", 25, 100)
			if err != nil || len(rest) != 5 {
				t.Fatalf("List tail = %d, %v; want 5", len(rest), err)
			}
		}},
		{"claim is Pending only, once", func(t *testing.T) {
			k := tasks[0].Key()
			due := tasks[0].SendAt
			if _, err := st.Claim(ctx, k, due.Add(time.Minute), t0, time.Minute); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("Claim for another send time = %v, want ErrConditionFailed", err)
			}
			cl, err := st.Claim(ctx, k, due, t0, time.Minute)
			if err != nil || cl.State != campaign.Running || cl.Attempt != 1 || !cl.LeaseUntil.Equal(t0.Add(time.Minute)) {
				t.Fatalf("Claim = %+v, %v", cl, err)
			}
			if _, err := st.Claim(ctx, k, due, t0, time.Minute); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("second Claim = %v, want ErrConditionFailed", err)
			}
			if _, err := st.TakeOver(ctx, k, due, t0.Add(30*time.Second), time.Minute); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("TakeOver within the lease = %v, want ErrConditionFailed", err)
			}
			if _, err := st.Claim(ctx, campaign.Key{CampaignID: "c1", TaskID: "missing"}, due, t0, time.Minute); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("Claim of a missing task = %v, want ErrConditionFailed", err)
			}
			fin, _ := campaign.Finish(cl, t0, "m-1", t0)
			stale := tasks[0] // Pending, attempt 0: no longer what is stored
			if err := st.Replace(ctx, stale, fin); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("Replace from a stale task = %v, want ErrConditionFailed", err)
			}
			if err := st.Replace(ctx, cl, fin); err != nil {
				t.Fatal(err)
			}
			if g, _ := st.Get(ctx, k); g.State != campaign.Finished || g.MessageID != "m-1" {
				t.Fatalf("stored %+v", g)
			}
		}},
		{"the open index holds exactly the open tasks", func(t *testing.T) {
			seen := map[string]bool{}
			for cur, first := "", true; first || cur != ""; first = false {
				page, next, err := st.Open(ctx, cur, 7)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range page {
					seen[o.ID] = true
				}
				cur = next
			}
			if len(seen) != 29 || seen[tasks[0].ID] {
				t.Fatalf("open index: %d tasks (finished one there: %v), want 29", len(seen), seen[tasks[0].ID])
			}
		}},
		{"a damaged cursor is an error", func(t *testing.T) {
			if _, _, err := st.Open(ctx, "%%%", 5); !errors.Is(err, campaign.ErrBadCursor) {
				t.Fatal("no error")
			}
		}},
		{"a forged cursor is ErrBadCursor, not a DynamoDB error", func(t *testing.T) {
			cur := func(m map[string]string) string { return encodeCursor(mapItem(m)) }
			key := map[string]string{"pk": "C#c1", "sk": "META", "owner": "owner-1", "createdAt": t0.Format(time.RFC3339Nano)}
			if _, _, err := st.Owned(ctx, "owner-1", cur(key), 2); err != nil {
				t.Fatalf("a well-formed cursor: %v", err)
			}
			for name, c := range map[string]string{
				"other attributes":  cur(map[string]string{"pk": "C#c1"}),
				"another owner":     cur(map[string]string{"pk": "C#c1", "sk": "META", "owner": "owner-2", "createdAt": "x"}),
				"no sort attribute": cur(map[string]string{"pk": "C#c1", "sk": "META", "owner": "owner-1", "x": "y"}),
				"not an object":     "WzFd",
			} {
				if _, _, err := st.Owned(ctx, "owner-1", c, 2); !errors.Is(err, campaign.ErrBadCursor) {
					t.Errorf("Owned, %s: %v, want ErrBadCursor", name, err)
				}
			}
			if _, _, err := st.Open(ctx, cur(map[string]string{"pk": "C#c1", "sk": "T#x", "openShard": "other"}), 2); !errors.Is(err, campaign.ErrBadCursor) {
				t.Errorf("Open, another shard: %v, want ErrBadCursor", err)
			}
		}},
		{"counts by state", func(t *testing.T) {
			n, err := st.Counts(ctx, "c1")
			if err != nil || n[campaign.Pending] != 29 || n[campaign.Finished] != 1 {
				t.Fatalf("Counts = %v, %v", n, err)
			}
		}},
		{"set status only from the allowed ones", func(t *testing.T) {
			if err := st.SetStatus(ctx, "c1", []campaign.Status{campaign.Active}, campaign.CampaignCancelled, "x", t0); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("from Active while Draft = %v", err)
			}
			if err := st.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft, campaign.Provisioning}, campaign.CampaignCancelled, "stop", t0); err != nil {
				t.Fatal(err)
			}
			if g, _ := st.Campaign(ctx, "c1"); g.Status != campaign.CampaignCancelled || g.CancelReason != "stop" {
				t.Fatalf("campaign %+v", g)
			}
			if err := st.SetStatus(ctx, "missing", []campaign.Status{campaign.Draft}, campaign.Active, "", t0); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("missing campaign = %v", err)
			}
		}},
		{"checkpoint round trip", func(t *testing.T) {
			cp, err := st.Load(ctx, "c1")
			if err != nil || cp != (provision.Checkpoint{CampaignID: "c1"}) {
				t.Fatalf("Load before Save = %+v, %v", cp, err)
			}
			want := provision.Checkpoint{CampaignID: "c1", Next: 17, Created: 16, Errors: 1, Runs: 2, Done: true, UpdatedAt: t0}
			if err := st.Save(ctx, want); err != nil {
				t.Fatal(err)
			}
			if cp, err := st.Load(ctx, "c1"); err != nil || cp != want {
				t.Fatalf("Load = %+v, %v", cp, err)
			}
			if _, err := st.Get(ctx, campaign.Key{CampaignID: "c1", TaskID: "CHECKPOINT"}); !errors.Is(err, campaign.ErrNotFound) {
				t.Fatal("the checkpoint reads as a task")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

// TestHandlersOnDynalite runs the real provisioning and send worker over
// the DynamoDB store (the scheduler and the outbox in memory).
func TestHandlersOnDynalite(t *testing.T) {
	ctx := context.Background()
	st := newCampaignStore(t)
	_, tasks := seed(t, st, "c2", 12)
	clock := clock.NewFake(t0)
	sched := memory.NewScheduler()
	p, err := provision.New(provision.Config{PageSize: 5, Seed: 1}, st, st, sched, st, clock)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(ctx, "c2", t0.Add(15*time.Minute))
	if err != nil || !res.Done || res.Created != 12 {
		t.Fatalf("provision = %+v, %v", res, err)
	}
	if c, _ := st.Campaign(ctx, "c2"); c.Status != campaign.Active {
		t.Fatalf("campaign %s after provisioning, want Active", c.Status)
	}
	if n := len(sched.All()); n != 12 {
		t.Fatalf("%d schedules, want 12", n)
	}
	outbox := memory.NewCampaignSender(clock)
	w, err := send.New(st, st, outbox, clock, 0)
	if err != nil {
		t.Fatal(err)
	}
	tsk := tasks[0]
	clock.Set(tsk.SendAt)
	for i, want := range []send.Outcome{send.Sent, send.Skipped} { // a duplicate fire sends nothing
		out, err := w.Handle(ctx, campaign.FireEvent{CampaignID: "c2", TaskID: tsk.ID})
		if err != nil || out != want {
			t.Fatalf("fire %d = %s, %v; want %s", i, out, err, want)
		}
	}
	g, _ := st.Get(ctx, tsk.Key())
	if g.State != campaign.Finished || g.SentAt.IsZero() || outbox.Count(tsk.IdempotencyKey()) != 1 {
		t.Fatalf("task %+v, sent %d times", g, outbox.Count(tsk.IdempotencyKey()))
	}
}

func mapItem(m map[string]string) item {
	out := item{}
	for k, v := range m {
		out[k] = avS(v)
	}
	return out
}

// The write that ends a campaign's last open task completes the
// campaign, once, whatever the order, concurrency and repeats of the
// writes; a Provisioning campaign too (its move to Active is then
// refused); a Cancelled one stays Cancelled.
func TestCampaignCompletesWhenItsLastTaskEnds(t *testing.T) {
	ctx := context.Background()
	st := newCampaignStore(t)
	for i, from := range []campaign.Status{campaign.Active, campaign.Provisioning, campaign.CampaignCancelled} {
		id := fmt.Sprintf("done%d", i)
		_, tasks := seed(t, st, id, 12)
		if err := st.SetStatus(ctx, id, []campaign.Status{campaign.Draft}, from, "", t0); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for j, task := range tasks {
			wg.Go(func() {
				next, _ := campaign.Fail(task, "bounced", t0)
				if j%3 == 0 {
					next, _ = campaign.Cancel(task, "r", t0)
				}
				if err := st.Replace(ctx, task, next); err != nil {
					t.Error(err)
				}
				if j == 5 { // the settle of a repeated delivery changes nothing
					if err := st.settle(ctx, id, j, t0); err != nil {
						t.Error(err)
					}
				}
			})
			if j == len(tasks)-2 {
				wg.Wait()
				if c, _ := st.Campaign(ctx, id); c.Status != from {
					t.Fatalf("%s with one task open: %s", from, c.Status)
				}
			}
		}
		wg.Wait()
		want := campaign.Completed
		if from == campaign.CampaignCancelled {
			want = from
		}
		if c, err := st.Campaign(ctx, id); err != nil || c.Status != want {
			t.Fatalf("%s after every task ended: %s %v, want %s", from, c.Status, err, want)
		}
		err := st.SetStatus(ctx, id, []campaign.Status{campaign.Draft, campaign.Provisioning}, campaign.Active, "", t0)
		if !errors.Is(err, campaign.ErrConditionFailed) {
			t.Fatalf("%s → Active after completion: %v", from, err)
		}
	}
}

// TestTakeOverIsTheContracts: a Running, unsent task is taken over only
// once its claim is a lease old, once per lease, and counted as a claim;
// a sent one never is. The writes are the contract's (TaskSchema).
func TestTakeOverIsTheContracts(t *testing.T) {
	ctx := context.Background()
	st := newCampaignStore(t)
	_, tasks := seed(t, st, "c1", 2)
	k, due := tasks[0].Key(), tasks[0].SendAt
	claimAt := due.Add(10 * time.Second)
	if _, err := st.Claim(ctx, k, due, claimAt, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		at   time.Time
		due  time.Time
		ok   bool
	}{
		{"within the lease", claimAt.Add(59 * time.Second), due, false},
		{"for another send time", claimAt.Add(time.Minute), due.Add(time.Minute), false},
		{"after the lease", claimAt.Add(time.Minute), due, true},
		{"again at once", claimAt.Add(time.Minute), due, false},
	} {
		got, err := st.TakeOver(ctx, k, c.due, c.at, time.Minute)
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, campaign.ErrConditionFailed)) {
			t.Fatalf("%s: TakeOver = %v, want ok %v", c.name, err, c.ok)
		}
		if c.ok && (got.Attempt != 2 || !got.ClaimedAt.Equal(c.at) || got.State != campaign.Running || !got.LeaseUntil.Equal(c.at.Add(time.Minute))) {
			t.Fatalf("%s: taken over as %+v", c.name, got)
		}
	}
	cur, _ := st.Get(ctx, k)
	fin, _ := campaign.Finish(cur, due, "m-1", due)
	if err := st.Replace(ctx, cur, fin); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TakeOver(ctx, k, due, due.Add(time.Hour), time.Minute); !errors.Is(err, campaign.ErrConditionFailed) {
		t.Fatalf("TakeOver of a sent task = %v, want ErrConditionFailed", err)
	}
}
