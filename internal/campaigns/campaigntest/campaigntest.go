// Package campaigntest is the campaigns' conformance suites, beside
// their ports: the campaign store (CampaignStoreContract), the provision
// checkpoints (CheckpointContract), the sender limits (LimitsContract)
// and the suppression list (SuppressionContract), with the campaign
// fixture (CampaignFixture). It imports only the campaigns and the core;
// the caller passes the store under test.
package campaigntest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/core/suitecheck"
)

// CampaignContractStore is what CampaignStoreContract tests: the campaign
// ports and the per-state counts.
type CampaignContractStore interface {
	campaign.Tasks
	campaign.Campaigns
	Counts(ctx context.Context, campaignID string) (map[campaign.State]int, error)
}

// CampaignAPIStore is a campaign store that also serves the campaign API
// (campaignapi.Store): CampaignStoreContract then tests these too.
type CampaignAPIStore interface {
	CampaignContractStore
	Create(ctx context.Context, c campaign.Campaign, tasks []campaign.SendTask) error
	Complete(ctx context.Context, c campaign.Campaign) (bool, error)
	Owned(ctx context.Context, owner, cursor string, limit int) ([]campaign.Campaign, string, error)
}

// CampaignBackend is one empty campaign store under CampaignStoreContract.
type CampaignBackend struct {
	Store CampaignContractStore
	// Put writes a campaign and its tasks as they are (test setup).
	// Default: Store's Create (a CampaignAPIStore).
	Put func(c campaign.Campaign, tasks []campaign.SendTask) error
	// ErrExists is what a second Create of a campaign wraps (a
	// CampaignAPIStore's).
	ErrExists error
	// Writes, when set, counts the store's writes: a refused call must
	// leave it as it was.
	Writes func() int
}

// CampaignT0 is the campaign contract's reference instant: a Monday,
// 09:00 in Berlin, the first minute of the fixture's send window.
var CampaignT0 = time.Date(2026, 6, 1, 7, 0, 0, 0, time.UTC)

// CampaignFixture is a Draft campaign of owner-1 created at created, of
// n recipients, and its Pending tasks (20 sends a day, 09:00-17:00 in
// Berlin).
func CampaignFixture(t testing.TB, id string, n int, created time.Time) (campaign.Campaign, []campaign.SendTask) {
	t.Helper()
	var rs []campaign.Recipient
	for i := range n {
		rs = append(rs, campaign.Recipient{Email: fmt.Sprintf("r%d@example.com", i)})
	}
	rules := plan.Rules{SendsPerDay: 20, Windows: []plan.Window{{Start: 9 * 60, End: 17 * 60}}, TimeZone: "Europe/Berlin",
		Start: plan.Date{Year: 2026, Month: time.June, Day: 1}}
	c, tasks, err := campaign.Build(id, "owner-1", campaign.Request{Subject: "Hello", Body: "Hi there", Rules: rules, Recipients: rs}, created, nil)
	suitecheck.Must(t, err)
	return c, tasks
}

