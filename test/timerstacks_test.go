package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/cancellation"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/todoapp"
)

// timerStack synthesizes a schedule-on-write with an adopter's target on
// the given timer, and the cancellation pipeline on it. The id names the
// props edit sets: tests that pass the same id share one synthesis.
func timerStack(t *testing.T, id string, edit func(p *scheduleonwrite.ScheduleOnWriteProps)) (*synthed, *scheduleonwrite.ScheduleOnWrite) {
	t.Helper()
	timerSows.Lock()
	defer timerSows.Unlock()
	s := shared(t, "timer stack "+id, func() *synthed {
		stack := customStack(t, id)
		var sow *scheduleonwrite.ScheduleOnWrite
		Check(t, func() {
			target := awslambda.Function_FromFunctionArn(stack, jsii.String("Target"), jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:run"))
			p := &scheduleonwrite.ScheduleOnWriteProps{Schema: jobsSchema, Target: target}
			edit(p)
			sow = scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Jobs"), p)
			cancellation.NewCancellation(stack, jsii.String("Pipeline"), &cancellation.CancellationProps{Table: sow.Table, Timer: sow.Timer})
		})
		timerSows.m[id] = sow
		return synthOf(t, stack)
	})
	return s, timerSows.m[id]
}

// timerSows are timerStack's constructs, by id.
var timerSows = struct {
	sync.Mutex
	m map[string]*scheduleonwrite.ScheduleOnWrite
}{m: map[string]*scheduleonwrite.ScheduleOnWrite{}}

func hasAlarmOn(s *synthed, metric string) bool {
	for _, a := range s.Resources("AWS::CloudWatch::Alarm") {
		if Props(a)["MetricName"] == metric {
			return true
		}
	}
	return false
}

func TestTimerStepFunctions(t *testing.T) {
	s, _ := timerStack(t, "LayerSfn", func(p *scheduleonwrite.ScheduleOnWriteProps) { p.Timer = scheduleonwrite.NewStepFunctionsTimer(nil) })
	if n := len(s.Resources("AWS::Scheduler::ScheduleGroup")); n != 0 {
		t.Fatalf("%d schedule groups; the Step Functions timer makes none", n)
	}
	sms := s.Resources("AWS::StepFunctions::StateMachine")
	if len(sms) != 1 {
		t.Fatalf("want one state machine, got %d", len(sms))
	}
	var smID string
	var sm map[string]any
	for id, r := range sms {
		smID, sm = id, Props(r)
	}
	if sm["StateMachineType"] != "STANDARD" {
		t.Fatalf("state machine type %v, want STANDARD (a Wait of up to a year)", sm["StateMachineType"])
	}
	// The definition is a Fn::Join of strings and the function's ARN.
	def := JSON(sm["DefinitionString"])
	for _, want := range []string{
		`\"StartAt\":\"` + timerspec.WaitState + `\"`,
		`\"Type\":\"Wait\",\"TimestampPath\":\"` + timerspec.TimestampPath + `\",\"Next\":\"` + timerspec.FireState + `\"`,
		`arn:`, `:states:::lambda:invoke`, `\"Payload.$\":\"` + timerspec.PayloadPath + `\"`,
		`\"ErrorEquals\":[\"States.ALL\"]`,
	} {
		if !strings.Contains(def, want) {
			t.Fatalf("definition lacks %s:\n%s", want, def)
		}
	}
	if !strings.Contains(def, "JobsFire") {
		t.Fatalf("definition does not invoke the expiry function:\n%s", def)
	}
	// The state machine's role invokes the expiry function only.
	role := sm["RoleArn"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
	for _, st := range s.RoleStatements(role) {
		for _, a := range Actions(st) {
			if strings.HasPrefix(a, "lambda:") {
				if a != "lambda:InvokeFunction" || !strings.Contains(JSON(st["Resource"]), "JobsFire") || strings.Contains(JSON(st["Resource"]), "function:run") {
					t.Fatalf("state machine role may %s on %s; want invoke of the expiry function only", a, JSON(st["Resource"]))
				}
			}
		}
	}
	// The worker starts executions of this state machine, stops/describes
	// only its executions (a cancel stops the execution whose name it
	// derives: no ListExecutions), and has no scheduler rights.
	worker := ActionMap(s.FunctionStatements(t, "PipelineWorker"))
	for a, res := range worker {
		if strings.HasPrefix(a, "scheduler:") || a == "iam:PassRole" {
			t.Fatalf("worker may %s on %s; the Step Functions timer needs no scheduler", a, res)
		}
	}
	if !strings.Contains(worker["states:StartExecution"], smID) {
		t.Fatalf("states:StartExecution on %s, want the state machine %s", worker["states:StartExecution"], smID)
	}
	if res, ok := worker["states:ListExecutions"]; ok {
		t.Fatalf("worker may states:ListExecutions on %s; a cancel needs no listing", res)
	}
	for _, a := range []string{"states:StopExecution", "states:DescribeExecution"} {
		if !strings.Contains(worker[a], ":execution:") || !strings.Contains(worker[a], smID) || !strings.Contains(worker[a], `:*`) {
			t.Fatalf("%s on %s, want the state machine's executions only", a, worker[a])
		}
	}
	env := JSON(Props(s.Resources("AWS::Lambda::Function")[s.LogicalID(t, "AWS::Lambda::Function", "PipelineWorker")])["Environment"])
	if !strings.Contains(env, `"`+envvars.TimerKind+`": "StepFunctions"`) || !strings.Contains(env, "STATE_MACHINE_ARN") {
		t.Fatalf("worker environment lacks the timer and state machine: %s", env)
	}
	if !hasAlarmOn(s, "ExecutionsFailed") {
		t.Fatal("no alarm on failed executions")
	}
}

func TestTimerTTL(t *testing.T) {
	s, _ := timerStack(t, "LayerTTL", func(p *scheduleonwrite.ScheduleOnWriteProps) {
		p.Timer = scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{
			MaxLateness:  awscdk.Duration_Days(jsii.Number(3)),
			TTLBatchSize: jsii.Number(50), TTLParallelizationFactor: jsii.Number(4), TTLMaxConcurrency: jsii.Number(8),
		})
	})
	for _, typ := range []string{"AWS::Scheduler::ScheduleGroup", "AWS::StepFunctions::StateMachine"} {
		if n := len(s.Resources(typ)); n != 0 {
			t.Fatalf("%d %s; the TTL timer makes none", n, typ)
		}
	}
	for _, tbl := range s.Resources("AWS::DynamoDB::Table") {
		ttl := Props(tbl)["TimeToLiveSpecification"]
		if JSON(ttl) != JSON(map[string]any{"AttributeName": timerspec.DefaultTTLAttr, "Enabled": true}) {
			t.Fatalf("table TTL %s, want %s enabled", JSON(ttl), timerspec.DefaultTTLAttr)
		}
	}
	expiry := s.LogicalID(t, "AWS::Lambda::Function", "JobsFire")
	if rc := Props(s.Resources("AWS::Lambda::Function")[expiry])["ReservedConcurrentExecutions"]; rc != 8.0 {
		t.Fatalf("expiry reserved concurrency %v, want TTLMaxConcurrency 8", rc)
	}
	var ttlMapping map[string]any
	for _, m := range s.Resources("AWS::Lambda::EventSourceMapping") {
		if JSON(Props(m)["FunctionName"]) == JSON(map[string]any{"Ref": expiry}) {
			ttlMapping = Props(m)
		}
	}
	if ttlMapping == nil {
		t.Fatal("no event source mapping on the expiry function")
	}
	if ttlMapping["BatchSize"] != 50.0 || ttlMapping["ParallelizationFactor"] != 4.0 ||
		JSON(ttlMapping["FunctionResponseTypes"]) != JSON([]string{"ReportBatchItemFailures"}) || ttlMapping["BisectBatchOnFunctionError"] != true {
		t.Fatalf("mapping %s: want batch 50, parallelization 4, batch item failures, bisect", JSON(ttlMapping))
	}
	if ttlMapping["DestinationConfig"] == nil {
		t.Fatal("the TTL mapping has no on-failure destination")
	}
	filters := ttlMapping["FilterCriteria"].(map[string]any)["Filters"].([]any)
	if len(filters) != 1 {
		t.Fatalf("filters %s, want one", JSON(filters))
	}
	var got, want any
	_ = json.Unmarshal([]byte(filters[0].(map[string]any)["Pattern"].(string)), &got)
	_ = json.Unmarshal([]byte(timerspec.TTLFilterPattern()), &want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("filter %s, want the pattern the handler test evaluates %s", JSON(got), timerspec.TTLFilterPattern())
	}
	if !strings.Contains(JSON(got), `"principalId": [`) || !strings.Contains(JSON(got), "dynamodb.amazonaws.com") {
		t.Fatalf("filter %s does not keep TTL deletions only", JSON(got))
	}
	// The worker puts and deletes markers on the table; no scheduler.
	worker := ActionMap(s.FunctionStatements(t, "PipelineWorker"))
	for a := range worker {
		if strings.HasPrefix(a, "scheduler:") || strings.HasPrefix(a, "states:") || a == "iam:PassRole" {
			t.Fatalf("worker may %s; the TTL timer needs only the table", a)
		}
	}
	if worker["dynamodb:PutItem"] == "" || worker["dynamodb:DeleteItem"] == "" {
		t.Fatalf("worker grants %v lack PutItem/DeleteItem of markers", worker)
	}
	if !hasAlarmOn(s, metrics.TTLDispatchFailed) {
		t.Fatal("no alarm on failed TTL dispatch")
	}
}

func TestTimerValidation(t *testing.T) {
	type props = scheduleonwrite.ScheduleOnWriteProps
	for i, tc := range []struct {
		name string
		edit func(p *props)
		want []string
	}{
		{"TTL without MaxLateness", func(p *props) { p.Timer = scheduleonwrite.NewTTLTimer(nil) },
			[]string{"set MaxLateness", "48h"}},
		{"TTL finer than its precision", func(p *props) {
			p.Timer = scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: awscdk.Duration_Hours(jsii.Number(1))})
		}, []string{"coarser than MaxLateness 1h0m0s", "StepFunctions"}},
		// TTL props on another timer, or an unknown timer, no longer
		// compile: each timer has its own props struct.
		{"parallelization beyond Lambda's", func(p *props) {
			p.Timer = scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{
				MaxLateness: awscdk.Duration_Days(jsii.Number(2)), TTLParallelizationFactor: jsii.Number(11)})
		}, []string{"TTLParallelizationFactor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stack := customStack(t, fmt.Sprint("LayerValidation", i))
			target := awslambda.Function_FromFunctionArn(stack, jsii.String("Target"), jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:run"))
			p := &props{Target: target}
			tc.edit(p)
			WantPanic(t, func() { scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Jobs"), p) }, tc.want...)
		})
	}
}

// TestTimerNag applies the AwsSolutions pack as app.go does to a stack
// with each timer: no unsuppressed finding.
func TestTimerNag(t *testing.T) {
	var findings []string
	Check(t, func() {
		app := NewApp(t, map[string]any{"aws:cdk:bundling-stacks": []string{}})
		stack := awscdk.NewStack(app, jsii.String("LayerNag"), nil)
		for _, tc := range []struct {
			id   string
			edit func(p *scheduleonwrite.ScheduleOnWriteProps)
		}{
			{"Sfn", func(p *scheduleonwrite.ScheduleOnWriteProps) { p.Timer = scheduleonwrite.NewStepFunctionsTimer(nil) }},
			{"Ttl", func(p *scheduleonwrite.ScheduleOnWriteProps) {
				p.Timer = scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: awscdk.Duration_Days(jsii.Number(2))})
			}},
		} {
			target := awslambda.Function_FromFunctionArn(stack, jsii.String(tc.id+"Target"), jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:run"))
			p := &scheduleonwrite.ScheduleOnWriteProps{Schema: jobsSchema, Target: target}
			tc.edit(p)
			sow := scheduleonwrite.NewScheduleOnWrite(stack, jsii.String(tc.id), p)
			cancellation.NewCancellation(stack, jsii.String(tc.id+"Pipeline"), &cancellation.CancellationProps{Table: sow.Table, Timer: sow.Timer})
		}
		todoapp.AddChecks(app)
		findings = NagFindings(stack)
	})
	if len(findings) > 0 {
		t.Fatalf("%d unsuppressed cdk-nag findings:\n%s", len(findings), strings.Join(findings, "\n"))
	}
}

