package ops_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/ops"
	"github.com/unschedule/unschedule/internal/ops/opstest"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.RunWithMoto(m)) }

var now = time.Now().UTC().Truncate(time.Second)

func newTask(id string, due time.Time) task.Task {
	return task.Task{UserID: "user-1", TaskID: id, Title: "t", Status: task.StatusPending, DueAt: due, ScheduleToken: "tok",
		CreatedAt: now.Add(-3 * time.Hour), UpdatedAt: now.Add(-3 * time.Hour)}
}

func keyText(tk task.Task) string { return "pk=" + tk.UserID + ",sk=" + tk.TaskID }

func TestDiscoverFindsTheStack(t *testing.T) {
	f := opstest.New(t, now, servers(t))
	st := f.World.Stack
	// Every table a reconciler serves, with its timer from the functions'
	// environment, found by its physical name or its logical one.
	tests := []struct{ name, logical, timer string }{
		{opstest.TaskTable, "TasksTable", "scheduler:" + opstest.Group},
		{opstest.FutureEventsTable, "FutureEventsTable6A0E9B1C", "stepfunctions:" + opstest.FutureEventsMachine},
		{opstest.DeferredJobsTable, "deferredjobstable", "ttl:" + timerspec.DefaultTTLAttr},
	}
	for _, tt := range tests {
		for _, by := range []string{tt.name, tt.logical} {
			tb, err := st.Table(by)
			if err != nil || tb.Name != tt.name || !tb.HasTimer || tb.TimerName != tt.timer || tb.Reconciler == "" || tb.LogicalID == "" {
				t.Errorf("Table(%q) = %+v, %v; want %s on %s with its reconciler", by, tb, err, tt.name, tt.timer)
			}
		}
	}
	if _, err := st.Table(""); err == nil || !strings.Contains(err.Error(), "name one with --table") {
		t.Errorf("Table(\"\") with several tables: %v", err)
	}
	if q := f.Queue(t, ops.QueueStreamFailures); q.Table != opstest.TaskTable {
		t.Errorf("the stream failures queue's table is %q, want %s (from the mapping's stream)", q.Table, opstest.TaskTable)
	}
	for _, kind := range []ops.QueueKind{ops.QueueWork, ops.QueueDeadLetters, ops.QueueStreamFailures, ops.QueueSchedulerDeadLetters, ops.QueueAsyncFailures} {
		q := f.Queue(t, kind)
		if kind != ops.QueueWork && kind != ops.QueueStreamFailures && q.Target == "" {
			t.Errorf("%s queue %s has no redrive target", kind, q.Name)
		}
	}
}

