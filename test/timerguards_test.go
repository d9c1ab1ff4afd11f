package test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/cancellation"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// TestTimerGivesEachTimerWhatAppliesToIt: only the Scheduler timer invokes
// the expiry function asynchronously, so only it gets an EventInvokeConfig
// and the alarms on AsyncEventsDropped and DestinationDeliveryFailures;
// the Step Functions timer retries Lambda's transient errors (throttling
// included) with jittered backoff before its catch-all, and alarms on
// failed executions; the TTL timer watches for overdue markers.
func TestTimerGivesEachTimerWhatAppliesToIt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(p *scheduleonwrite.ScheduleOnWriteProps)
		async bool
	}{
		{"Scheduler", func(*scheduleonwrite.ScheduleOnWriteProps) {}, true},
		{"StepFunctions", func(p *scheduleonwrite.ScheduleOnWriteProps) { p.Timer = scheduleonwrite.NewStepFunctionsTimer(nil) }, false},
		{"TTL", func(p *scheduleonwrite.ScheduleOnWriteProps) {
			p.Timer = scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: awscdk.Duration_Days(jsii.Number(3))})
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Without the reconciler, whose own invocation is asynchronous too.
			s, _ := timerStack(t, "Guards"+tc.name, func(p *scheduleonwrite.ScheduleOnWriteProps) { tc.edit(p); p.NoReconciler = true })
			if n := len(s.Resources("AWS::Lambda::EventInvokeConfig")); (n == 1) != tc.async || n > 1 {
				t.Fatalf("%d EventInvokeConfig, want one only on the Scheduler timer (async %v)", n, tc.async)
			}
			for _, m := range []string{"AsyncEventsDropped", "DestinationDeliveryFailures"} {
				if hasAlarmOn(s, m) != tc.async {
					t.Fatalf("alarm on %s: %v, want %v (only the Scheduler timer invokes asynchronously)", m, hasAlarmOn(s, m), tc.async)
				}
			}
			switch tc.name {
			case "StepFunctions":
				assertFireRetries(t, s)
				if !hasAlarmOn(s, "ExecutionsFailed") {
					t.Fatal("no alarm on failed executions")
				}
			case "TTL":
				assertTTLWatch(t, s)
			}
		})
	}
}

// assertFireRetries: the Fire state's first retrier is Lambda's transient
// errors (throttling included), jittered; the second the catch-all.
func assertFireRetries(t *testing.T, s *synthed) {
	t.Helper()
	var sm map[string]any
	for _, r := range s.Resources("AWS::StepFunctions::StateMachine") {
		sm = Props(r)
	}
	var b strings.Builder
	for _, part := range sm["DefinitionString"].(map[string]any)["Fn::Join"].([]any)[1].([]any) {
		if str, ok := part.(string); ok {
			b.WriteString(str)
		} else {
			b.WriteString("ARN")
		}
	}
	var def struct {
		States map[string]struct {
			Retry []struct {
				ErrorEquals     []string
				IntervalSeconds float64
				BackoffRate     float64
				MaxAttempts     float64
				JitterStrategy  string
			}
		}
	}
	if err := json.Unmarshal([]byte(b.String()), &def); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	retry := def.States[timerspec.FireState].Retry
	if len(retry) != 2 {
		t.Fatalf("Fire retriers %s, want the transient one then States.ALL", JSON(retry))
	}
	first := JSON(retry[0].ErrorEquals)
	for _, want := range []string{"Lambda.TooManyRequestsException", "Lambda.ServiceException", "Lambda.AWSLambdaException",
		"Lambda.SdkClientException", "Lambda.ClientExecutionTimeoutException"} {
		if !strings.Contains(first, want) {
			t.Fatalf("first retrier %s lacks %s", first, want)
		}
	}
	if r := retry[0]; r.IntervalSeconds != 2 || r.BackoffRate != 2 || r.MaxAttempts != 10 || r.JitterStrategy != "FULL" {
		t.Fatalf("first retrier %s, want 2 s doubling, 10 attempts, full jitter", JSON(r))
	}
	if r := retry[1]; strings.Join(r.ErrorEquals, ",") != "States.ALL" || r.JitterStrategy != "FULL" || r.MaxAttempts != scheduleonwrite.DefaultStateMachineRetries {
		t.Fatalf("second retrier %s, want States.ALL, jittered", JSON(r))
	}
}

