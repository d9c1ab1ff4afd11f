package ops_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntest"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/ops"
	"github.com/unschedule/unschedule/internal/ops/opstest"
	"github.com/unschedule/unschedule/internal/todo/task"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the output")

// cliNow is fixed, so the human output is the same on every run.
var cliNow = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

func cliTask(id string, due time.Time) task.Task {
	return task.Task{UserID: "user-1", TaskID: id, Title: "t", Status: task.StatusPending, DueAt: due, ScheduleToken: "tok",
		CreatedAt: cliNow.Add(-3 * time.Hour), UpdatedAt: cliNow.Add(-3 * time.Hour)}
}

var (
	cliArmed  = cliTask("01JD0000000000000000000001", cliNow.Add(time.Hour))
	cliLost   = cliTask("01JD0000000000000000000002", cliNow.Add(time.Hour))
	cliOrphan = cliTask("01JD0000000000000000000003", cliNow.Add(time.Hour))
	cliStale  = cliTask("01JD0000000000000000000004", cliNow.Add(-time.Hour))
)

// cliWorld is the fixture stack with a lost schedule, an orphaned one, a
// claimed but undelivered task, a poisoned FIFO message and a scheduler
// dead letter.
func cliWorld(t *testing.T) *opstest.Fixture {
	t.Helper()
	ctx := context.Background()
	f := opstest.New(t, cliNow, servers(t))
	tm, err := f.World.Timer(f.Table(t, opstest.TaskTable))
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range []task.Task{cliArmed, cliLost, cliStale} {
		if err := f.Tasks.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	for _, tk := range []task.Task{cliArmed, cliOrphan} {
		if err := tm.Arm(ctx, task.ScheduleFor(tk)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Tasks.Expire(ctx, cliStale.UserID, cliStale.TaskID, cliStale.DueAt, cliNow.Add(-50*time.Minute)); err != nil {
		t.Fatal(err)
	}
	sendTo(t, f, f.Queue(t, ops.QueueDeadLetters), "{not json", "poison-group", "poison")
	msg, _ := json.Marshal(cancel.Message{Action: cancel.ActionSchedule, Partition: cliLost.UserID, Sort: cliLost.TaskID, DueAt: cliLost.DueAt, EventID: "ev-1"})
	sendTo(t, f, f.Queue(t, ops.QueueDeadLetters), string(msg), "user-1/"+cliLost.TaskID, "user-1/"+cliLost.TaskID+"-ev-1")
	sendTo(t, f, f.Queue(t, ops.QueueSchedulerDeadLetters), task.Schema.EncodePayload(task.ScheduleFor(cliStale).Payload), "", "")
	sendTo(t, f, f.Queue(t, ops.QueueStreamFailures), opstest.StreamFailure("shardId-0001", "100", "101"), "", "")
	// The deferred jobs' table on the TTL timer: a job with its marker,
	// one without, one overdue (the future events' table, on Step
	// Functions, is tested in tables_test.go: its executions are refused
	// a year past the real clock, and this one is fixed in 2030).
	f.Arm(t, opstest.DeferredJobsTable, jobMarked, cliNow.Add(time.Hour), true)
	f.Arm(t, opstest.DeferredJobsTable, jobUnmarked, cliNow.Add(time.Hour), false)
	f.Arm(t, opstest.DeferredJobsTable, jobLate, cliNow.Add(-time.Hour), true)
	// A cancelled campaign whose task is still Pending and armed (a
	// cancel that stopped midway): the campaign's rules finish it.
	c, tasks := campaigntest.CampaignFixture(t, "c9", 1, campaigntest.CampaignT0)
	c.Status = campaign.CampaignCancelled
	tasks[0].SchedulerRequestToken = "token-c9" // Build's is random; the golden file is not
	f.Campaign(t, c, tasks)
	k := campaign.ItemKey(tasks[0].Key())
	campaignTask = "pk=" + k.Partition + ",sk=" + k.Sort
	return f
}

// campaignTask is cliWorld's cancelled campaign's task, as why reads it.
var campaignTask string

var (
	jobMarked   = contract.Key{Partition: "tenant-1", Sort: "2030-01-06T03:00:00Z"}
	jobUnmarked = contract.Key{Partition: "tenant-2", Sort: "2030-01-06T03:00:00Z"}
	jobLate     = contract.Key{Partition: "tenant-3", Sort: "2029-12-30T03:00:00Z"}
)

func keyArg(k contract.Key) string { return "pk=" + k.Partition + ",sk=" + k.Sort }

func sendTo(t *testing.T, f *opstest.Fixture, q ops.Queue, body, group, dedup string) {
	t.Helper()
	in := &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(body)}
	if group != "" {
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(group), aws.String(dedup)
	}
	if _, err := f.SQS.SendMessage(context.Background(), in); err != nil {
		t.Fatal(err)
	}
}

// cli runs the command on the fixture and returns stdout and the exit
// code.
func cli(t *testing.T, f *opstest.Fixture, args ...string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	open := func(_ context.Context, stack string) (*ops.World, error) {
		if stack != opstest.StackName {
			return nil, fmt.Errorf("no stack %s", stack)
		}
		return f.World, nil
	}
	code := ops.Run(context.Background(), append(args, "--quiet"), &out, &errb, open)
	if code == ops.ExitError {
		t.Logf("stderr: %s", errb.String())
	}
	return out.String(), code
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/ops -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test ./internal/ops -update rewrites it):\n%s", name, path, got)
	}
}

