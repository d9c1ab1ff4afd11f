package eventservices

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	fe "github.com/unschedule/unschedule/constructs/futureevents"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/examples/renewalreminder/reminder"
	"github.com/unschedule/unschedule/examples/renewalreminder/renewalstack"
	"github.com/unschedule/unschedule/futureevents/futureevent"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// TestFutureEventsSynth synthesizes the renewal-reminder example (the
// construct, a registered target, a client) with one more function that
// is never registered, and pins the core it runs on (table, Step
// Functions timer), IAM and alarms.
func TestFutureEventsSynth(t *testing.T) {
	app := newApp(t)
	a := renewalstack.NewStack(app, "RenewalReminder")
	gofn.NewFunction(a.Stack, jsii.String("Unregistered"), &gofn.FunctionProps{Entry: "examples/renewalreminder/remind"})
	template, j := synth(a.Stack)
	tableID, _ := j.one(t, "AWS::DynamoDB::Table", "FutureEventsTable")
	remindID, _ := j.one(t, "AWS::Lambda::Function", "Remind")
	unregID, _ := j.one(t, "AWS::Lambda::Function", "Unregistered")
	handlerID, _ := j.one(t, "AWS::Lambda::Function", "FutureEventsHandler")
	expiryID, _ := j.one(t, "AWS::Lambda::Function", "FutureEventsCoreFire")
	tableArn := `{"Fn::GetAtt":["` + tableID + `","Arn"]}`

	t.Run("cfn-lint", func(t *testing.T) { cfnLint(t, j) })

	t.Run("function variables are envvars names (or the example app's own)", func(t *testing.T) {
		for _, bad := range envvars.Unknown(j) {
			if !strings.HasSuffix(bad, ": "+reminder.EnvRemindFunction) {
				t.Errorf("a function sets a variable not in internal/core/envvars: %s", bad)
			}
		}
	})

	t.Run("table: keyed by name alone, both images streamed, point-in-time recovery", func(t *testing.T) {
		check(t, func() {
			template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
				"KeySchema":                        []any{map[string]any{"AttributeName": "name", "KeyType": "HASH"}},
				"StreamSpecification":              map[string]any{"StreamViewType": "NEW_AND_OLD_IMAGES"},
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
			})
		})
	})

	t.Run("one state machine: the core's Step Functions timer", func(t *testing.T) {
		if n := len(j.resources("AWS::StepFunctions::StateMachine")); n != 1 {
			t.Fatalf("%d state machines, want the core timer's only", n)
		}
		_, sm := j.one(t, "AWS::StepFunctions::StateMachine", "FutureEventsCore")
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
		if w["Type"] != "Wait" || w["TimestampPath"] != timerspec.TimestampPath || w["Next"] != timerspec.FireState {
			t.Fatalf("start state %v", w)
		}
		if f := def.States[timerspec.FireState]; f["Type"] != "Task" || !strings.Contains(js(f["Parameters"]), expiryID) {
			t.Fatalf("%s %v: want the core's expiry function", timerspec.FireState, f)
		}
		// Execution data (the event's key) stays out of the logs.
		if lc := js(p["LoggingConfiguration"]); !strings.Contains(lc, `"IncludeExecutionData":false`) {
			t.Fatalf("logging %s", lc)
		}
	})

	t.Run("IAM: the state machine invokes the expiry function only", func(t *testing.T) {
		_, sm := j.one(t, "AWS::StepFunctions::StateMachine", "FutureEventsCore")
		role := props(sm)["RoleArn"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
		inv := actionMap(j.roleStatements(role))["lambda:InvokeFunction"]
		if !strings.Contains(inv, expiryID) || strings.Contains(inv, handlerID) || strings.Contains(inv, remindID) || strings.Contains(inv, unregID) {
			t.Fatalf("state machine invokes %s", inv)
		}
	})

	t.Run("IAM: the expiry function invokes the handler only", func(t *testing.T) {
		inv := actionMap(j.functionStatements(t, "FutureEventsCoreFire"))["lambda:InvokeFunction"]
		if !strings.Contains(inv, handlerID) || strings.Contains(inv, remindID) || strings.Contains(inv, unregID) {
			t.Fatalf("expiry invokes %s", inv)
		}
	})

	t.Run("IAM: the handler reads events and invokes the registered target, nothing else", func(t *testing.T) {
		got := actionMap(j.functionStatements(t, "FutureEventsHandler"))
		want := `[{"Fn::GetAtt":["` + remindID + `","Arn"]},{"Fn::Join":["",[{"Fn::GetAtt":["` + remindID + `","Arn"]},":*"]]}]`
		if got["lambda:InvokeFunction"] != want {
			t.Fatalf("lambda:InvokeFunction on %s, want %s", got["lambda:InvokeFunction"], want)
		}
		if got["dynamodb:GetItem"] != tableArn {
			t.Fatalf("dynamodb:GetItem on %s, want the table", got["dynamodb:GetItem"])
		}
		for a, res := range got {
			if strings.Contains(res, unregID) || res == `"*"` && !strings.HasPrefix(a, "xray:") {
				t.Fatalf("%s on %s: an unregistered function (or any resource) is allowed", a, res)
			}
			if strings.HasPrefix(a, "dynamodb:") && a != "dynamodb:GetItem" {
				t.Fatalf("the handler may %s", a)
			}
		}
	})

	t.Run("the handler's registered list names the target only; it reads the table", func(t *testing.T) {
		_, h := j.one(t, "AWS::Lambda::Function", "FutureEventsHandler")
		vars := props(h)["Environment"].(map[string]any)["Variables"].(map[string]any)
		if env := js(vars[futureevent.EnvTargetFunctionArns]); !strings.Contains(env, remindID) || strings.Contains(env, unregID) {
			t.Fatalf("%s = %s", futureevent.EnvTargetFunctionArns, env)
		}
		if got := js(vars[envvars.Table]); got != `{"Ref":"`+tableID+`"}` {
			t.Fatalf("%s = %s", envvars.Table, got)
		}
	})

	t.Run("IAM: the client puts, deletes and gets items of the table only", func(t *testing.T) {
		got := actionMap(j.functionStatements(t, "Subscribe"))
		for _, a := range []string{"dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:GetItem"} {
			if got[a] != tableArn {
				t.Fatalf("%s on %s, want the table", a, got[a])
			}
		}
		for a := range got {
			if strings.HasPrefix(a, "states:") || strings.HasPrefix(a, "lambda:") || a == "dynamodb:Scan" || a == "dynamodb:UpdateItem" {
				t.Fatalf("the client may %s: it only writes and deletes items", a)
			}
		}
		_, fn := j.one(t, "AWS::Lambda::Function", "Subscribe")
		if vars := js(props(fn)["Environment"]); !strings.Contains(vars, `"`+futureevent.EnvTableName+`":{"Ref":"`+tableID+`"}`) {
			t.Fatalf("client env %s", vars)
		}
	})

	t.Run("alarms: refused targets, handler errors, failed executions, the core's", func(t *testing.T) {
		for _, m := range []map[string]any{
			{"Namespace": metrics.Namespace, "MetricName": futureevent.MetricRefused,
				"Dimensions": assertions.Match_ArrayWith(&[]any{map[string]any{"Name": "Function", "Value": futureevent.FunctionFutureEvents}})},
			{"Namespace": "AWS/Lambda", "MetricName": "Errors",
				"Dimensions": []any{map[string]any{"Name": "FunctionName", "Value": map[string]any{"Ref": handlerID}}}},
			{"Namespace": "AWS/States", "MetricName": "ExecutionsFailed"},
			{"Namespace": metrics.Namespace, "MetricName": metrics.FireErrors},
		} {
			m["Threshold"] = 1
			m["ComparisonOperator"] = "GreaterThanOrEqualToThreshold"
			check(t, func() { template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), m) })
		}
		if n, want := len(a.Events.Alarms()), len(j.resources("AWS::CloudWatch::Alarm")); n != want {
			t.Fatalf("Alarms() lists %d, the stack has %d", n, want)
		}
	})
}

