package ops_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/ops"
	"github.com/unschedule/unschedule/internal/ops/opstest"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// driftWorld holds a lost schedule, an orphaned one and a claimed but
// undelivered task.
func driftWorld(t *testing.T) *opstest.Fixture {
	t.Helper()
	ctx := context.Background()
	f := opstest.New(t, now, servers(t))
	tm, err := f.World.Timer(f.Table(t, opstest.TaskTable))
	if err != nil {
		t.Fatal(err)
	}
	lost := newTask("01JD0000000000000000000011", now.Add(time.Hour))
	orphan := newTask("01JD0000000000000000000012", now.Add(time.Hour))
	stale := newTask("01JD0000000000000000000013", now.Add(-time.Hour))
	for _, tk := range []task.Task{lost, stale} {
		if err := f.Tasks.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := tm.Arm(ctx, task.ScheduleFor(orphan)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tasks.Expire(ctx, stale.UserID, stale.TaskID, stale.DueAt, now.Add(-50*time.Minute)); err != nil {
		t.Fatal(err)
	}
	return f
}

func counts(rs []ops.DriftReport) map[reconcile.DriftKind]int {
	out := map[reconcile.DriftKind]int{}
	for _, r := range rs {
		for _, k := range r.Kinds {
			if k.Count > 0 {
				out[k.Kind] = k.Count
			}
		}
	}
	return out
}

func TestDriftThenRepair(t *testing.T) {
	ctx := context.Background()
	f := driftWorld(t)
	var progress []string
	f.World.Progress = func(_, _ int, what string) { progress = append(progress, what) }
	rs, err := f.World.Drift(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[reconcile.DriftKind]int{reconcile.DriftMissing: 1, reconcile.DriftOrphaned: 1, reconcile.DriftUndelivered: 1}
	if got := counts(rs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("drift = %v, want %v", got, want)
	}
	// The plan acted on nothing: the same drift again.
	if again, _ := f.World.Drift(ctx, "", ""); fmt.Sprint(counts(again)) != fmt.Sprint(want) {
		t.Fatalf("drift after a plan = %v, want %v", counts(again), want)
	}
	if !slices.ContainsFunc(progress, func(s string) bool { return strings.Contains(s, "items") && strings.Contains(s, "timer entries read") }) {
		t.Errorf("no progress of the pass's reads: %v", progress)
	}
	// One key first: only that one is repaired, and its schedule recorded
	// as confirmed on the task (the store's marks, as the function does).
	one, err := f.World.Repair(ctx, "", "pk=user-1,sk=01JD0000000000000000000011")
	if err != nil {
		t.Fatal(err)
	}
	if r := one[0].Repaired; r == nil || r.SchedulesCreated != 1 || r.SchedulesConfirmed != 1 {
		t.Errorf("repair of one key = %+v, want 1 created and confirmed", r)
	}
	delete(want, reconcile.DriftMissing)
	if got, _ := f.World.Drift(ctx, "", ""); fmt.Sprint(counts(got)) != fmt.Sprint(want) {
		t.Fatalf("drift after repairing one key = %v, want %v", counts(got), want)
	}
	rep, err := f.World.Repair(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rep, func(r ops.DriftReport) bool { return r.Table == opstest.TaskTable })
	if len(rep) != len(f.World.Stack.Tables) || i < 0 || rep[i].Repaired == nil || rep[i].Repaired.Repaired() != 2 {
		t.Fatalf("repair = %+v, want 2 repairs of the task table, and a pass over each table", rep)
	}
	if len(f.Invoked.Calls) != 1 {
		t.Errorf("%d invokes of the firing function, want 1 (the undelivered task)", len(f.Invoked.Calls))
	}
	if got, _ := f.World.Drift(ctx, "", ""); len(counts(got)) != 0 {
		t.Fatalf("drift after a repair = %v, want none", counts(got))
	}
}

func TestDeadLetters(t *testing.T) {
	ctx := context.Background()
	f := opstest.New(t, now, servers(t))
	dlq, sdlq := f.Queue(t, ops.QueueDeadLetters), f.Queue(t, ops.QueueSchedulerDeadLetters)
	send(t, f, dlq, "not json", "g0", "poison", nil)
	tk := newTask("01JD0000000000000000000021", now.Add(-time.Hour))
	send(t, f, sdlq, task.Schema.EncodePayload(task.ScheduleFor(tk).Payload), "", "", map[string]string{
		"ERROR_CODE": "Lambda.TooManyRequestsException", "ERROR_MESSAGE": "Rate exceeded"})
	ls, err := f.World.DeadLetters(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 {
		t.Fatalf("letters = %+v, want 2", ls)
	}
	for _, l := range ls {
		switch l.Kind {
		case ops.QueueDeadLetters:
			if l.Key != "" || l.Reason == "" {
				t.Errorf("poisoned letter = %+v", l)
			}
		case ops.QueueSchedulerDeadLetters:
			if l.Key != "user-1/"+tk.TaskID || l.Reason != "Lambda.TooManyRequestsException: Rate exceeded" {
				t.Errorf("scheduler dead letter = %+v", l)
			}
		}
	}
	// A dry run moves nothing; a redrive invokes the firing function with
	// the payload and keeps nothing it re-sent.
	if _, err := f.World.Redrive(ctx, true, 100); err != nil {
		t.Fatal(err)
	}
	if f.Count(t, sdlq) != 1 || len(f.Invoked.Calls) != 0 {
		t.Fatal("a dry run moved a message")
	}
	if _, err := f.World.Redrive(ctx, false, 100); err != nil {
		t.Fatal(err)
	}
	if f.Count(t, sdlq) != 0 || len(f.Invoked.Calls) != 1 || string(f.Invoked.Calls[0].Payload) != task.Schema.EncodePayload(task.ScheduleFor(tk).Payload) {
		t.Errorf("scheduler dead letters left %d, invokes %+v", f.Count(t, sdlq), f.Invoked.Calls)
	}
}

// crashing stops answering after n deletes, as a redrive killed between
// a re-send and its delete.
type crashing struct {
	ops.SQS
	deletes int
}

var errCrash = errors.New("killed")

func (c *crashing) DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, o ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	if c.deletes == 0 {
		return nil, errCrash
	}
	c.deletes--
	return c.SQS.DeleteMessage(ctx, in, o...)
}

func (c *crashing) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, o ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	if c.deletes == 0 {
		return nil, errCrash
	}
	return c.SQS.ReceiveMessage(ctx, in, o...)
}

func TestRedriveInterruptedAndRunAgain(t *testing.T) {
	ctx := context.Background()
	f := opstest.New(t, now, servers(t))
	f.World.Visibility = 1
	dlq, work := f.Queue(t, ops.QueueDeadLetters), f.Queue(t, ops.QueueWork)
	const n = 6
	for i := range n {
		id := fmt.Sprintf("01JD00000000000000000001%02d", i)
		sendJSON(t, f, dlq, cancel.Message{Action: cancel.ActionCancel, Partition: "user-1", Sort: id, EventID: fmt.Sprintf("e%d", i)}, "user-1/"+id)
	}
	real := f.World.SQS
	f.World.SQS = &crashing{SQS: real, deletes: 3}
	if _, err := f.World.Redrive(ctx, false, 100); !errors.Is(err, errCrash) {
		t.Fatalf("interrupted redrive = %v, want the crash", err)
	}
	f.World.SQS = real
	time.Sleep(1500 * time.Millisecond) // the in-flight messages reappear
	rs, err := f.World.Redrive(ctx, false, 100)
	if err != nil {
		t.Fatal(err)
	}
	if f.Count(t, dlq) != 0 {
		t.Errorf("%d messages left in the dead-letter queue after %d redriven", f.Count(t, dlq), len(rs))
	}
	// Every message once in the work queue: the re-sends of the
	// interrupted run were deduplicated by their ids.
	seen := map[string]int{}
	for {
		out, err := real.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &work.URL, MaxNumberOfMessages: 10, VisibilityTimeout: 60})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			seen[*m.Body]++
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct messages in the work queue, want %d", len(seen), n)
	}
	for b, c := range seen {
		if c != 1 {
			t.Errorf("%s in the work queue %d times", b, c)
		}
	}
}