func TestCommands(t *testing.T) {
	f := cliWorld(t)
	st := "--stack=" + opstest.StackName
	tests := []struct {
		name   string
		args   []string
		code   int
		schema string
	}{
		{"why_armed", []string{"why", st, "--user", "user-1", "--task", cliArmed.TaskID}, ops.ExitOK, ""},
		{"why_missing", []string{"why", st, "pk=user-1,sk=" + cliLost.TaskID}, ops.ExitProblem, ""},
		{"why_orphaned", []string{"why", st, "userId=user-1,taskId=" + cliOrphan.TaskID}, ops.ExitProblem, ""},
		{"why_undelivered", []string{"why", st, "pk=user-1,sk=" + cliStale.TaskID}, ops.ExitProblem, ""},
		{"why_missing_json", []string{"why", st, "--json", "pk=user-1,sk=" + cliLost.TaskID}, ops.ExitProblem, "why"},
		{"why_ttl_marker", []string{"why", st, keyArg(jobMarked)}, ops.ExitOK, ""},
		{"why_ttl_missing", []string{"why", st, keyArg(jobUnmarked)}, ops.ExitProblem, ""},
		{"why_ttl_overdue", []string{"why", st, "--table", "DeferredJobsTable", keyArg(jobLate)}, ops.ExitProblem, ""},
		{"why_ttl_overdue_json", []string{"why", st, "--json", keyArg(jobLate)}, ops.ExitProblem, "why"},
		{"drift_ttl", []string{"drift", st, "--table", "DeferredJobsTable"}, ops.ExitProblem, ""},
		{"why_campaign_rules", []string{"why", st, campaignTask}, ops.ExitProblem, ""},
		{"why_campaign_rules_json", []string{"why", st, "--json", campaignTask}, ops.ExitProblem, "why"},
		{"drift", []string{"drift", st}, ops.ExitProblem, ""},
		{"drift_json", []string{"drift", st, "--json"}, ops.ExitProblem, "drift"},
		{"dlq_list", []string{"dlq", "list", st}, ops.ExitOK, ""},
		{"dlq_list_json", []string{"dlq", "list", st, "--json"}, ops.ExitOK, "dlq"},
		{"dlq_redrive_dry", []string{"dlq", "redrive", st, "--dry-run"}, ops.ExitProblem, ""}, // the poisoned message would stay
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := cli(t, f, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; output:\n%s", code, tt.code, out)
			}
			if tt.schema == "" {
				golden(t, tt.name, out)
				return
			}
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			if errs := validate(t, loadSchema(t, tt.schema), v, "$"); len(errs) > 0 {
				t.Errorf("--json output breaks cmd/unschedule/schema/%s.schema.json:\n%s\n%s", tt.schema, strings.Join(errs, "\n"), out)
			}
		})
	}
	// --table names a table of the stack; a key two tables hold needs it.
	if _, code := cli(t, f, "why", st, "--table", "Nope", keyArg(jobMarked)); code != ops.ExitUsage {
		t.Errorf("why --table Nope: exit %d, want %d", code, ops.ExitUsage)
	}
}

