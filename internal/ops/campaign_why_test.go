package ops_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntest"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/ops"
	"github.com/unschedule/unschedule/internal/ops/opstest"
)

func taskKey(tk campaign.SendTask) string {
	k := campaign.ItemKey(tk.Key())
	return "pk=" + k.Partition + ",sk=" + k.Sort
}

// TestWhyOnCampaignSends: why and drift read the campaign table's send
// tasks on the campaigns' timer, and the verdict is the campaign's own
// rules (campaign.Repair, asked without writing) with the reconciler's:
// an armed task, a lost schedule, a task overdue, the task of a cancelled
// campaign, a draft's task that owes no schedule yet.
func TestWhyOnCampaignSends(t *testing.T) {
	ctx := context.Background()
	t0 := campaigntest.CampaignT0
	// Now 09:30 UTC: the tasks are at 08:00 (overdue), 10:00 (due within
	// the rules' check-ahead hour), 12:00 and 14:00.
	f := opstest.New(t, t0.Add(150*time.Minute), servers(t))
	active, tasks := campaigntest.CampaignFixture(t, "c1", 4, t0)
	active.Status = campaign.Active
	tm := f.Campaign(t, active, tasks)
	lost := tasks[1]
	if err := tm.Disarm(ctx, lost.Schedule().Name, lost.SendAt); err != nil {
		t.Fatal(err)
	}
	cancelled, ctasks := campaigntest.CampaignFixture(t, "c2", 1, t0)
	cancelled.Status = campaign.CampaignCancelled
	f.Campaign(t, cancelled, ctasks)
	draft, dtasks := campaigntest.CampaignFixture(t, "c3", 1, t0.Add(2*time.Hour))
	store, err := campaigntable.NewCampaignStore(f.World.DDB, opstest.CampaignTable)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Create(ctx, draft, dtasks); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, key, verdict string
		problem, entry     bool
		explains           string
	}{
		{"overdue", taskKey(tasks[0]), ops.VerdictOverdue, true, true, "the reconciler fires it"},
		{"armed", taskKey(tasks[2]), ops.VerdictArmed, false, true, "on timer scheduler:" + opstest.CampaignGroup},
		{"missing", taskKey(lost), ops.VerdictMissing, true, false, "recreates it"},
		{"cancelled campaign", taskKey(ctasks[0]), ops.VerdictRules, true, true, "the campaign's rules: its campaign is cancelled"},
		{"draft", taskKey(dtasks[0]), ops.VerdictLeft, false, false, "its campaign is a draft"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := f.World.Why(ctx, "", tt.key)
			if err != nil {
				t.Fatal(err)
			}
			if r.Table != opstest.CampaignTable || r.Verdict != tt.verdict || r.Problem != tt.problem || (r.Entry != nil) != tt.entry ||
				!strings.Contains(r.Explanation, tt.explains) {
				t.Errorf("why = %s: %s (problem %v, entry %+v); want %s, %q", r.Verdict, r.Explanation, r.Problem, r.Entry, tt.verdict, tt.explains)
			}
		})
	}
	// The plan wrote nothing: the cancelled campaign's task is still
	// Pending, and the drift is the same twice.
	if got, err := store.Get(ctx, ctasks[0].Key()); err != nil || got.State != campaign.Pending {
		t.Errorf("the cancelled campaign's task after why: %s, %v; want Pending (a plan writes nothing)", got.State, err)
	}
	rs, err := f.World.Drift(ctx, "CampaignTable", "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[reconcile.DriftKind]int{reconcile.DriftMissing: 1, reconcile.DriftOverdue: 1, reconcile.DriftOrphaned: 1}
	if len(rs) != 1 || rs[0].Table != opstest.CampaignTable || !sameCounts(counts(rs), want) {
		t.Errorf("drift of the campaign table = %v, want %v", counts(rs), want)
	}
	// A repair runs the same rules for real: the cancelled campaign's task
	// cancelled and its schedule deleted, the lost schedule made, the
	// overdue task handed to the send function.
	rep, err := f.World.Repair(ctx, opstest.CampaignTable, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := rep[0].Repaired; r == nil || r.SchedulesCreated != 1 || r.SchedulesDeleted != 1 || r.ItemsFired != 1 {
		t.Errorf("repair = %+v, want 1 schedule created, 1 deleted, 1 task fired", r)
	}
	if got, _ := store.Get(ctx, ctasks[0].Key()); got.State != campaign.Cancelled {
		t.Errorf("the cancelled campaign's task after the repair: %s, want Cancelled", got.State)
	}
	if len(f.Invoked.Calls) != 1 || !strings.Contains(string(f.Invoked.Calls[0].Payload), tasks[0].ID) {
		t.Errorf("invokes %d, want the overdue task's dispatch to the send function", len(f.Invoked.Calls))
	}
	// The send function (recorded here, not run) would claim the overdue
	// task; the rest is mended.
	if rs, _ := f.World.Drift(ctx, opstest.CampaignTable, ""); !sameCounts(counts(rs), map[reconcile.DriftKind]int{reconcile.DriftOverdue: 1}) {
		t.Errorf("drift after the repair = %v, want the overdue task alone", counts(rs))
	}
}

func sameCounts(a, b map[reconcile.DriftKind]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