// TestRedriveStreamFailures: a stream failure record names no item, so a
// redrive answers it with one repair pass over the stream's table and
// deletes it only after that pass succeeded; a dry run says so and
// changes nothing; a pass that fails keeps the records.
func TestRedriveStreamFailures(t *testing.T) {
	ctx := context.Background()
	f := driftWorld(t)
	sq := f.Queue(t, ops.QueueStreamFailures)
	send(t, f, sq, opstest.StreamFailure("shardId-0001", "100", "101"), "", "", nil)
	send(t, f, sq, opstest.StreamFailure("shardId-0001", "102", "103"), "", "", nil)
	drift := map[reconcile.DriftKind]int{reconcile.DriftMissing: 1, reconcile.DriftOrphaned: 1, reconcile.DriftUndelivered: 1}
	streamActions := func(rs []ops.Redriven) []string {
		var out []string
		for _, r := range rs {
			if r.Kind == ops.QueueStreamFailures {
				out = append(out, r.Action)
			}
		}
		return out
	}
	check := func(t *testing.T, rs []ops.Redriven, action string, left int, driftLeft map[reconcile.DriftKind]int) {
		t.Helper()
		got := streamActions(rs)
		if len(got) != 2 || !strings.HasPrefix(got[0], action) || !strings.HasPrefix(got[1], action) {
			t.Errorf("stream failure actions = %q, want 2 starting %q", got, action)
		}
		if n := f.Count(t, sq); n != left {
			t.Errorf("%d stream failure records left, want %d", n, left)
		}
		d, err := f.World.Drift(ctx, opstest.TaskTable, "")
		if err != nil {
			t.Fatal(err)
		}
		if !sameCounts(counts(d), driftLeft) {
			t.Errorf("drift of the task table = %v, want %v", counts(d), driftLeft)
		}
	}

	rs, err := f.World.Redrive(ctx, true, 100)
	if err != nil {
		t.Fatal(err)
	}
	check(t, rs, "would repair "+opstest.TaskTable+" (one drift --repair pass), then delete", 2, drift)

	// The target cannot be reached: the pass fails to deliver the
	// undelivered task, so the records are kept, visible.
	f.Invoked.Fail = errors.New("throttled")
	rs, err = f.World.Redrive(ctx, false, 100)
	if err != nil {
		t.Fatal(err)
	}
	check(t, rs, "failed: repair of "+opstest.TaskTable, 2, map[reconcile.DriftKind]int{reconcile.DriftUndelivered: 1})
	if ls, _ := f.World.DeadLetters(ctx, 100); len(ls) != 2 {
		t.Errorf("after a failed pass %d records are visible, want 2", len(ls))
	}

	// The failed attempt holds the claim for its lease (60 s): later, the
	// next pass takes it over and delivers.
	f.Invoked.Fail = nil
	f.World.Now = func() time.Time { return now.Add(2 * time.Minute) }
	rs, err = f.World.Redrive(ctx, false, 100)
	if err != nil {
		t.Fatal(err)
	}
	check(t, rs, "repaired "+opstest.TaskTable+" (1 repairs), deleted", 0, map[reconcile.DriftKind]int{})
}