// TestWhyLogs: --logs adds the item's history from the functions' logs.
func TestWhyLogs(t *testing.T) {
	f := cliWorld(t)
	raw := `{"level":"INFO","msg":"schedule created","key":"user-1/` + cliArmed.TaskID + `"}`
	f.World.Logs = &opstest.Logs{Lines: [][]cwtypes.ResultField{
		opstest.Line("2030-01-01 09:00:01.000", "/aws/lambda/Unschedule-test-CancellationWorker", "INFO", "schedule created", raw)}}
	out, code := cli(t, f, "why", "--stack", opstest.StackName, "--logs", "pk=user-1,sk="+cliArmed.TaskID)
	if code != ops.ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	golden(t, "why_logs", out)
	out, _ = cli(t, f, "why", "--stack", opstest.StackName, "--logs", "--json", "pk=user-1,sk="+cliArmed.TaskID)
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if errs := validate(t, loadSchema(t, "why"), v, "$"); len(errs) > 0 {
		t.Errorf("why --logs --json breaks the schema: %v", errs)
	}
}

// TestProgress: without --quiet, a long command says on stderr how far it
// is, and ends its line; stdout holds the report alone.
func TestProgress(t *testing.T) {
	f := cliWorld(t)
	var out, errb bytes.Buffer
	code := ops.Run(context.Background(), []string{"drift", "--stack", opstest.StackName}, &out, &errb,
		func(context.Context, string) (*ops.World, error) { return f.World, nil })
	if code != ops.ExitProblem {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if e := errb.String(); !strings.Contains(e, "timer entries read") || !strings.HasSuffix(e, "\n") {
		t.Errorf("stderr %q: want the pass's progress, ended", e)
	}
	if strings.Contains(out.String(), "\r") {
		t.Errorf("progress on stdout: %q", out.String())
	}
}

func TestUsageAndErrors(t *testing.T) {
	f := &opstest.Fixture{}
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no stack", []string{"drift"}, ops.ExitUsage},
		{"unknown command", []string{"frobnicate"}, ops.ExitUsage},
		{"why without a key", []string{"why", "--stack", "x"}, ops.ExitUsage},
		{"why with a bad key", []string{"why", "--stack", "x", "--user", "u"}, ops.ExitUsage},
		{"unknown stack", []string{"dlq", "list", "--stack", "Nope"}, ops.ExitError},
		{"help", []string{"--help"}, ops.ExitOK},
		{"--logs on make dev", []string{"why", "--dev", "http://127.0.0.1:1", "--logs", "pk=a,sk=b"}, ops.ExitUsage},
		{"--stack and --dev", []string{"drift", "--dev", "http://127.0.0.1:1", "--stack", "x"}, ops.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, code := cli(t, f, tt.args...); code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
		})
	}
}

// The redrive end to end: the dead letters go where they belong, and a
// second redrive finds nothing.
func TestRedriveCommand(t *testing.T) {
	f := cliWorld(t)
	out, code := cli(t, f, "dlq", "redrive", "--stack", opstest.StackName)
	// The poisoned message is kept for the operator: exit 3, not 0.
	if code != ops.ExitProblem {
		t.Fatalf("exit %d, want %d (a poisoned message was kept):\n%s", code, ops.ExitProblem, out)
	}
	golden(t, "dlq_redrive", out)
	// The stream failure's repair pass delivers the undelivered task; the
	// scheduler dead letter invokes the firing function again (its claim
	// absorbs the second); the stream record is gone after its pass.
	if len(f.Invoked.Calls) != 2 {
		t.Errorf("%d invokes, want 2 (the repair's delivery and the scheduler dead letter)", len(f.Invoked.Calls))
	}
	if n := f.Count(t, f.Queue(t, ops.QueueStreamFailures)); n != 0 {
		t.Errorf("%d stream failure records left after their repair, want 0", n)
	}
	// The poisoned message stays; the readable one went back.
	if f.Count(t, f.Queue(t, ops.QueueDeadLetters)) != 1 || f.Count(t, f.Queue(t, ops.QueueWork)) != 1 {
		t.Errorf("dead letters %d, work queue %d; want 1 and 1", f.Count(t, f.Queue(t, ops.QueueDeadLetters)), f.Count(t, f.Queue(t, ops.QueueWork)))
	}
	if out, _ := cli(t, f, "dlq", "list", "--stack", opstest.StackName); !strings.Contains(out, "1 message(s)") {
		t.Errorf("after the redrive:\n%s", out)
	}
}