// TestFutureEventsTable: ExistingTable is used as given (no second
// table); TableProps override the new table's defaults.
func TestFutureEventsTable(t *testing.T) {
	t.Run("existing table", func(t *testing.T) {
		st := awscdk.NewStack(newApp(t), jsii.String("Existing"), nil)
		table := awsdynamodb.NewTable(st, jsii.String("Mine"), &awsdynamodb.TableProps{
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("name"), Type: awsdynamodb.AttributeType_STRING},
			Stream:       awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES, BillingMode: awsdynamodb.BillingMode_PAY_PER_REQUEST,
		})
		f := fe.NewFutureEvents(st, jsii.String("FE"), &fe.FutureEventsProps{ExistingTable: table})
		_, j := synth(st)
		if n := len(j.resources("AWS::DynamoDB::Table")); n != 1 || f.Table != table {
			t.Fatalf("%d tables; want yours only", n)
		}
	})
	t.Run("table props", func(t *testing.T) {
		st := awscdk.NewStack(newApp(t), jsii.String("Props"), nil)
		fe.NewFutureEvents(st, jsii.String("FE"), &fe.FutureEventsProps{TableProps: &awsdynamodb.TableProps{
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY, TableName: jsii.String("events"),
		}})
		_, j := synth(st)
		id, table := j.one(t, "AWS::DynamoDB::Table", "FETable")
		p := props(table)
		if table["DeletionPolicy"] != "Delete" || p["TableName"] != "events" || js(p["PointInTimeRecoverySpecification"]) != `{"PointInTimeRecoveryEnabled":true}` {
			t.Fatalf("%s: %s", id, js(table))
		}
	})
}