// A repair fires an undelivered task as the reconciler does: through the
// firing function when the target runs inside it (FireEntry: the to-do
// stack's FIRE_FUNCTION_ARN, invoked synchronously, which claims and
// delivers), else by claiming it here and invoking the target
// (TARGET_FUNCTION_ARN). Either way the task is delivered once.
func TestRepairFiresAsTheReconciler(t *testing.T) {
	const target = "arn:aws:lambda:us-east-1:123456789012:function:target"
	for _, viaTarget := range []bool{false, true} {
		t.Run(fmt.Sprintf("target function %v", viaTarget), func(t *testing.T) {
			ctx := context.Background()
			f := driftWorld(t)
			want := ""
			for i, fn := range f.World.Stack.Functions {
				if !strings.HasPrefix(fn.LogicalID, "TasksReconciler") {
					continue
				}
				want = fn.Env[envvars.FireFunctionArn]
				if viaTarget {
					delete(f.World.Stack.Functions[i].Env, envvars.FireFunctionArn)
					f.World.Stack.Functions[i].Env[envvars.TargetFunctionArn] = target
					want = target
				}
			}
			if want == "" {
				t.Fatal("the fixture's reconciler fires through no function")
			}
			if _, err := f.World.Repair(ctx, opstest.TaskTable, ""); err != nil {
				t.Fatal(err)
			}
			if len(f.Invoked.Calls) != 1 {
				t.Fatalf("%d invokes, want 1 (the undelivered task)", len(f.Invoked.Calls))
			}
			c := f.Invoked.Calls[0]
			if aws.ToString(c.FunctionName) != want || c.InvocationType != lambdatypes.InvocationTypeRequestResponse {
				t.Errorf("invoked %s (%s), want %s, synchronously", aws.ToString(c.FunctionName), c.InvocationType, want)
			}
			if !strings.Contains(string(c.Payload), "01JD0000000000000000000013") {
				t.Errorf("payload %s does not name the undelivered task", c.Payload)
			}
			if got, _ := f.World.Drift(ctx, opstest.TaskTable, ""); len(counts(got)) != 0 {
				t.Errorf("drift after the repair = %v, want none: the task was delivered", counts(got))
			}
		})
	}
}

// waits records each receive's long-poll wait.
type waits struct {
	ops.SQS
	mu  sync.Mutex
	got []int32
}

func (w *waits) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	w.mu.Lock()
	w.got = append(w.got, in.WaitTimeSeconds)
	w.mu.Unlock()
	return w.SQS.ReceiveMessage(ctx, in, opts...)
}

// TestEveryReceiveLongPolls: a short poll may answer empty while
// messages wait, so no read of a failure queue may use one.
func TestEveryReceiveLongPolls(t *testing.T) {
	ctx := context.Background()
	f := opstest.New(t, now, servers(t))
	rec := &waits{SQS: f.World.SQS}
	f.World.SQS = rec
	send(t, f, f.Queue(t, ops.QueueDeadLetters), "not json", "g0", "poison", nil)
	for _, read := range []struct {
		name string
		run  func() error
	}{
		{"dead letters", func() error { _, err := f.World.DeadLetters(ctx, 100); return err }},
		{"redrive dry run", func() error { _, err := f.World.Redrive(ctx, true, 100); return err }},
		{"redrive", func() error { _, err := f.World.Redrive(ctx, false, 100); return err }},
	} {
		rec.got = nil
		if err := read.run(); err != nil {
			t.Fatalf("%s: %v", read.name, err)
		}
		if len(rec.got) == 0 {
			t.Fatalf("%s received nothing", read.name)
		}
		for _, w := range rec.got {
			if w < 1 {
				t.Errorf("%s: a receive with wait %d s, want a long poll (at least 1 s)", read.name, w)
			}
		}
	}
}