// A re-send that fails keeps its message and makes the command fail, so
// a script that redrives does not take a partial redrive for done.
func TestRedriveFailureExitsNonZero(t *testing.T) {
	f := cliWorld(t)
	f.Invoked.Fail = errors.New("function is throttled")
	out, code := cli(t, f, "dlq", "redrive", "--stack", opstest.StackName)
	if code != ops.ExitError {
		t.Fatalf("exit %d, want %d when an invoke failed:\n%s", code, ops.ExitError, out)
	}
	if !strings.Contains(out, "failed:") {
		t.Errorf("the failed message is not reported:\n%s", out)
	}
	f.Invoked.Fail = nil
	if _, code := cli(t, f, "dlq", "redrive", "--stack", opstest.StackName); code != ops.ExitProblem {
		t.Errorf("second redrive exit %d, want %d (only the poisoned message left)", code, ops.ExitProblem)
	}
	if len(f.Invoked.Calls) == 0 {
		t.Error("the kept messages were not invoked on the second redrive")
	}
}

func TestCampaignsCancel(t *testing.T) {
	f := opstest.New(t, campaigntest.CampaignT0, servers(t))
	c, tasks := campaigntest.CampaignFixture(t, "c1", 3, campaigntest.CampaignT0)
	f.Campaign(t, c, tasks)
	st := "--stack=" + opstest.StackName
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"campaigns_cancel_dry", []string{"campaigns", "cancel", st, "--owner", "owner-1", "--dry-run"}},
		{"campaigns_cancel", []string{"campaigns", "cancel", st, "--owner", "owner-1"}},
	} {
		out, code := cli(t, f, tt.args...)
		if code != ops.ExitOK {
			t.Fatalf("%s: exit %d\n%s", tt.name, code, out)
		}
		golden(t, tt.name, out)
	}
	if _, code := cli(t, f, "campaigns", "cancel", st); code != ops.ExitUsage {
		t.Errorf("without --owner: exit %d, want %d", code, ops.ExitUsage)
	}
}

// schemaDir holds the --json output's schemas, published beside the
// command's README for scripts.
var schemaDir = filepath.Join("..", "..", "cmd", "unschedule", "schema")

// A small checker of the JSON Schema keywords the schema files use:
// type, enum, properties, required, additionalProperties, items and
// $ref to a sibling file (name.schema.json).
func loadSchema(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(schemaDir, name+".schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	return s
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func validate(t *testing.T, s map[string]any, v any, at string) []string {
	t.Helper()
	if ref, ok := s["$ref"].(string); ok {
		return validate(t, loadSchema(t, ref), v, at)
	}
	var errs []string
	if ty, ok := s["type"]; ok {
		var want []string
		switch x := ty.(type) {
		case string:
			want = []string{x}
		case []any:
			for _, w := range x {
				want = append(want, w.(string))
			}
		}
		got := typeOf(v)
		if !slices.Contains(want, got) && !(got == "integer" && slices.Contains(want, "number")) {
			return []string{fmt.Sprintf("%s: %s, want %v", at, got, want)}
		}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		errs = append(errs, fmt.Sprintf("%s: %v is not one of %v", at, v, enum))
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := x[r]; !ok {
				errs = append(errs, fmt.Sprintf("%s: %s is required", at, r))
			}
		}
		for k, val := range x {
			if p, ok := props[k].(map[string]any); ok {
				errs = append(errs, validate(t, p, val, at+"."+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					errs = append(errs, fmt.Sprintf("%s: %s is not in the schema", at, k))
				}
			case map[string]any:
				errs = append(errs, validate(t, ap, val, at+"."+k)...)
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range x {
				errs = append(errs, validate(t, items, e, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return errs
}

func asStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		out = append(out, x.(string))
	}
	return out
}