// assertTTLWatch: a scheduled function Queries the markers' partition of
// the table's armed index (Query of that index only, never a Scan) and an
// alarm watches its count of overdue markers.
func assertTTLWatch(t *testing.T, s *synthed) {
	t.Helper()
	watch := s.LogicalID(t, "AWS::Lambda::Function", "JobsTTLWatch")
	env := JSON(Props(s.Resources("AWS::Lambda::Function")[watch])["Environment"])
	for _, want := range []string{`"TTL_ATTRIBUTE": "` + timerspec.DefaultTTLAttr + `"`, `"` + scheduleonwrite.EnvMaxLateness + `": "259200"`} {
		if !strings.Contains(env, want) {
			t.Fatalf("TTL watch environment %s lacks %s", env, want)
		}
	}
	got := ActionMap(s.FunctionStatements(t, "JobsTTLWatch"))
	if !strings.Contains(got["dynamodb:Query"], "/index/armed") {
		t.Fatalf("TTL watch grants %v lack dynamodb:Query on the armed index", got)
	}
	for a := range got {
		if strings.HasPrefix(a, "dynamodb:") && a != "dynamodb:Query" {
			t.Fatalf("TTL watch may %s; it only Queries the armed index", a)
		}
	}
	var scheduled bool
	for _, r := range s.Resources("AWS::Events::Rule") {
		if p := Props(r); p["ScheduleExpression"] == "rate(6 hours)" && strings.Contains(JSON(p["Targets"]), watch) {
			scheduled = true
		}
	}
	if !scheduled {
		t.Fatal("no rule runs the TTL watch every 6 hours")
	}
	var alarm map[string]any
	for _, a := range s.Resources("AWS::CloudWatch::Alarm") {
		if Props(a)["MetricName"] == metrics.TTLOverdueMarkers {
			alarm = Props(a)
		}
	}
	if alarm == nil || alarm["Threshold"] != 1.0 || alarm["Statistic"] != "Maximum" || alarm["Period"] != 21600.0 ||
		!strings.Contains(JSON(alarm["Dimensions"]), metrics.FunctionTTLWatch) {
		t.Fatalf("overdue-marker alarm %s, want Maximum of %s >= 1 over the 6-hour interval", JSON(alarm), metrics.TTLOverdueMarkers)
	}
}