// CampaignStoreContract is what every campaign store shares with
// campaigntable.CampaignStore (memory.CampaignStore, which the
// simulation and the dev server run): the same reads, and every
// conditional write refused where DynamoDB refuses it, with the same
// error. newStore returns an empty store.
func CampaignStoreContract(t *testing.T, newStore func(t *testing.T) CampaignBackend) {
	ctx := context.Background()
	t0 := CampaignT0
	// setup is a fresh store holding the Draft campaign c1 of 30 tasks.
	setup := func(t *testing.T) (CampaignBackend, campaign.Campaign, []campaign.SendTask) {
		t.Helper()
		b := campaignBackend(t, newStore)
		c, tasks := CampaignFixture(t, "c1", 30, t0)
		suitecheck.Must(t, b.Put(c, tasks))
		return b, c, tasks
	}
	// refused runs call, which must fail (with want unless nil) and
	// write nothing.
	refused := func(t *testing.T, b CampaignBackend, what string, want error, call func() error) {
		t.Helper()
		before := 0
		if b.Writes != nil {
			before = b.Writes()
		}
		err := call()
		if err == nil || (want != nil && !errors.Is(err, want)) {
			t.Errorf("%s = %v, want %v", what, err, want)
		}
		if want == nil && errors.Is(err, campaign.ErrConditionFailed) {
			t.Errorf("%s = %v: a refused request, not a failed condition", what, err)
		}
		if b.Writes != nil && b.Writes() != before {
			t.Errorf("%s wrote %d times", what, b.Writes()-before)
		}
	}
	cf := campaign.ErrConditionFailed
	// finish claims the task at its send time and records it sent.
	finish := func(t *testing.T, st CampaignContractStore, task campaign.SendTask) campaign.SendTask {
		t.Helper()
		cl := suitecheck.Need(st.Claim(ctx, task.Key(), task.SendAt, t0, time.Minute))(t)
		fin, _ := campaign.Finish(cl, t0, "m-1", t0)
		suitecheck.Must(t, st.Replace(ctx, cl, fin))
		return fin
	}
	// walk reads the open index from cursor ("" for its start) to its
	// end, in pages of limit.
	walk := func(t *testing.T, st CampaignContractStore, cursor string, limit int) []campaign.SendTask {
		t.Helper()
		var all []campaign.SendTask
		for cur, first := cursor, cursor == ""; first || cur != ""; first = false {
			page, next, err := st.Open(ctx, cur, limit)
			suitecheck.Must(t, err)
			if len(page) > limit || (len(page) == 0 && next != "") || (next != "" && next == cur) || len(all) > 1000 {
				t.Fatalf("a page of %d (limit %d) after %d tasks, cursor %q after %q", len(page), limit, len(all), next, cur)
			}
			all = append(all, page...)
			cur = next
		}
		return all
	}
	ids := func(ts []campaign.SendTask) []string {
		out := make([]string, 0, len(ts))
		for _, x := range ts {
			out = append(out, x.ID)
		}
		return out
	}

	tests := []struct {
		name string
		api  bool // a CampaignAPIStore's only
		run  func(t *testing.T, b CampaignBackend, c campaign.Campaign, tasks []campaign.SendTask)
	}{
		{"a campaign reads back as written", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, _ []campaign.SendTask) {
			got, err := b.Store.Campaign(ctx, "c1")
			if err != nil || got.Total != 30 || got.Status != campaign.Draft || got.OwnerID != "owner-1" || got.Rules.TimeZone != "Europe/Berlin" {
				t.Fatalf("Campaign = %+v, %v", got, err)
			}
			suitecheck.WantErr(t, "Campaign of a missing one", suitecheck.ErrOf(b.Store.Campaign(ctx, "nope")), campaign.ErrNotFound)
		}},
		{"create is once per id; complete is whether the last task is there", true, func(t *testing.T, b CampaignBackend, c campaign.Campaign, tasks []campaign.SendTask) {
			api := b.Store.(CampaignAPIStore)
			refused(t, b, "second Create", b.ErrExists, func() error { return api.Create(ctx, c, tasks) })
			if ok, err := api.Complete(ctx, c); !ok || err != nil {
				t.Fatalf("Complete = %v, %v", ok, err)
			}
			if ok, _ := api.Complete(ctx, campaign.Campaign{ID: "c1", Total: 31}); ok {
				t.Fatal("Complete is true for a campaign missing its last task")
			}
		}},
		{"get round-trips every field", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, tasks []campaign.SendTask) {
			suitecheck.Equal(t, "Get", suitecheck.Need(b.Store.Get(ctx, tasks[3].Key()))(t), tasks[3])
			suitecheck.WantErr(t, "Get of a missing task", suitecheck.ErrOf(b.Store.Get(ctx, campaign.Key{CampaignID: "c1", TaskID: "nope"})), campaign.ErrNotFound)
		}},
		{"list pages in index order", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, _ []campaign.SendTask) {
			page, err := b.Store.List(ctx, "c1", 10, 7)
			if err != nil || len(page) != 7 || page[0].Index != 10 || page[6].Index != 16 {
				t.Fatalf("List = %d tasks from %v, %v", len(page), page, err)
			}
			if rest, err := b.Store.List(ctx, "c1", 25, 100); err != nil || len(rest) != 5 || rest[0].Index != 25 {
				t.Fatalf("List tail = %d, %v; want 5 from index 25", len(rest), err)
			}
			refused(t, b, "List from -1", nil, func() error { _, err := b.Store.List(ctx, "c1", -1, 5); return err })
			refused(t, b, "List of 0", nil, func() error { _, err := b.Store.List(ctx, "c1", 0, 0); return err })
		}},
		{"claim is of a Pending task at its send time, once", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, tasks []campaign.SendTask) {
			st, k, due := b.Store, tasks[0].Key(), tasks[0].SendAt
			refused(t, b, "Claim for another send time", cf, func() error {
				_, err := st.Claim(ctx, k, due.Add(time.Minute), t0, time.Minute)
				return err
			})
			cl, err := st.Claim(ctx, k, due, t0, time.Minute)
			if err != nil || cl.State != campaign.Running || cl.Attempt != 1 || !cl.LeaseUntil.Equal(t0.Add(time.Minute)) {
				t.Fatalf("Claim = %+v, %v", cl, err)
			}
			suitecheck.Equal(t, "stored", suitecheck.Need(st.Get(ctx, k))(t), cl)
			refused(t, b, "second Claim", cf, func() error { _, err := st.Claim(ctx, k, due, t0, time.Minute); return err })
			refused(t, b, "TakeOver within the lease", cf, func() error {
				_, err := st.TakeOver(ctx, k, due, t0.Add(30*time.Second), time.Minute)
				return err
			})
			refused(t, b, "Claim of a missing task", cf, func() error {
				_, err := st.Claim(ctx, campaign.Key{CampaignID: "c1", TaskID: "missing"}, due, t0, time.Minute)
				return err
			})
		}},
		{"replace is from the stored state and attempt only", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, tasks []campaign.SendTask) {
			st := b.Store
			cl := suitecheck.Need(st.Claim(ctx, tasks[0].Key(), tasks[0].SendAt, t0, time.Minute))(t)
			fin, _ := campaign.Finish(cl, t0, "m-1", t0)
			refused(t, b, "Replace from a stale task", cf, func() error { return st.Replace(ctx, tasks[0], fin) })
			missing := tasks[1]
			missing.ID = "c1-99999"
			refused(t, b, "Replace of a missing task", cf, func() error { return st.Replace(ctx, missing, missing) })
			refused(t, b, "Replace with another key", nil, func() error { return st.Replace(ctx, cl, tasks[1]) })
			suitecheck.Must(t, st.Replace(ctx, cl, fin))
			if g, _ := st.Get(ctx, cl.Key()); g.State != campaign.Finished || g.MessageID != "m-1" {
				t.Fatalf("stored %+v", g)
			}
			refused(t, b, "the same Replace again", cf, func() error { return st.Replace(ctx, cl, fin) })
		}},
		{"take over is of a Running, unsent task a lease after its claim, once", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, tasks []campaign.SendTask) {
			st, k, due := b.Store, tasks[0].Key(), tasks[0].SendAt
			claimAt := due.Add(10 * time.Second)
			first := suitecheck.Need(st.Claim(ctx, k, due, claimAt, time.Minute))(t)
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
				if !c.ok {
					refused(t, b, "TakeOver "+c.name, cf, func() error { _, err := st.TakeOver(ctx, k, c.due, c.at, time.Minute); return err })
					continue
				}
				got, err := st.TakeOver(ctx, k, c.due, c.at, time.Minute)
				if err != nil || got.Attempt != 2 || !got.ClaimedAt.Equal(c.at) || got.State != campaign.Running || !got.LeaseUntil.Equal(c.at.Add(time.Minute)) {
					t.Fatalf("%s: taken over as %+v, %v", c.name, got, err)
				}
			}
			cur, _ := st.Get(ctx, k)
			late, _ := campaign.Finish(first, due, "m-0", due)
			refused(t, b, "Replace from the attempt taken over", cf, func() error { return st.Replace(ctx, first, late) })
			fin, _ := campaign.Finish(cur, due, "m-1", due)
			suitecheck.Must(t, st.Replace(ctx, cur, fin))
			refused(t, b, "TakeOver of a sent task", cf, func() error { _, err := st.TakeOver(ctx, k, due, due.Add(time.Hour), time.Minute); return err })
		}},
		{"the open index holds exactly the open tasks, in order, each once", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, tasks []campaign.SendTask) {
			c2, more := CampaignFixture(t, "c2", 4, t0)
			suitecheck.Must(t, b.Put(c2, more))
			finish(t, b.Store, tasks[0])
			running := suitecheck.Need(b.Store.Claim(ctx, tasks[5].Key(), tasks[5].SendAt, t0, time.Minute))(t)
			want := append(slices.Concat(tasks[1:5], []campaign.SendTask{running}, tasks[6:]), more...)
			for _, limit := range []int{1, 7, 34, 100} {
				if got := walk(t, b.Store, "", limit); !slices.Equal(got, want) {
					t.Errorf("pages of %d: %v\nwant %v", limit, ids(got), ids(want))
				}
			}
		}},
		{"writes between pages move no task across the cursor", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, tasks []campaign.SendTask) {
			page, cur, err := b.Store.Open(ctx, "", 10)
			if err != nil || len(page) != 10 || cur == "" {
				t.Fatalf("first page: %d tasks, cursor %q, %v", len(page), cur, err)
			}
			for _, i := range []int{2, 3, 12} { // two read already, one not yet
				finish(t, b.Store, tasks[i])
			}
			rest := walk(t, b.Store, cur, 10)
			if want := slices.Concat(tasks[10:12], tasks[13:]); !slices.Equal(rest, want) {
				t.Fatalf("after the writes: %v\nwant %v", ids(rest), ids(want))
			}
		}},
		{"a cursor that no page returned is ErrBadCursor", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, _ []campaign.SendTask) {
			b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
			for _, c := range []string{"%%%", "-3", b64("c1"), b64("a\x00b\x00c")} {
				refused(t, b, fmt.Sprintf("Open(%q)", c), campaign.ErrBadCursor, func() error { _, _, err := b.Store.Open(ctx, c, 5); return err })
			}
			if api, ok := b.Store.(CampaignAPIStore); ok {
				refused(t, b, "Owned(%%%)", campaign.ErrBadCursor, func() error { _, _, err := api.Owned(ctx, "owner-1", "%%%", 2); return err })
			}
		}},
		{"counts by state", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, tasks []campaign.SendTask) {
			finish(t, b.Store, tasks[0])
			n, err := b.Store.Counts(ctx, "c1")
			if err != nil || n[campaign.Pending] != 29 || n[campaign.Finished] != 1 || len(n) != 2 {
				t.Fatalf("Counts = %v, %v", n, err)
			}
		}},
		{"set status only from the allowed ones", false, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, _ []campaign.SendTask) {
			st := b.Store
			refused(t, b, "SetStatus from Active while Draft", cf, func() error {
				return st.SetStatus(ctx, "c1", []campaign.Status{campaign.Active}, campaign.CampaignCancelled, "x", t0)
			})
			refused(t, b, "SetStatus from no status", nil, func() error { return st.SetStatus(ctx, "c1", nil, campaign.CampaignCancelled, "x", t0) })
			refused(t, b, "SetStatus of a missing campaign", cf, func() error {
				return st.SetStatus(ctx, "missing", []campaign.Status{campaign.Draft}, campaign.Active, "", t0)
			})
			suitecheck.Must(t, st.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft, campaign.Provisioning}, campaign.CampaignCancelled, "stop", t0.Add(time.Hour)))
			if g, _ := st.Campaign(ctx, "c1"); g.Status != campaign.CampaignCancelled || g.CancelReason != "stop" || !g.UpdatedAt.Equal(t0.Add(time.Hour)) {
				t.Fatalf("campaign %+v", g)
			}
		}},
		{"owned pages newest first, as summaries", true, func(t *testing.T, b CampaignBackend, _ campaign.Campaign, _ []campaign.SendTask) {
			api := b.Store.(CampaignAPIStore)
			for i, id := range []string{"c2", "c3"} {
				c, tasks := CampaignFixture(t, id, 1, t0.Add(time.Duration(i+1)*time.Minute))
				suitecheck.Must(t, api.Create(ctx, c, tasks))
			}
			suitecheck.Must(t, api.Create(ctx, campaign.Campaign{ID: "x", OwnerID: "owner-2", CreatedAt: t0.Add(time.Hour)}, nil))
			var got []string
			for cursor, first := "", true; first || cursor != ""; first = false {
				page, next, err := api.Owned(ctx, "owner-1", cursor, 2)
				suitecheck.Must(t, err)
				for _, c := range page {
					if c.Body != "" || c.Subject != "Hello" || c.OwnerID != "owner-1" {
						t.Errorf("summary %+v: want subject, no body", c)
					}
					got = append(got, fmt.Sprintf("%s/%d", c.ID, c.Total))
				}
				cursor = next
			}
			if fmt.Sprint(got) != "[c3/1 c2/1 c1/30]" {
				t.Errorf("pages %v, want newest first c3 c2 c1", got)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, c, tasks := setup(t)
			if _, ok := b.Store.(CampaignAPIStore); tc.api && !ok {
				t.Skipf("%T serves no campaign API", b.Store)
			}
			tc.run(t, b, c, tasks)
		})
	}
	for _, from := range []campaign.Status{campaign.Active, campaign.Provisioning, campaign.CampaignCancelled} {
		t.Run("the last task's end completes a campaign that was "+string(from), func(t *testing.T) {
			lastTaskCompletes(t, campaignBackend(t, newStore), from)
		})
	}
}