func TestWhy(t *testing.T) {
	ctx := context.Background()
	f := opstest.New(t, now, servers(t))
	tm, err := f.World.Timer(f.Table(t, opstest.TaskTable))
	if err != nil {
		t.Fatal(err)
	}
	armed := newTask("01JD0000000000000000000001", now.Add(time.Hour))
	lost := newTask("01JD0000000000000000000002", now.Add(time.Hour))
	orphan := newTask("01JD0000000000000000000003", now.Add(time.Hour))
	claimed := newTask("01JD0000000000000000000004", now.Add(-30*time.Second))
	stale := newTask("01JD0000000000000000000005", now.Add(-time.Hour))
	done := newTask("01JD0000000000000000000006", now.Add(time.Hour))
	for _, tk := range []task.Task{armed, lost, claimed, stale, done} {
		if err := f.Tasks.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	for _, tk := range []task.Task{armed, orphan} {
		if err := tm.Arm(ctx, task.ScheduleFor(tk)); err != nil {
			t.Fatal(err)
		}
	}
	// Claimed now, within the lease; and one claimed long ago, never
	// delivered.
	for _, c := range []struct {
		tk task.Task
		at time.Time
	}{{claimed, now}, {stale, now.Add(-50 * time.Minute)}} {
		if _, err := f.Tasks.Expire(ctx, c.tk.UserID, c.tk.TaskID, c.tk.DueAt, c.at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Tasks.Delete(ctx, done.UserID, done.TaskID); err != nil {
		t.Fatal(err)
	}
	// A poisoned cancellation of the lost task's key in the FIFO DLQ.
	dlq := f.Queue(t, ops.QueueDeadLetters)
	sendJSON(t, f, dlq, cancel.Message{Action: cancel.ActionSchedule, Partition: lost.UserID, Sort: lost.TaskID, DueAt: lost.DueAt, EventID: "e1"}, "g1")

	tests := []struct {
		tk      task.Task
		verdict string
		problem bool
		entry   bool
		letters int
	}{
		{armed, ops.VerdictArmed, false, true, 0},
		{lost, ops.VerdictMissing, true, false, 1},
		{orphan, ops.VerdictOrphaned, true, true, 0},
		{claimed, ops.VerdictClaimed, false, false, 0},
		{stale, ops.VerdictUndelivered, true, false, 0},
		{done, ops.VerdictNoItem, false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.verdict, func(t *testing.T) {
			r, err := f.World.Why(ctx, "", keyText(tt.tk))
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != tt.verdict || r.Problem != tt.problem || (r.Entry != nil) != tt.entry || len(r.Messages) != tt.letters {
				t.Errorf("why = %s (problem %v, entry %+v, %d messages): %s; want %s", r.Verdict, r.Problem, r.Entry, len(r.Messages), r.Explanation, tt.verdict)
			}
		})
	}
	// The peek left the message in its queue, visible.
	if n := f.Count(t, dlq); n != 1 {
		t.Errorf("the dead-letter queue holds %d messages after why, want 1", n)
	}
}

func sendJSON(t *testing.T, f *opstest.Fixture, q ops.Queue, m cancel.Message, group string) {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	b := string(raw)
	send(t, f, q, b, group, m.Partition+"/"+m.Sort+"-"+m.EventID, nil)
}

func send(t *testing.T, f *opstest.Fixture, q ops.Queue, body, group, dedup string, attrs map[string]string) {
	t.Helper()
	in := &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(body)}
	if group != "" {
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(group), aws.String(dedup)
	}
	if len(attrs) > 0 {
		in.MessageAttributes = map[string]sqstypes.MessageAttributeValue{}
		for k, v := range attrs {
			in.MessageAttributes[k] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	if _, err := f.SQS.SendMessage(context.Background(), in); err != nil {
		t.Fatal(err)
	}
}

// TestHistory: the query filters the item's key in logfield.Key over the
// log groups of the table's functions, and the lines come back in order.
func TestHistory(t *testing.T) {
	f := opstest.New(t, now, servers(t))
	logs := &opstest.Logs{Polls: 2, Lines: [][]cwtypes.ResultField{
		opstest.Line("2030-01-01 11:00:00.000", "/aws/lambda/worker", "INFO", "schedule created", `{"msg":"schedule created","key":"user-1/01JD"}`),
		opstest.Line("2030-01-01 12:00:00.000", "/aws/lambda/expiry", "INFO", "expiry", `{"msg":"expiry","key":"user-1/other"}`),
	}}
	f.World.Logs, f.World.PollEvery = logs, time.Millisecond
	got, err := f.World.History(context.Background(), "TasksTable", "pk=user-1,sk=01JD", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Message != "schedule created" || got[0].Group != "/aws/lambda/worker" {
		t.Errorf("history = %+v", got)
	}
	q := aws.ToString(logs.Query.QueryString)
	if !strings.Contains(q, logfield.Key+` = "user-1/01JD"`) {
		t.Errorf("query %q does not filter the key's field", q)
	}
	if len(logs.Query.LogGroupNames) < 4 {
		t.Errorf("log groups %v: want the table's functions (expiry, notify, reconciler, processor, worker)", logs.Query.LogGroupNames)
	}
	if *logs.Query.EndTime-*logs.Query.StartTime != int64((24 * time.Hour).Seconds()) {
		t.Errorf("window %d..%d, want 24 h", *logs.Query.StartTime, *logs.Query.EndTime)
	}
	// A key gone from every table that could hold it: the logs of all of
	// them (the deferred jobs' reconciler's among them).
	if _, err := f.World.History(context.Background(), "", "pk=user-9,sk=gone", 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(logs.Query.LogGroupNames, " "); !strings.Contains(g, "DeferredJobsCoreReconciler") || !strings.Contains(g, "TasksReconciler") {
		t.Errorf("log groups of a key in no table: %s", g)
	}
}

// TestHistoryOfEachTable: each table's query reads the log groups of the
// functions that log its items' keys, its firing's target among them
// (the dispatchers carry no schema), and filters the keys those
// functions log: a send task's own, and its campaign's.
func TestHistoryOfEachTable(t *testing.T) {
	f := opstest.New(t, now, servers(t))
	tests := []struct {
		name, table, key string
		groups           []string // substrings of log groups the query must read
		keys             []string // the keys it must filter
	}{
		{"a future event: its dispatcher's lines", opstest.FutureEventsTable, "pk=ev-1",
			[]string{"FutureEventsHandler", "FutureEventsCoreReconciler"}, []string{"ev-1"}},
		{"a deferred job: its dispatcher's lines", opstest.DeferredJobsTable, "pk=shop-1,sk=2030-01-01T03:00:00Z",
			[]string{"DeferredJobsDispatcher", "DeferredJobsCoreReconciler"}, []string{"shop-1/2030-01-01T03:00:00Z"}},
		{"a send task: its campaign's lines too", opstest.CampaignTable, "pk=C#c1,sk=T#c1-00000",
			[]string{"CampaignsSendFunction", "CampaignsReconcilerFunction"}, []string{"C#c1/T#c1-00000", "C#c1/META"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &opstest.Logs{}
			f.World.Logs, f.World.PollEvery = logs, time.Millisecond
			if _, err := f.World.History(context.Background(), tt.table, tt.key, time.Hour); err != nil {
				t.Fatal(err)
			}
			g := strings.Join(logs.Query.LogGroupNames, " ")
			for _, want := range tt.groups {
				if !strings.Contains(g, want) {
					t.Errorf("log groups %s: want %s's", g, want)
				}
			}
			q := aws.ToString(logs.Query.QueryString)
			for _, k := range tt.keys {
				if !strings.Contains(q, logfield.Key+` = "`+k+`"`) {
					t.Errorf("query %q does not filter %s", q, k)
				}
			}
			if n := strings.Count(q, logfield.Key+" = "); n != len(tt.keys) {
				t.Errorf("query %q filters %d keys, want %d", q, n, len(tt.keys))
			}
		})
	}
}

// TestWhyOnStepFunctions: on the Step Functions timer the entry is the
// item's running execution, and when it was stopped, why says so.
func TestWhyOnStepFunctions(t *testing.T) {
	ctx := context.Background()
	f := opstest.NewOn(t, now, timerspec.StepFunctions, servers(t))
	tb := f.Table(t, opstest.TaskTable)
	if tb.TimerName != "stepfunctions:"+opstest.StateMachine {
		t.Fatalf("timer %q", tb.TimerName)
	}
	tm, err := f.World.Timer(tb)
	if err != nil {
		t.Fatal(err)
	}
	armed := newTask("01JD0000000000000000000051", now.Add(time.Hour))
	stopped := newTask("01JD0000000000000000000052", now.Add(time.Hour))
	for _, tk := range []task.Task{armed, stopped} {
		if err := f.Tasks.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
		if err := tm.Arm(ctx, task.ScheduleFor(tk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tm.Disarm(ctx, task.ScheduleFor(stopped).Name, stopped.DueAt); err != nil {
		t.Fatal(err)
	}
	r, err := f.World.Why(ctx, "", keyText(armed))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != ops.VerdictArmed || r.Entry == nil || r.Entry.Detail != "a running execution of stepfunctions:"+opstest.StateMachine {
		t.Errorf("armed on Step Functions: %s, entry %+v", r.Verdict, r.Entry)
	}
	r, err = f.World.Why(ctx, "", keyText(stopped))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != ops.VerdictMissing || r.Entry != nil || r.EntryNote != "its execution is ABORTED" {
		t.Errorf("stopped execution: %s, entry %+v, note %q", r.Verdict, r.Entry, r.EntryNote)
	}
}