// TestTimerGuardsFailSynth: a target that outlives the delivery lease and
// an existing table without TTL on the marker attribute fail synth with a
// message that names the values and the fix; the matching good props
// synthesize. (A misspelt timer, or an asynchronous-invocation prop on a
// synchronous timer, no longer compiles: each timer has its own props.)
func TestTimerGuardsFailSynth(t *testing.T) {
	type props = scheduleonwrite.ScheduleOnWriteProps
	ttlWith := func(p *props, attr string) {
		p.Timer = scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: awscdk.Duration_Days(jsii.Number(2)), TTLAttribute: attr})
	}
	ttl := func(p *props) { ttlWith(p, "") }
	table := func(st awscdk.Stack, ttlAttr string) awsdynamodb.ITable {
		tp := &awsdynamodb.TableProps{
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("tenantId"), Type: awsdynamodb.AttributeType_STRING},
			SortKey:      &awsdynamodb.Attribute{Name: jsii.String("jobId"), Type: awsdynamodb.AttributeType_STRING},
			Stream:       awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		}
		if ttlAttr != "" {
			tp.TimeToLiveAttribute = jsii.String(ttlAttr)
		}
		return awsdynamodb.NewTable(st, jsii.String("Own"), tp)
	}
	tableV2 := func(st awscdk.Stack, ttlAttr string) awsdynamodb.ITable {
		tp := &awsdynamodb.TablePropsV2{
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("tenantId"), Type: awsdynamodb.AttributeType_STRING},
			SortKey:      &awsdynamodb.Attribute{Name: jsii.String("jobId"), Type: awsdynamodb.AttributeType_STRING},
			DynamoStream: awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		}
		if ttlAttr != "" {
			tp.TimeToLiveAttribute = jsii.String(ttlAttr)
		}
		return awsdynamodb.NewTableV2(st, jsii.String("OwnV2"), tp)
	}
	fn := func(st awscdk.Stack, timeoutSec float64) awslambda.IFunction {
		return awslambda.NewFunction(st, jsii.String("Run"), &awslambda.FunctionProps{
			Runtime: awslambda.Runtime_NODEJS_20_X(), Handler: jsii.String("index.handler"),
			Code: awslambda.Code_FromInline(jsii.String("exports.handler = async () => {}")), Timeout: awscdk.Duration_Seconds(jsii.Number(timeoutSec)),
		})
	}
	for i, tc := range []struct {
		name string
		edit func(st awscdk.Stack, p *props)
		want []string // empty: synth succeeds
	}{
		{"target longer than the lease", func(st awscdk.Stack, p *props) { p.Target = fn(st, 120) },
			[]string{"Target's timeout (120s) is longer than the delivery lease (60s: FireTimeout 10s", "set FireTimeout to at least 120s"}},
		{"target within the lease a longer FireTimeout gives", func(st awscdk.Stack, p *props) {
			p.Target, p.FireTimeout = fn(st, 120), awscdk.Duration_Seconds(jsii.Number(120))
		}, nil},
		{"target within the minimum lease", func(st awscdk.Stack, p *props) { p.Target = fn(st, 60) }, nil},
		{"own table without TTL", func(st awscdk.Stack, p *props) { ttl(p); p.ExistingTable = table(st, "") },
			[]string{"has no TTL", `enable TTL on attribute "unscheduleTtl"`}},
		{"own table with TTL on another attribute than TTLAttribute", func(st awscdk.Stack, p *props) {
			ttlWith(p, timerspec.DefaultTTLAttr)
			p.ExistingTable = table(st, "expiresAt")
		}, []string{`has TTL on attribute "expiresAt", not on TTLAttribute "unscheduleTtl"`, `set TTLAttribute to "expiresAt"`}},
		{"own table with TTL named once, on the table", func(st awscdk.Stack, p *props) { ttl(p); p.ExistingTable = table(st, "expiresAt") }, nil},
		{"a nil *TTLTimer", func(st awscdk.Stack, p *props) { p.Timer = (*scheduleonwrite.TTLTimer)(nil) },
			[]string{"Jobs: Timer is a nil *scheduleonwrite.TTLTimer: pass the timer its constructor returns", "NewTTLTimer(...)", "leave Timer unset"}},
		{"a nil *SchedulerTimer", func(st awscdk.Stack, p *props) { p.Timer = (*scheduleonwrite.SchedulerTimer)(nil) },
			[]string{"Timer is a nil *scheduleonwrite.SchedulerTimer", "NewSchedulerTimer(...)"}},
		{"a nil *StepFunctionsTimer", func(st awscdk.Stack, p *props) { p.Timer = (*scheduleonwrite.StepFunctionsTimer)(nil) },
			[]string{"Timer is a nil *scheduleonwrite.StepFunctionsTimer", "NewStepFunctionsTimer(...)"}},
		{"own table with TTL on the attribute", func(st awscdk.Stack, p *props) { ttl(p); p.ExistingTable = table(st, timerspec.DefaultTTLAttr) }, nil},
		{"own TableV2 without TTL", func(st awscdk.Stack, p *props) { ttl(p); p.ExistingTable = tableV2(st, "") },
			[]string{"has no TTL", "unscheduleTtl"}},
		{"own TableV2 with TTL on TTLAttribute", func(st awscdk.Stack, p *props) {
			ttlWith(p, "expiresAt")
			p.ExistingTable = tableV2(st, "expiresAt")
		}, nil},
		{"imported table without TTLAttribute", func(st awscdk.Stack, p *props) {
			ttl(p)
			p.ExistingTable = awsdynamodb.Table_FromTableAttributes(st, jsii.String("Imported"), &awsdynamodb.TableAttributes{
				TableName: jsii.String("jobs"), TableStreamArn: jsii.String("arn:aws:dynamodb:eu-west-1:111111111111:table/jobs/stream/x")})
		}, []string{"is imported, so synth cannot see its TTL: set TTLAttribute"}},
		{"imported table with TTLAttribute", func(st awscdk.Stack, p *props) {
			ttlWith(p, "expiresAt")
			p.ExistingTable = awsdynamodb.Table_FromTableAttributes(st, jsii.String("Imported"), &awsdynamodb.TableAttributes{
				TableName: jsii.String("jobs"), TableStreamArn: jsii.String("arn:aws:dynamodb:eu-west-1:111111111111:table/jobs/stream/x")})
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stack := customStack(t, fmt.Sprint("LayerGuards", i))
			p := &props{Schema: jobsSchema, Target: awslambda.Function_FromFunctionArn(stack, jsii.String("Target"),
				jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:run"))}
			tc.edit(stack, p)
			build := func() { scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Jobs"), p) }
			if len(tc.want) > 0 {
				WantPanic(t, build, tc.want...)
				return
			}
			Check(t, build)
		})
	}
}

// TestTTLAttributeNamedOnceOnTheTable: an adopter that brings its table
// names its TTL attribute once, on the table; the TTL timer reads it
// there, and the markers' writers and the TTL watch get it.
func TestTTLAttributeNamedOnceOnTheTable(t *testing.T) {
	stack := customStack(t, "TTLOnce")
	table := awsdynamodb.NewTable(stack, jsii.String("Own"), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String("tenantId"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:             &awsdynamodb.Attribute{Name: jsii.String("jobId"), Type: awsdynamodb.AttributeType_STRING},
		Stream:              awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		TimeToLiveAttribute: jsii.String("expiresAt"),
	})
	timer := scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: awscdk.Duration_Days(jsii.Number(2))})
	Check(t, func() {
		scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Jobs"), &scheduleonwrite.ScheduleOnWriteProps{
			Schema: jobsSchema, ExistingTable: table, Timer: timer, NoReconciler: true,
			Target: awslambda.Function_FromFunctionArn(stack, jsii.String("Target"), jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:run")),
		})
	})
	if got := timer.TTLAttribute(); got != "expiresAt" {
		t.Fatalf("TTLAttribute() = %q, want the table's expiresAt", got)
	}
	if env := timer.Environment(); env["TTL_ATTRIBUTE"] != "expiresAt" {
		t.Fatalf("the timer's environment %v, want TTL_ATTRIBUTE expiresAt", env)
	}
	b, _ := json.Marshal(synthOf(t, stack).json)
	if !strings.Contains(string(b), `"TTL_ATTRIBUTE":"expiresAt"`) {
		t.Fatalf("no function reads TTL_ATTRIBUTE expiresAt: %s", b)
	}
}

// TestCancellationRefusesANilTimer: a typed nil timer fails synth with
// what to pass, not with a nil-pointer dereference.
func TestCancellationRefusesANilTimer(t *testing.T) {
	for i, timer := range []scheduleonwrite.TimerBinding{(*scheduleonwrite.TTLTimer)(nil), (*scheduleonwrite.SchedulerTimer)(nil), (*scheduleonwrite.StepFunctionsTimer)(nil)} {
		t.Run(fmt.Sprintf("%T", timer), func(t *testing.T) {
			stack := customStack(t, fmt.Sprint("NilTimer", i))
			table := awsdynamodb.NewTable(stack, jsii.String("Own"), scheduleonwrite.TableProps(jobsSchema, awscdk.RemovalPolicy_DESTROY, false))
			WantPanic(t, func() {
				cancellation.NewCancellation(stack, jsii.String("Pipeline"), &cancellation.CancellationProps{Table: table, Timer: timer, Schema: jobsSchema})
			}, fmt.Sprintf("Pipeline: Timer is a nil %T: pass the timer its constructor returns", timer), "ScheduleOnWrite")
		})
	}
}
