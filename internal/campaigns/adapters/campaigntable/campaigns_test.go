package campaigntable

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntest"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo/dynamotest"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

var t0 = campaigntest.CampaignT0

// newCampaignStore makes a fresh table and a store on it.
func newCampaignStore(t *testing.T) *CampaignStore {
	t.Helper()
	client := testenv.NewDynamoClient(endpoint)
	name := fmt.Sprintf("campaigns-%d", time.Now().UnixNano())
	dynamotest.CreateTable(t, client, CampaignTableInput(name))
	st, err := NewCampaignStore(client, name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// seed creates a campaign of n recipients through the store.
func seed(t *testing.T, st *CampaignStore, id string, n int) (campaign.Campaign, []campaign.SendTask) {
	t.Helper()
	c, tasks := campaigntest.CampaignFixture(t, id, n, t0)
	if err := st.Create(context.Background(), c, tasks); err != nil {
		t.Fatal(err)
	}
	return c, tasks
}

// seedActive seeds a campaign of n recipients and makes it Active.
func seedActive(t *testing.T, st *CampaignStore, id string, n int) []campaign.SendTask {
	t.Helper()
	_, tasks := seed(t, st, id, n)
	if err := st.SetStatus(context.Background(), id, []campaign.Status{campaign.Draft}, campaign.Active, "", t0); err != nil {
		t.Fatal(err)
	}
	return tasks
}

// TestCampaignStoreContract runs the campaign store contract that the
// memory and bolt stores share with this one.
func TestCampaignStoreContract(t *testing.T) {
	campaigntest.CampaignStoreContract(t, func(t *testing.T) campaigntest.CampaignBackend {
		return campaigntest.CampaignBackend{Store: newCampaignStore(t), ErrExists: ErrCampaignExists}
	})
}

func TestCampaignCheckpoints(t *testing.T) {
	campaigntest.CheckpointContract(t, newCampaignStore(t))
}

// TestCheckpointIsNoTask: the checkpoint lives beside the tasks in the
// campaign's partition and never reads as one.
func TestCheckpointIsNoTask(t *testing.T) {
	ctx := context.Background()
	st := newCampaignStore(t)
	seed(t, st, "c1", 2)
	if err := st.Save(ctx, provision.Checkpoint{CampaignID: "c1", Next: 2, Created: 2, Runs: 1, Done: true, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, campaign.Key{CampaignID: "c1", TaskID: "CHECKPOINT"}); !errors.Is(err, campaign.ErrNotFound) {
		t.Fatal("the checkpoint reads as a task")
	}
	if l, err := st.List(ctx, "c1", 0, 10); err != nil || len(l) != 2 {
		t.Fatalf("List = %d tasks, %v; want the 2 tasks", len(l), err)
	}
	if n, err := st.Counts(ctx, "c1"); err != nil || len(n) != 1 || n[campaign.Pending] != 2 {
		t.Fatalf("Counts = %v, %v", n, err)
	}
}

// TestForgedCursorIsErrBadCursor: a cursor of other attributes or of
// another partition is ErrBadCursor, never a start key that DynamoDB
// refuses or that reads another partition.
func TestForgedCursorIsErrBadCursor(t *testing.T) {
	ctx := context.Background()
	st := newCampaignStore(t)
	seed(t, st, "c1", 3)
	cur := func(m map[string]string) string { return dynamo.EncodeKeyCursor(dynamo.ToAttrs(m)) }
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
}

// TestRepeatedSettleChangesNothing: the settle of a repeated delivery
// (the same task index again) neither completes the campaign early nor
// twice.
func TestRepeatedSettleChangesNothing(t *testing.T) {
	ctx := context.Background()
	st := newCampaignStore(t)
	tasks := seedActive(t, st, "c1", 2)
	for i, task := range tasks {
		next, _ := campaign.Fail(task, "bounced", t0)
		if err := st.Replace(ctx, task, next); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := st.settle(ctx, "c1", i, t0); err != nil {
				t.Fatal(err)
			}
		}
		want := campaign.Active
		if i == len(tasks)-1 {
			want = campaign.Completed
		}
		if c, _ := st.Campaign(ctx, "c1"); c.Status != want {
			t.Fatalf("after task %d and its settle twice: %s, want %s", i, c.Status, want)
		}
	}
}

// TestHandlersOnDynalite runs the real provisioning and send worker over
// the DynamoDB store (the scheduler and the outbox in memory).
func TestHandlersOnDynalite(t *testing.T) {
	ctx := context.Background()
	st := newCampaignStore(t)
	_, tasks := seed(t, st, "c2", 12)
	clock := clock.NewFake(t0)
	sched := inmem.NewScheduler()
	p, err := provision.New(provision.Config{PageSize: 5, Seed: 1}, st, st, memory.NewCampaignSenders("owner-1"), sched, st, clock)
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
	w, err := send.New(st, st, outbox, memory.NewCampaignSenders("owner-1"), clock, 0)
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
