package ops_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/ops"
	"github.com/unschedule/unschedule/internal/ops/opstest"
)

// TestWhyOnEveryTable: why finds an item of any table a reconciler
// serves from its key alone, on that table's timer: the deferred jobs'
// TTL markers (present, missing, overdue) and the future events' Step
// Functions executions; --table picks by physical or logical name.
func TestWhyOnEveryTable(t *testing.T) {
	ctx := context.Background()
	f := opstest.New(t, now, servers(t))
	job := func(window string) contract.Key { return contract.Key{Partition: "tenant-1", Sort: window} }
	marked := f.Arm(t, opstest.DeferredJobsTable, job("2030-01-01T03:00:00Z"), now.Add(time.Hour), true)
	unmarked := f.Arm(t, opstest.DeferredJobsTable, job("2030-01-08T03:00:00Z"), now.Add(time.Hour), false)
	late := f.Arm(t, opstest.DeferredJobsTable, job("2029-12-25T03:00:00Z"), now.Add(-time.Hour), true)
	event := f.Arm(t, opstest.FutureEventsTable, contract.Key{Partition: "renewal-42"}, now.Add(time.Hour), true)
	lostEvent := f.Arm(t, opstest.FutureEventsTable, contract.Key{Partition: "renewal-43"}, now.Add(time.Hour), false)

	tests := []struct {
		name, table, key, wantTable, verdict string
		problem                              bool
		detail                               string // the entry's, "" for none
	}{
		{"TTL marker present", "", marked, opstest.DeferredJobsTable, ops.VerdictArmed, false, "a TTL marker, deleted by DynamoDB after"},
		{"TTL marker missing", "", unmarked, opstest.DeferredJobsTable, ops.VerdictMissing, true, ""},
		{"TTL marker overdue", "", late, opstest.DeferredJobsTable, ops.VerdictOverdue, true, "a TTL marker past its time"},
		{"execution running", "", event, opstest.FutureEventsTable, ops.VerdictArmed, false, "a running execution of stepfunctions:" + opstest.FutureEventsMachine},
		{"execution missing", "", lostEvent, opstest.FutureEventsTable, ops.VerdictMissing, true, ""},
		{"--table by logical name", "DeferredJobsTable", marked, opstest.DeferredJobsTable, ops.VerdictArmed, false, "a TTL marker"},
		{"--table by physical name", opstest.FutureEventsTable, event, opstest.FutureEventsTable, ops.VerdictArmed, false, "a running execution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := f.World.Why(ctx, tt.table, tt.key)
			if err != nil {
				t.Fatal(err)
			}
			detail := ""
			if r.Entry != nil {
				detail = r.Entry.Detail
			}
			if r.Table != tt.wantTable || r.Verdict != tt.verdict || r.Problem != tt.problem ||
				(tt.detail == "") != (detail == "") || !strings.HasPrefix(detail, tt.detail) {
				t.Errorf("why %s = table %s, %s (problem %v, entry %q): %s; want %s, %s, entry %q",
					tt.key, r.Table, r.Verdict, r.Problem, detail, r.Explanation, tt.wantTable, tt.verdict, tt.detail)
			}
		})
	}

	// drift on the Step Functions timer: the lost execution.
	rs, err := f.World.Drift(ctx, "FutureEventsTable", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[reconcile.DriftKind]int{reconcile.DriftMissing: 1}; len(rs) != 1 || !sameCounts(counts(rs), want) {
		t.Errorf("drift of the future events = %v, want %v", counts(rs), want)
	}

	// A key two tables could hold and neither does: the answer names
	// both; a key both hold needs --table.
	r, err := f.World.Why(ctx, "", "pk=nobody,sk=nothing")
	if err != nil || r.Verdict != ops.VerdictNoItem || r.Key != "nobody/nothing" || !strings.Contains(r.Table, opstest.TaskTable) || !strings.Contains(r.Table, opstest.DeferredJobsTable) {
		t.Errorf("why of a key in no table = %+v, %v", r, err)
	}
	f.Arm(t, opstest.TaskTable, contract.Key{Partition: "tenant-1", Sort: "2030-01-01T03:00:00Z"}, now.Add(time.Hour), false)
	if _, err := f.World.Why(ctx, "", marked); !errors.Is(err, ops.ErrUsage) || !strings.Contains(err.Error(), "--table") {
		t.Errorf("why of a key in two tables: %v, want a usage error naming --table", err)
	}
	if _, err := f.World.Why(ctx, "NoSuchTable", marked); !errors.Is(err, ops.ErrUsage) {
		t.Errorf("why --table NoSuchTable: %v, want a usage error", err)
	}
}

// TestDriftOnTheTTLTimer: drift over the deferred jobs' table reports a
// missing marker and an overdue item, and a repair mends both (a new
// marker; the overdue item fired through the dispatcher).
func TestDriftOnTheTTLTimer(t *testing.T) {
	ctx := context.Background()
	f := opstest.New(t, now, servers(t))
	f.Arm(t, opstest.DeferredJobsTable, contract.Key{Partition: "tenant-1", Sort: "w1"}, now.Add(time.Hour), true)
	f.Arm(t, opstest.DeferredJobsTable, contract.Key{Partition: "tenant-1", Sort: "w2"}, now.Add(time.Hour), false)
	f.Arm(t, opstest.DeferredJobsTable, contract.Key{Partition: "tenant-1", Sort: "w3"}, now.Add(-time.Hour), true)
	want := map[reconcile.DriftKind]int{reconcile.DriftMissing: 1, reconcile.DriftOverdue: 1}
	rs, err := f.World.Drift(ctx, "DeferredJobsTable", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Timer != "ttl:unscheduleTtl" || fmt.Sprint(counts(rs)) != fmt.Sprint(want) {
		t.Fatalf("drift = %+v (%v), want %v on the TTL timer", rs, counts(rs), want)
	}
	rep, err := f.World.Repair(ctx, "DeferredJobsTable", "")
	if err != nil {
		t.Fatal(err)
	}
	if r := rep[0].Repaired; r == nil || r.SchedulesCreated != 1 || r.ItemsFired != 1 {
		t.Fatalf("repair = %+v, want a marker created and an item fired", rep[0].Repaired)
	}
	if len(f.Invoked.Calls) != 1 || !strings.Contains(string(f.Invoked.Calls[0].Payload), "w3") {
		t.Errorf("deliveries = %d, want the overdue job's to the dispatcher", len(f.Invoked.Calls))
	}
	if got, _ := f.World.Drift(ctx, "DeferredJobsTable", ""); len(counts(got)) != 0 {
		t.Errorf("drift after the repair = %v, want none", counts(got))
	}
}
