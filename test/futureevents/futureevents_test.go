package futureevents_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	fe "github.com/unschedule/unschedule/constructs/futureevents"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/examples/renewalreminder/reminder"
	"github.com/unschedule/unschedule/examples/renewalreminder/stack"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/metrics"
)

// TestFutureEventsSynth synthesizes the renewal-reminder example (the
// construct, a registered target, a client) with one more function that
// is never registered, and pins the definition, IAM and alarms.
func TestFutureEventsSynth(t *testing.T) {
	app := newApp(t)
	a := stack.NewStack(app, "RenewalReminder")
	unregistered := gofn.NewFunction(a.Stack, jsii.String("Unregistered"), &gofn.FunctionProps{Entry: "examples/renewalreminder/remind"})
	_ = unregistered
	template, j := synth(a.Stack)

	t.Run("cfn-lint", func(t *testing.T) { cfnLint(t, j) })

	t.Run("function variables are envvars names (or the example app's own)", func(t *testing.T) {
		for _, bad := range envvars.Unknown(j) {
			if !strings.HasSuffix(bad, ": "+reminder.EnvRemindFunction) {
				t.Errorf("a function sets a variable not in internal/envvars: %s", bad)
			}
		}
	})

	t.Run("definition: Standard, Wait on TimestampPath, then the handler with TargetError retries", func(t *testing.T) {
		_, sm := j.one(t, "AWS::StepFunctions::StateMachine", "FutureEvents")
		p := props(sm)
		if p["StateMachineType"] != "STANDARD" {
			t.Fatalf("type %v", p["StateMachineType"])
		}
		var def struct {
			StartAt string
			States  map[string]map[string]any
		}
		if err := json.Unmarshal([]byte(resolveJoin(p["DefinitionString"])), &def); err != nil {
			t.Fatalf("%v: %s", err, resolveJoin(p["DefinitionString"]))
		}
		w := def.States[def.StartAt]
		if w["Type"] != "Wait" || w["TimestampPath"] != "$.timestamp" || w["Next"] != "HandleEvent" {
			t.Fatalf("start state %v", w)
		}
		h := def.States["HandleEvent"]
		if h["Type"] != "Task" || h["End"] != true || !strings.Contains(js(h["Parameters"]), "FutureEventsHandler") {
			t.Fatalf("HandleEvent %v", h)
		}
		if !strings.Contains(js(h["Retry"]), `"ErrorEquals":["TargetError","Lambda.Unknown"]`) || !strings.Contains(js(h["Retry"]), `"MaxAttempts":2`) {
			t.Fatalf("retries %v", js(h["Retry"]))
		}
		// Execution data (payloads: emails) never reaches the logs.
		lc := js(p["LoggingConfiguration"])
		if !strings.Contains(lc, `"IncludeExecutionData":false`) || !strings.Contains(lc, `"Level":"ERROR"`) {
			t.Fatalf("logging %s", lc)
		}
	})

	remindID, _ := j.one(t, "AWS::Lambda::Function", "Remind")
	unregID, _ := j.one(t, "AWS::Lambda::Function", "Unregistered")

	t.Run("IAM: the handler invokes the registered target and nothing else", func(t *testing.T) {
		got := actionMap(j.functionStatements(t, "FutureEventsHandler"))
		want := `[{"Fn::GetAtt":["` + remindID + `","Arn"]},{"Fn::Join":["",[{"Fn::GetAtt":["` + remindID + `","Arn"]},":*"]]}]`
		if got["lambda:InvokeFunction"] != want {
			t.Fatalf("lambda:InvokeFunction on %s, want %s", got["lambda:InvokeFunction"], want)
		}
		for a, res := range got {
			if strings.Contains(res, unregID) || res == `"*"` && strings.HasPrefix(a, "lambda:") {
				t.Fatalf("%s on %s: an unregistered function (or any) is invocable", a, res)
			}
		}
		if len(got) != 3 { // logs:CreateLogStream, logs:PutLogEvents, lambda:InvokeFunction
			t.Fatalf("handler actions %v", got)
		}
	})

	t.Run("IAM: the state machine invokes only the handler", func(t *testing.T) {
		_, sm := j.one(t, "AWS::StepFunctions::StateMachine", "FutureEvents")
		role := props(sm)["RoleArn"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
		got := actionMap(j.roleStatements(role))
		handlerID, _ := j.one(t, "AWS::Lambda::Function", "FutureEventsHandler")
		if inv := got["lambda:InvokeFunction"]; !strings.Contains(inv, handlerID) || strings.Contains(inv, remindID) || strings.Contains(inv, unregID) {
			t.Fatalf("state machine invokes %s", inv)
		}
	})

	t.Run("the handler's registered list names the target only", func(t *testing.T) {
		_, h := j.one(t, "AWS::Lambda::Function", "FutureEventsHandler")
		env := js(props(h)["Environment"].(map[string]any)["Variables"].(map[string]any)[envvars.TargetFunctionArns])
		if !strings.Contains(env, remindID) || strings.Contains(env, unregID) {
			t.Fatalf("%s = %s", envvars.TargetFunctionArns, env)
		}
	})

	t.Run("IAM: the client starts, stops and describes executions of this machine only", func(t *testing.T) {
		smID, _ := j.one(t, "AWS::StepFunctions::StateMachine", "FutureEvents")
		got := actionMap(j.functionStatements(t, "Subscribe"))
		if got["states:StartExecution"] != `{"Ref":"`+smID+`"}` {
			t.Fatalf("StartExecution on %s", got["states:StartExecution"])
		}
		for _, a := range []string{"states:StopExecution", "states:DescribeExecution"} {
			if r := got[a]; !strings.Contains(r, ":execution:") || !strings.Contains(r, smID) || !strings.HasSuffix(strings.TrimSuffix(r, `"]]}`), `:*`) {
				t.Fatalf("%s on %s", a, r)
			}
		}
		if got["lambda:InvokeFunction"] != "" {
			t.Fatal("the client needs no invoke")
		}
		_, fn := j.one(t, "AWS::Lambda::Function", "Subscribe")
		vars := js(props(fn)["Environment"])
		if !strings.Contains(vars, `"FUTURE_EVENTS_STATE_MACHINE_ARN":{"Ref":"`+smID+`"}`) {
			t.Fatalf("client env %s", vars)
		}
	})

	t.Run("alarms: failed and timed-out executions, handler errors, refused targets", func(t *testing.T) {
		for _, m := range []map[string]any{
			{"Namespace": "AWS/States", "MetricName": "ExecutionsFailed"},
			{"Namespace": "AWS/States", "MetricName": "ExecutionsTimedOut"},
			{"Namespace": "AWS/Lambda", "MetricName": "Errors"},
			{"Namespace": metrics.Namespace, "MetricName": metrics.FutureEventsRefused,
				"Dimensions": assertions.Match_ArrayWith(&[]any{map[string]any{"Name": "Function", "Value": metrics.FunctionFutureEvents}})},
		} {
			m["Threshold"] = 1
			m["ComparisonOperator"] = "GreaterThanOrEqualToThreshold"
			check(t, func() { template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), m) })
		}
	})
}

// TestFutureEventsValidation: bad props fail with a message that says how
// to fix them.
func TestFutureEventsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    fe.FutureEventsProps
		want string
	}{
		{"timeout", fe.FutureEventsProps{HandlerTimeout: awscdk.Duration_Minutes(jsii.Number(16))}, "HandlerTimeout must be a whole number of seconds between 1 and 900"},
		{"retries", fe.FutureEventsProps{TargetRetryAttempts: jsii.Number(11)}, "TargetRetryAttempts must be a whole number between 0 and 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tc.want) {
					t.Fatalf("panic %v, want %q", r, tc.want)
				}
			}()
			st := awscdk.NewStack(newApp(t), jsii.String("S"), nil)
			fe.NewFutureEvents(st, jsii.String("FE"), &tc.p)
		})
	}
}