// campaignBackend is a new backend whose Put defaults to its store's
// Create.
func campaignBackend(t *testing.T, newStore func(t *testing.T) CampaignBackend) CampaignBackend {
	t.Helper()
	b := newStore(t)
	if b.Put == nil {
		api, ok := b.Store.(CampaignAPIStore)
		if !ok {
			t.Fatalf("%T has no Create: give the backend a Put", b.Store)
		}
		b.Put = func(c campaign.Campaign, tasks []campaign.SendTask) error {
			return api.Create(context.Background(), c, tasks)
		}
	}
	return b
}

// lastTaskCompletes: the write that ends a campaign's last open task
// completes an Active or Provisioning campaign, once, whatever the
// order, concurrency and repeats of the writes (sent, failed, cancelled
// in turn); a Provisioning campaign's own move to Active then comes too
// late and is refused; a cancelled one stays cancelled.
func lastTaskCompletes(t *testing.T, b CampaignBackend, from campaign.Status) {
	ctx := context.Background()
	st := b.Store
	c, tasks := CampaignFixture(t, "done", 12, CampaignT0)
	suitecheck.Must(t, b.Put(c, tasks))
	suitecheck.Must(t, st.SetStatus(ctx, c.ID, []campaign.Status{campaign.Draft}, from, "", CampaignT0))
	var wg sync.WaitGroup
	for j, task := range tasks {
		wg.Go(func() {
			prev, err := task, error(nil)
			var next campaign.SendTask
			switch j % 3 {
			case 0:
				if prev, err = st.Claim(ctx, task.Key(), task.SendAt, CampaignT0, time.Minute); err == nil {
					next, err = campaign.Finish(prev, CampaignT0, "m", CampaignT0)
				}
			case 1:
				next, err = campaign.Fail(task, "bounced", CampaignT0)
			default:
				next, err = campaign.Cancel(task, "r", CampaignT0)
			}
			if err == nil {
				err = st.Replace(ctx, prev, next)
			}
			if err != nil {
				t.Error(err)
			}
			// At-least-once: the same write again is refused, changes nothing.
			if err := st.Replace(ctx, prev, next); !errors.Is(err, campaign.ErrConditionFailed) {
				t.Errorf("repeated Replace = %v", err)
			}
		})
		if j == len(tasks)-2 {
			wg.Wait()
			if got, _ := st.Campaign(ctx, c.ID); got.Status != from {
				t.Fatalf("%s with one task open: %s", from, got.Status)
			}
		}
	}
	wg.Wait()
	want := campaign.Completed
	if from == campaign.CampaignCancelled {
		want = from
	}
	if got, err := st.Campaign(ctx, c.ID); err != nil || got.Status != want {
		t.Fatalf("%s after every task ended: %s %v, want %s", from, got.Status, err, want)
	}
	suitecheck.WantErr(t, string(from)+" → Active after every task ended",
		st.SetStatus(ctx, c.ID, []campaign.Status{campaign.Draft, campaign.Provisioning}, campaign.Active, "", CampaignT0), campaign.ErrConditionFailed)
}

// CheckpointContract is what every provisioning checkpoint store does:
// the zero checkpoint before the first Save, then the last one saved.
func CheckpointContract(t *testing.T, cps provision.Checkpoints) {
	ctx := context.Background()
	suitecheck.Equal(t, "Load before Save", suitecheck.Need(cps.Load(ctx, "c1"))(t), provision.Checkpoint{CampaignID: "c1"})
	for _, want := range []provision.Checkpoint{
		{CampaignID: "c1", Next: 10, Created: 10, Runs: 1, UpdatedAt: CampaignT0},
		{CampaignID: "c1", Next: 17, Created: 16, Errors: 1, Runs: 2, Done: true, UpdatedAt: CampaignT0.Add(time.Minute)},
	} {
		suitecheck.Must(t, cps.Save(ctx, want))
		suitecheck.Equal(t, "Load", suitecheck.Need(cps.Load(ctx, "c1"))(t), want)
	}
	suitecheck.Equal(t, "Load of another campaign", suitecheck.Need(cps.Load(ctx, "c2"))(t), provision.Checkpoint{CampaignID: "c2"})
}