// TestFutureEventsValidation: bad props fail with a message that says how
// to fix them.
func TestFutureEventsValidation(t *testing.T) {
	key := func(pk, sk string, stream awsdynamodb.StreamViewType) func(st awscdk.Stack) awsdynamodb.ITable {
		return func(st awscdk.Stack) awsdynamodb.ITable {
			tp := &awsdynamodb.TableProps{PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(pk), Type: awsdynamodb.AttributeType_STRING}, Stream: stream}
			if sk != "" {
				tp.SortKey = &awsdynamodb.Attribute{Name: jsii.String(sk), Type: awsdynamodb.AttributeType_STRING}
			}
			return awsdynamodb.NewTable(st, jsii.String("T"), tp)
		}
	}
	for i, tc := range []struct {
		name  string
		p     fe.FutureEventsProps
		table func(st awscdk.Stack) awsdynamodb.ITable
		want  string
	}{
		{"timeout", fe.FutureEventsProps{HandlerTimeout: awscdk.Duration_Minutes(jsii.Number(16))}, nil, "HandlerTimeout must be a whole number of seconds between 1 and 890"},
		{"timeout leaves no room for the expiry", fe.FutureEventsProps{HandlerTimeout: awscdk.Duration_Seconds(jsii.Number(895))}, nil, "HandlerTimeout must be a whole number of seconds between 1 and 890"},
		{"both table props", fe.FutureEventsProps{TableProps: &awsdynamodb.TableProps{}}, key("name", "", awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES),
			"ExistingTable and TableProps are both set"},
		{"table props change the key", fe.FutureEventsProps{TableProps: &awsdynamodb.TableProps{
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING}}}, nil, "leave TableProps.PartitionKey unset"},
		{"table props change the stream", fe.FutureEventsProps{TableProps: &awsdynamodb.TableProps{Stream: awsdynamodb.StreamViewType_KEYS_ONLY}}, nil,
			"leave TableProps.Stream unset"},
		{"existing table keyed otherwise", fe.FutureEventsProps{}, key("pk", "sk", awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES), `keyed by "name" (a string) alone`},
		{"existing table without a stream", fe.FutureEventsProps{}, key("name", "", ""), "has no stream"},
		{"deletion protection of an existing table", fe.FutureEventsProps{DeletionProtection: jsii.Bool(true)}, key("name", "", awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES),
			"DeletionProtection applies to the table this construct creates, not to ExistingTable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Fatalf("panic %v, want %q", r, tc.want)
				}
			}()
			st := awscdk.NewStack(newApp(t), jsii.String(fmt.Sprint("S", i)), nil)
			if tc.table != nil {
				tc.p.ExistingTable = tc.table(st)
			}
			fe.NewFutureEvents(st, jsii.String("FE"), &tc.p)
		})
	}
}
