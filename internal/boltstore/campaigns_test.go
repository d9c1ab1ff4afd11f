package boltstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/limits"
	"github.com/unschedule/unschedule/internal/campaign/plan"
	"github.com/unschedule/unschedule/internal/campaign/provision"
	"github.com/unschedule/unschedule/internal/domain/timer"
	"github.com/unschedule/unschedule/internal/testenv"
)

var ct0 = time.Date(2026, 6, 1, 7, 0, 0, 0, time.UTC) // a Monday, 09:00 in Berlin

// seedCampaign creates a campaign of n recipients through the store.
func seedCampaign(t *testing.T, st *CampaignStore, id string, n int, created time.Time) (campaign.Campaign, []campaign.SendTask) {
	t.Helper()
	var rs []campaign.Recipient
	for i := range n {
		rs = append(rs, campaign.Recipient{Email: fmt.Sprintf("r%d@example.com", i)})
	}
	rules := plan.Rules{SendsPerDay: 20, Windows: []plan.Window{{Start: 9 * 60, End: 17 * 60}}, TimeZone: "Europe/Berlin",
		Start: plan.Date{Year: 2026, Month: time.June, Day: 1}}
	c, tasks, err := campaign.Build(id, "owner-1", campaign.Request{Subject: "Hello", Body: "Hi there", Rules: rules, Recipients: rs}, created, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(context.Background(), c, tasks); err != nil {
		t.Fatal(err)
	}
	return c, tasks
}

// TestCampaignStoreRoundTripsAndConditions is dynamo.CampaignStore's
// TestStoreRoundTripsAndConditions on the bolt store: every conditional
// write fails where DynamoDB's does, with the same error.
func TestCampaignStoreRoundTripsAndConditions(t *testing.T) {
	ctx := context.Background()
	st := open(t, t.TempDir()).CampaignStore()
	c, tasks := seedCampaign(t, st, "c1", 30, ct0)

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
			if _, err := st.Campaign(ctx, "nope"); !errors.Is(err, campaign.ErrNotFound) {
				t.Fatalf("campaign err = %v", err)
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
			if _, err := st.List(ctx, "c1", -1, 5); err == nil {
				t.Fatal("List from -1 succeeded")
			}
			if _, err := st.List(ctx, "c1", 0, 0); err == nil {
				t.Fatal("List of 0 succeeded")
			}
		}},
		{"claim is Pending only, once", func(t *testing.T) {
			k := tasks[0].Key()
			cl, err := st.Claim(ctx, k, tasks[0].SendAt, ct0, time.Minute)
			if err != nil || cl.State != campaign.Running || cl.Attempt != 1 || !cl.LeaseUntil.Equal(ct0.Add(time.Minute)) {
				t.Fatalf("Claim = %+v, %v", cl, err)
			}
			if _, err := st.Claim(ctx, k, tasks[0].SendAt, ct0, time.Minute); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("second Claim = %v, want ErrConditionFailed", err)
			}
			if _, err := st.Claim(ctx, campaign.Key{CampaignID: "c1", TaskID: "missing"}, tasks[0].SendAt, ct0, time.Minute); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("Claim of a missing task = %v, want ErrConditionFailed", err)
			}
			fin, _ := campaign.Finish(cl, ct0, "m-1", ct0)
			stale := tasks[0] // Pending, attempt 0: no longer what is stored
			if err := st.Replace(ctx, stale, fin); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("Replace from a stale task = %v, want ErrConditionFailed", err)
			}
			missing := tasks[1]
			missing.ID = "c1-99999"
			if err := st.Replace(ctx, missing, missing); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("Replace of a missing task = %v, want ErrConditionFailed", err)
			}
			if err := st.Replace(ctx, cl, tasks[1]); err == nil || errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("Replace with another key = %v, want a plain error", err)
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
					if seen[o.ID] {
						t.Fatalf("%s on two pages", o.ID)
					}
					seen[o.ID] = true
				}
				cur = next
			}
			if len(seen) != 29 || seen[tasks[0].ID] {
				t.Fatalf("open index: %d tasks (finished one there: %v), want 29", len(seen), seen[tasks[0].ID])
			}
		}},
		{"a damaged or forged cursor is ErrBadCursor", func(t *testing.T) {
			for _, c := range []string{"%%%", base64.RawURLEncoding.EncodeToString([]byte("c1")), base64.RawURLEncoding.EncodeToString([]byte("a\x00b\x00c"))} {
				if _, _, err := st.Open(ctx, c, 5); !errors.Is(err, campaign.ErrBadCursor) {
					t.Errorf("Open(%q) = %v", c, err)
				}
			}
			for name, c := range map[string]string{
				"not base64":    "%%%",
				"another owner": base64.RawURLEncoding.EncodeToString([]byte("owner-2\x00" + keyTime(ct0) + "\x00c1")),
				"no time":       base64.RawURLEncoding.EncodeToString([]byte("owner-1\x00x\x00c1")),
				"no id":         base64.RawURLEncoding.EncodeToString([]byte("owner-1\x00" + keyTime(ct0))),
			} {
				if _, _, err := st.Owned(ctx, "owner-1", c, 2); !errors.Is(err, campaign.ErrBadCursor) {
					t.Errorf("Owned, %s: %v, want ErrBadCursor", name, err)
				}
			}
		}},
		{"counts by state", func(t *testing.T) {
			n, err := st.Counts(ctx, "c1")
			if err != nil || n[campaign.Pending] != 29 || n[campaign.Finished] != 1 {
				t.Fatalf("Counts = %v, %v", n, err)
			}
		}},
		{"set status only from the allowed ones", func(t *testing.T) {
			if err := st.SetStatus(ctx, "c1", []campaign.Status{campaign.Active}, campaign.CampaignCancelled, "x", ct0); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("from Active while Draft = %v", err)
			}
			if err := st.SetStatus(ctx, "c1", nil, campaign.CampaignCancelled, "x", ct0); err == nil {
				t.Fatal("from no status succeeded")
			}
			if err := st.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft, campaign.Provisioning}, campaign.CampaignCancelled, "stop", ct0); err != nil {
				t.Fatal(err)
			}
			if g, _ := st.Campaign(ctx, "c1"); g.Status != campaign.CampaignCancelled || g.CancelReason != "stop" {
				t.Fatalf("campaign %+v", g)
			}
			if err := st.SetStatus(ctx, "missing", []campaign.Status{campaign.Draft}, campaign.Active, "", ct0); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("missing campaign = %v", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

// TestOwnedPagesNewestFirst: the owner's campaigns only, newest first,
// as summaries, over pages.
func TestOwnedPagesNewestFirst(t *testing.T) {
	ctx := context.Background()
	st := open(t, t.TempDir()).CampaignStore()
	for i, id := range []string{"c1", "c2", "c3"} {
		seedCampaign(t, st, id, 1, ct0.Add(time.Duration(i)*time.Minute))
	}
	other := campaign.Campaign{ID: "x", OwnerID: "owner-2", CreatedAt: ct0.Add(time.Hour)}
	if err := st.Create(ctx, other, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for cursor, first := "", true; first || cursor != ""; first = false {
		page, next, err := st.Owned(ctx, "owner-1", cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			if c.Body != "" || c.Subject != "Hello" || c.Total != 1 {
				t.Errorf("summary %+v: want subject and total, no body", c)
			}
			got = append(got, c.ID)
		}
		cursor = next
	}
	if fmt.Sprint(got) != "[c3 c2 c1]" {
		t.Errorf("pages %v, want newest first c3 c2 c1", got)
	}
}

// TestCampaignCompletesWhenItsLastTaskEnds: the write that ends the last
// open task completes an Active or Provisioning campaign, once; a
// cancelled one stays cancelled.
func TestCampaignCompletesWhenItsLastTaskEnds(t *testing.T) {
	ctx := context.Background()
	st := open(t, t.TempDir()).CampaignStore()
	for i, from := range []campaign.Status{campaign.Active, campaign.Provisioning, campaign.CampaignCancelled} {
		id := fmt.Sprintf("done%d", i)
		_, tasks := seedCampaign(t, st, id, 12, ct0)
		if err := st.SetStatus(ctx, id, []campaign.Status{campaign.Draft}, from, "", ct0); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for j, task := range tasks {
			wg.Go(func() {
				next, _ := campaign.Fail(task, "bounced", ct0)
				if j%3 == 0 {
					next, _ = campaign.Cancel(task, "r", ct0)
				}
				if err := st.Replace(ctx, task, next); err != nil {
					t.Error(err)
				}
				if err := st.Replace(ctx, task, next); !errors.Is(err, campaign.ErrConditionFailed) { // a repeated delivery
					t.Errorf("repeated Replace = %v", err)
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
	}
}

func TestCampaignCheckpoints(t *testing.T) {
	ctx := context.Background()
	cps := open(t, t.TempDir()).CampaignCheckpoints()
	if cp, err := cps.Load(ctx, "c1"); err != nil || cp != (provision.Checkpoint{CampaignID: "c1"}) {
		t.Fatalf("Load before Save = %+v, %v", cp, err)
	}
	want := provision.Checkpoint{CampaignID: "c1", Next: 17, Created: 16, Errors: 1, Runs: 2, Done: true, UpdatedAt: ct0}
	if err := cps.Save(ctx, want); err != nil {
		t.Fatal(err)
	}
	if cp, err := cps.Load(ctx, "c1"); err != nil || cp != want {
		t.Fatalf("Load = %+v, %v", cp, err)
	}
}

// TestCampaignSchedulesRoundTrip: what the dev campaign timer holds is
// saved and read back across a reopen, a replace drops what is gone, and
// two schedules of one name at two due times (Step Functions executions)
// are both kept.
func TestCampaignSchedulesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	k := contract.Key{Partition: "C#c", Sort: "T#c-00000"}
	at := func(m int) timer.Schedule {
		due := ct0.Add(time.Duration(m) * time.Minute)
		return timer.Schedule{Name: "camp-x", At: due, ClientToken: "tok", Payload: contract.Payload{Key: k, Due: due}}
	}
	other := timer.Schedule{Name: "camp-y", At: ct0, Payload: contract.Payload{Key: contract.Key{Partition: "C#c", Sort: "T#c-00001"}, Due: ct0}}
	if err := d.ReplaceCampaignSchedules([]timer.Schedule{at(1), other, at(2)}); err != nil {
		t.Fatal(err)
	}
	if err := d.ReplaceCampaignSchedules([]timer.Schedule{at(1), at(2)}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := open(t, dir).CampaignSchedules()
	if err != nil || len(got) != 2 || got[0] != at(1) || got[1] != at(2) {
		t.Fatalf("%+v %v", got, err)
	}
}

// TestAppendEmailOnce: one email per key, across a reopen.
func TestAppendEmailOnce(t *testing.T) {
	dir := t.TempDir()
	db := open(t, dir)
	if _, found, err := db.EmailOnce("send-c1-00000"); found || err != nil {
		t.Fatalf("EmailOnce before = %v, %v", found, err)
	}
	first, isFirst, err := db.AppendEmailOnce("send-c1-00000", Email{Kind: "campaign", At: ct0, To: []string{"a@example.com"}})
	if err != nil || !isFirst || first.Seq != 1 {
		t.Fatalf("first append = %+v, %v, %v", first, isFirst, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir)
	defer db.Close()
	again, isFirst, err := db.AppendEmailOnce("send-c1-00000", Email{Kind: "campaign", At: ct0.Add(time.Hour)})
	if err != nil || isFirst || again.Seq != 1 || !again.At.Equal(ct0) {
		t.Fatalf("second append = %+v, %v, %v: want the first email", again, isFirst, err)
	}
	if got, found, err := db.EmailOnce("send-c1-00000"); !found || err != nil || got.Seq != 1 {
		t.Fatalf("EmailOnce = %+v, %v, %v", got, found, err)
	}
	if all, _ := db.Outbox(); len(all) != 1 {
		t.Fatalf("outbox holds %d emails, want 1", len(all))
	}
}

// TestSenderLimitsSameAsMemory runs limitsdynamo's differential steps on
// the bolt counters and limits.Memory: the same answers and counts.
func TestSenderLimitsSameAsMemory(t *testing.T) {
	adds := func(campaigns, sends int64) []limits.Add {
		return []limits.Add{{Counter: limits.CounterCampaigns, By: campaigns, Max: 3}, {Counter: limits.CounterSends, By: sends, Max: 100}}
	}
	day := limits.Key{Sender: "u1", Day: "2026-06-01"}
	cases := []struct {
		name  string
		steps [][]limits.Add
	}{
		{"campaigns up to the limit", [][]limits.Add{adds(1, 1), adds(1, 1), adds(1, 1), adds(1, 1)}},
		{"sends up to the limit, exactly", [][]limits.Add{adds(1, 60), adds(1, 50), adds(1, 40), adds(1, 1)}},
		{"over the limit alone, first of the day", [][]limits.Add{adds(1, 101), adds(1, 100), adds(1, 0)}},
		{"a lowered limit under the count", [][]limits.Add{adds(1, 90), {{Counter: limits.CounterSends, By: 0, Max: 50}}}},
		{"one counter alone", [][]limits.Add{{{Counter: limits.CounterSends, By: 100, Max: 100}}, adds(1, 0), adds(1, 1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bolt := open(t, t.TempDir()).SenderLimits()
			mem := limits.NewMemory()
			ctx := context.Background()
			for i, step := range tc.steps {
				bc, bok, berr := bolt.Add(ctx, day, ct0, step)
				mc, mok, merr := mem.Add(ctx, day, ct0, step)
				if berr != nil || merr != nil {
					t.Fatalf("step %d: errors %v / %v", i, berr, merr)
				}
				if bok != mok || !maps.Equal(bc, mc) {
					t.Fatalf("step %d %+v: bolt ok=%v %v, Memory ok=%v %v", i, step, bok, bc, mok, mc)
				}
			}
			if got, err := bolt.Counts(day); err != nil || !maps.Equal(got, mem.Counts(day)) {
				t.Fatalf("final counts: bolt %v %v, Memory %v", got, err, mem.Counts(day))
			}
		})
	}
}

func TestSuppressionsContract(t *testing.T) {
	testenv.SuppressionContract(t, open(t, t.TempDir()).Suppressions())
}