// TestTimerTemplatesPassCfnLint lints the Step Functions and TTL timers'
// templates with cfn-lint, as TestTemplatesPassCfnLint does the app's.
func TestTimerTemplatesPassCfnLint(t *testing.T) {
	bin := cfnLint(t)
	var ignore []string
	for id := range cfnLintIgnored {
		ignore = append(ignore, id)
	}
	sort.Strings(ignore)
	dir := t.TempDir()
	var files []string
	for name, edit := range map[string]func(p *scheduleonwrite.ScheduleOnWriteProps){
		// The same props as TestTimerStepFunctions: its synthesis is shared.
		"LayerSfn": func(p *scheduleonwrite.ScheduleOnWriteProps) { p.Timer = scheduleonwrite.NewStepFunctionsTimer(nil) },
		"LintTtl": func(p *scheduleonwrite.ScheduleOnWriteProps) {
			p.Timer = scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{
				MaxLateness: awscdk.Duration_Days(jsii.Number(2)), TTLMaxConcurrency: jsii.Number(5)})
		},
	} {
		s, _ := timerStack(t, name, edit)
		b, err := json.MarshalIndent(s.json, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name+".template.json")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	sort.Strings(files)
	args := append([]string{"--format", "parseable", "--ignore-checks", strings.Join(ignore, ","), "--"}, files...)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("cfn-lint on %d templates: %v\n%s", len(files), err, out)
	}
}
