package test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
)

func TestTableIsQueryableEncryptedStreamedAndRecoverable(t *testing.T) {
	s := Stack(t, "dev")
	Check(t, func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"KeySchema": []any{
				map[string]any{"AttributeName": "userId", "KeyType": "HASH"},
				map[string]any{"AttributeName": "taskId", "KeyType": "RANGE"},
			},
			"BillingMode":                      "PAY_PER_REQUEST",
			"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
			"SSESpecification":                 map[string]any{"SSEEnabled": true},
			"StreamSpecification":              map[string]any{"StreamViewType": "NEW_AND_OLD_IMAGES"},
			"GlobalSecondaryIndexes": []any{assertions.Match_ObjectLike(&map[string]any{
				"IndexName": "pending",
				"KeySchema": []any{
					map[string]any{"AttributeName": "pendingShard", "KeyType": "HASH"},
					map[string]any{"AttributeName": "dueAt", "KeyType": "RANGE"},
				},
			})},
		})
		// dev tears down; prod keeps data (TestProdRetainsState).
		s.tpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionPolicy": "Delete"})
		s.tpl.ResourceCountIs(jsii.String("AWS::Scheduler::ScheduleGroup"), jsii.Number(1))
	})
}

func TestEveryApiMethodHasTheCognitoAuthorizer(t *testing.T) {
	s := Stack(t, "dev")
	authorizer := s.LogicalID(t, "AWS::ApiGateway::Authorizer", "ApiAuthorizer")
	var routes []string
	for _, m := range s.Resources("AWS::ApiGateway::Method") {
		p := Props(m)
		if p["HttpMethod"] == "OPTIONS" { // CORS preflight carries no token by design
			continue
		}
		routes = append(routes, p["HttpMethod"].(string))
		if p["AuthorizationType"] != "COGNITO_USER_POOLS" {
			t.Errorf("method %s has AuthorizationType %v", p["HttpMethod"], p["AuthorizationType"])
		}
		if ref, _ := p["AuthorizerId"].(map[string]any)["Ref"].(string); ref != authorizer {
			t.Errorf("method %s authorizer %v, want %s", p["HttpMethod"], p["AuthorizerId"], authorizer)
		}
	}
	sort.Strings(routes)
	if got := strings.Join(routes, ","); got != "DELETE,GET,GET,GET,PATCH,POST,PUT" { // /tasks, /tasks/{id}, /me/notifications
		t.Fatalf("methods %s", got)
	}
	Check(t, func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Authorizer"), map[string]any{
			"Type": "COGNITO_USER_POOLS", "IdentitySource": "method.request.header.Authorization",
		})
		s.tpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), map[string]any{
			"AccessLogSetting": assertions.Match_ObjectLike(&map[string]any{}),
			"MethodSettings": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100,
			})}),
		})
	})
}

func TestScheduleDeadLetterQueueIsEncryptedAndAlarmed(t *testing.T) {
	s := Stack(t, "dev")
	dlq := s.LogicalID(t, "AWS::SQS::Queue", "TasksScheduleDeadLetterQueue")
	Check(t, func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::SQS::Queue"), map[string]any{
			"SqsManagedSseEnabled": true, "MessageRetentionPeriod": 1209600,
			"FifoQueue": assertions.Match_Absent(), // the scheduler accepts only standard DLQs
		})
		s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"MetricName": "ApproximateNumberOfMessagesVisible",
			"Dimensions": []any{map[string]any{"Name": "QueueName", "Value": map[string]any{"Fn::GetAtt": []any{dlq, "QueueName"}}}},
			"Threshold":  1, "ComparisonOperator": "GreaterThanOrEqualToThreshold",
			"AlarmActions": assertions.Match_ArrayWith(&[]any{map[string]any{"Ref": s.LogicalID(t, "AWS::SNS::Topic", "AlarmTopic")}}),
		})
	})
}

func TestGoFunctionsAreArmAl2023WithJSONLogs(t *testing.T) {
	s := Stack(t, "dev")
	for id, role := range s.Resources("AWS::IAM::Role") {
		// API Gateway's account-wide logging role is AWS's own design; it
		// is the one role allowed a managed policy (cdk-nag suppression).
		if arns, ok := Props(role)["ManagedPolicyArns"]; ok && !strings.HasPrefix(id, "ApiCloudWatchRole") {
			t.Errorf("role %s uses AWS managed policies %v: grant exactly what it needs instead", id, arns)
		}
	}
	fns := s.Resources("AWS::Lambda::Function")
	// The exact set of the app's Go functions, by construct path: a
	// function added or lost fails here (CDK's own upload and
	// custom-resource functions, in Python and Node, are counted apart).
	want := []string{"ApiHandler", "AuthPreSignUp", "AuthPostConfirmation", "CancellationProcessor", "CancellationWorker",
		"NotificationsPostAuth", "TasksReconcilerFunction", "TasksFire"}
	var ours []string
	cdkOwn := 0
	for id := range fns {
		if strings.HasPrefix(id, "CustomCDKBucketDeployment") || strings.HasPrefix(id, "AWS679f53fac002430cb0da5b7982bd2287") {
			cdkOwn++
			continue
		}
		ours = append(ours, id)
	}
	for _, prefix := range want {
		s.LogicalID(t, "AWS::Lambda::Function", prefix) // fails the test when missing
	}
	if len(ours) != len(want) || cdkOwn != 2 {
		t.Fatalf("functions %v (+%d of CDK's own), want exactly %v plus CDK's bucket deployment and custom resource", ours, cdkOwn, want)
	}
	for id, fn := range fns {
		if strings.HasPrefix(id, "CustomCDKBucketDeployment") || strings.HasPrefix(id, "AWS679f53fac002430cb0da5b7982bd2287") {
			continue // CDK's own upload and custom-resource functions (Python, Node)
		}
		p := Props(fn)
		if p["Runtime"] != "provided.al2023" || p["Handler"] != "bootstrap" || JSON(p["Architectures"]) != JSON([]any{"arm64"}) {
			t.Errorf("%s: runtime %v handler %v arch %v", id, p["Runtime"], p["Handler"], p["Architectures"])
		}
		if lc, _ := p["LoggingConfig"].(map[string]any); lc == nil || lc["LogFormat"] != "JSON" || lc["LogGroup"] == nil {
			t.Errorf("%s: logging %v", id, p["LoggingConfig"])
		}
	}
	for id, lg := range s.Resources("AWS::Logs::LogGroup") {
		if Props(lg)["RetentionInDays"] != float64(7) {
			t.Errorf("%s: retention %v, want dev's 7 days", id, Props(lg)["RetentionInDays"])
		}
	}
}

// TestLeastPrivilege pins the exact actions and resources of every role of
// the core stack: a grant that widens fails here.
func TestLeastPrivilege(t *testing.T) {
	s := Stack(t, "dev")
	table := `{"Fn::GetAtt":["` + s.LogicalID(t, "AWS::DynamoDB::Table", "TasksTable") + `","Arn"]}`
	topics := `{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":sns:",{"Ref":"AWS::Region"},":",{"Ref":"AWS::AccountId"},":Unschedule-dev-notify-*"]]}`
	// The group's name as synthesized (CDK derives it from the construct
	// path), so the pin follows a renamed construct instead of a literal.
	group := s.Resources("AWS::Scheduler::ScheduleGroup")[s.LogicalID(t, "AWS::Scheduler::ScheduleGroup", "TasksScheduleGroup")]
	name, ok := Props(group)["Name"].(string)
	if !ok || !strings.HasPrefix(name, "Unscheduledev-Tasks-ScheduleGroup-") {
		t.Fatalf("schedule group name %v: want the name CDK derives from Unschedule-dev/Tasks/ScheduleGroup", Props(group)["Name"])
	}
	schedules := `{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":scheduler:",{"Ref":"AWS::Region"},":",{"Ref":"AWS::AccountId"},":schedule/` + name + `/*"]]}`
	schedulerRole := `{"Fn::GetAtt":["` + s.LogicalID(t, "AWS::IAM::Role", "TasksSchedulerRole") + `","Arn"]}`
	failureQueue := `{"Fn::GetAtt":["` + s.LogicalID(t, "AWS::SQS::Queue", "TasksExpiryFailureQueue") + `","Arn"]}`
	for _, tc := range []struct {
		name, function string
		want           map[string]string
	}{
		{"expiry", "TasksFireFunction", map[string]string{
			// The claim, and the to-do app's target inside the function
			// (lambdas/todofire): it reads the task and its owner's
			// settings, records the notification and publishes to the
			// shard topics. It invokes no function.
			"dynamodb:GetItem": table, "dynamodb:UpdateItem": table, "sns:Publish": topics,
			// Lambda sends a given-up event to the on-failure queue as the
			// function (SqsDestination's grant: send, and read the queue's URL
			// and attributes).
			"sqs:SendMessage": failureQueue, "sqs:GetQueueAttributes": failureQueue, "sqs:GetQueueUrl": failureQueue,
		}},
		{"api", "ApiHandler", map[string]string{
			"dynamodb:GetItem": table, "dynamodb:PutItem": table, "dynamodb:UpdateItem": table,
			"dynamodb:DeleteItem": table,
			// The table, and the index of the caller's Pending tasks (the cap).
			"dynamodb:Query":           table + `+{"Fn::Join":["",[` + table + `,"/index/userPending"]]}`,
			"scheduler:CreateSchedule": schedules, "iam:PassRole": schedulerRole,
			// The caller's notification setting: their recorded subscription only.
			"sns:Subscribe": topics, "sns:GetSubscriptionAttributes": `"*"`, "sns:Unsubscribe": `"*"`,
			// The key of its page cursors: its own secret, read only.
			"secretsmanager:GetSecretValue": `{"Ref":"` + s.LogicalID(t, "AWS::SecretsManager::Secret", "ApiPageCursorSecret") + `"}`,
		}},
		{"postauth", "NotificationsPostAuth", map[string]string{
			// No listing by topic, no filter policy change: a subscription is
			// found by the ARN recorded for its user, in the settings item.
			"sns:Subscribe": topics, "sns:GetSubscriptionAttributes": `"*"`, "sns:Unsubscribe": `"*"`,
			"dynamodb:GetItem": table, "dynamodb:PutItem": table,
		}},
		{"presignup", "AuthPreSignUp", map[string]string{}},
		// The proof of an address, written on the app's user pool only.
		{"postconfirmation", "AuthPostConfirmation", map[string]string{
			"cognito-idp:AdminUpdateUserAttributes": `{"Fn::GetAtt":["` + s.LogicalID(t, "AWS::Cognito::UserPool", "AuthUserPool") + `","Arn"]}`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ActionMap(s.FunctionStatements(t, tc.function))
			// Every function may write logs to its own log group only.
			logGroup := `{"Fn::GetAtt":["` + s.LogicalID(t, "AWS::Logs::LogGroup", tc.function+"Logs") + `","Arn"]}`
			for _, a := range []string{"logs:CreateLogStream", "logs:PutLogEvents"} {
				if got[a] != logGroup {
					t.Fatalf("%s on %s, want only its own log group %s", a, got[a], logGroup)
				}
				delete(got, a)
			}
			if JSON(got) != JSON(tc.want) {
				t.Fatalf("policy of %s:\n got %s\nwant %s", tc.function, JSON(got), JSON(tc.want))
			}
		})
	}
	t.Run("passrole only to the scheduler", func(t *testing.T) {
		want := JSON(map[string]any{"StringEquals": map[string]any{"iam:PassedToService": "scheduler.amazonaws.com"}})
		found := 0
		for _, st := range s.FunctionStatements(t, "ApiHandler") {
			if !slices.Contains(Actions(st), "iam:PassRole") {
				continue
			}
			found++
			if JSON(st["Condition"]) != want {
				t.Fatalf("PassRole condition %s, want %s", JSON(st["Condition"]), want)
			}
		}
		if found != 1 {
			t.Fatalf("%d PassRole statements for the API function, want exactly 1 (conditioned on the scheduler)", found)
		}
	})
	t.Run("scheduler role invokes expiry and sends to the DLQ, nothing else", func(t *testing.T) {
		role := s.LogicalID(t, "AWS::IAM::Role", "TasksSchedulerRole")
		got := ActionMap(s.RoleStatements(role))
		want := map[string]string{
			"lambda:InvokeFunction": `{"Fn::GetAtt":["` + s.LogicalID(t, "AWS::Lambda::Function", "TasksFire") + `","Arn"]}`,
			"sqs:SendMessage":       `{"Fn::GetAtt":["` + s.LogicalID(t, "AWS::SQS::Queue", "TasksScheduleDeadLetterQueue") + `","Arn"]}`,
		}
		if JSON(got) != JSON(want) {
			t.Fatalf("scheduler role:\n got %s\nwant %s", JSON(got), JSON(want))
		}
		trust := Props(s.Resources("AWS::IAM::Role")[role])["AssumeRolePolicyDocument"].(map[string]any)["Statement"].([]any)[0].(map[string]any)
		if JSON(trust["Principal"]) != JSON(map[string]any{"Service": "scheduler.amazonaws.com"}) {
			t.Fatalf("trust principal %s", JSON(trust["Principal"]))
		}
		cond := JSON(trust["Condition"])
		if !strings.Contains(cond, "aws:SourceAccount") || !strings.Contains(cond, "aws:SourceArn") {
			t.Fatalf("trust lacks confused-deputy conditions: %s", cond)
		}
	})
}

// The functions that apply the notification setting find the topics and
// the settings table.
func TestNotificationSettingEnvironment(t *testing.T) {
	s := Stack(t, "dev")
	env := func(function string) map[string]any {
		id := s.LogicalID(t, "AWS::Lambda::Function", function)
		return Props(s.Resources("AWS::Lambda::Function")[id])["Environment"].(map[string]any)["Variables"].(map[string]any)
	}
	table := JSON(map[string]any{"Ref": s.LogicalID(t, "AWS::DynamoDB::Table", "TasksTable")})
	for _, fn := range []string{"ApiHandler", "NotificationsPostAuth"} {
		got := env(fn)
		if JSON(got["TABLE_NAME"]) != table || got["TOPIC_SHARDS"] != "1" ||
			!strings.Contains(JSON(got["TOPIC_ARN_PREFIX"]), ":Unschedule-dev-notify-") {
			t.Errorf("%s environment %s", fn, JSON(got))
		}
	}
}

func TestCognitoPoolClientAndTriggers(t *testing.T) {
	s := Stack(t, "dev")
	Check(t, func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::Cognito::UserPool"), map[string]any{
			"UsernameAttributes":          []any{"email"},
			"AutoVerifiedAttributes":      []any{"email"},
			"UserAttributeUpdateSettings": map[string]any{"AttributesRequireVerificationBeforeUpdate": []any{"email"}},
			"Policies": map[string]any{"PasswordPolicy": assertions.Match_ObjectLike(&map[string]any{
				"MinimumLength": 12, "RequireLowercase": true, "RequireUppercase": true, "RequireNumbers": true, "RequireSymbols": true,
			})},
			"LambdaConfig": map[string]any{
				"PreSignUp":          map[string]any{"Fn::GetAtt": []any{s.LogicalID(t, "AWS::Lambda::Function", "AuthPreSignUp"), "Arn"}},
				"PostConfirmation":   map[string]any{"Fn::GetAtt": []any{s.LogicalID(t, "AWS::Lambda::Function", "AuthPostConfirmation"), "Arn"}},
				"PostAuthentication": map[string]any{"Fn::GetAtt": []any{s.LogicalID(t, "AWS::Lambda::Function", "NotificationsPostAuth"), "Arn"}},
			},
			// The proof of an address (custom:email_proof), which only
			// the PostConfirmation trigger writes.
			"Schema": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"Name": "email_proof", "AttributeDataType": "String", "Mutable": true})}),
		})
		// The web app writes the address only, never the proof; it reads
		// the proof, so the ID token carries custom:email_proof for the
		// campaign API's check.
		s.tpl.HasResourceProperties(jsii.String("AWS::Cognito::UserPoolClient"), map[string]any{
			"GenerateSecret":             false,
			"ExplicitAuthFlows":          assertions.Match_ArrayWith(&[]any{"ALLOW_USER_SRP_AUTH"}),
			"PreventUserExistenceErrors": "ENABLED",
			"WriteAttributes":            []any{"email"},
			"ReadAttributes":             assertions.Match_ArrayWith(&[]any{"custom:email_proof", "email", "email_verified"}),
		})
	})
}

func TestOutputs(t *testing.T) {
	s := Stack(t, "dev")
	outs := s.json["Outputs"].(map[string]any)
	for _, name := range []string{"ApiUrl", "UserPoolId", "UserPoolClientId", "Region", "NotificationTopicArn", "TableName", "ScheduleGroup", "AlarmTopicArn"} {
		if _, ok := outs[name]; !ok {
			t.Errorf("missing output %s (have %v)", name, keys(outs))
		}
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestPipelineFunctionsReadTheSchema: every function of the pipeline gets
// the to-do app's schema in contract.EnvVar (the shared decision; the
// API's too: it creates schedules and reads items), and
// every error metric they write has an alarm on the dimensions they
// write it with (Stack, Function), to the alarm topic.
func TestPipelineFunctionsReadTheSchemaAndTheirErrorMetricsAreAlarmed(t *testing.T) {
	s := Stack(t, "dev")
	for _, prefix := range []string{"TasksFire", "CancellationProcessor", "CancellationWorker", "TasksReconcilerFunction", "ApiHandler"} {
		t.Run(prefix, func(t *testing.T) {
			env := Props(s.Resources("AWS::Lambda::Function")[s.LogicalID(t, "AWS::Lambda::Function", prefix)])["Environment"].(map[string]any)["Variables"].(map[string]any)
			if env[contract.EnvVar] != tableschema.Todo().EnvValue() {
				t.Fatalf("%s = %v, want %s", contract.EnvVar, env[contract.EnvVar], tableschema.Todo().EnvValue())
			}
		})
	}
	topic := JSON([]any{map[string]any{"Ref": s.LogicalID(t, "AWS::SNS::Topic", "AlarmTopic")}})
	alarmed := map[string]bool{}
	for _, a := range s.Resources("AWS::CloudWatch::Alarm") {
		p := Props(a)
		if p["Namespace"] != metrics.Namespace || JSON(p["AlarmActions"]) != topic {
			continue
		}
		dims := map[string]any{}
		for _, d := range p["Dimensions"].([]any) {
			dims[d.(map[string]any)["Name"].(string)] = d.(map[string]any)["Value"]
		}
		if len(dims) == 2 && dims[metrics.DimensionStack] == "Unschedule-dev" {
			alarmed[fmt.Sprint(dims[metrics.DimensionFunction], "/", p["MetricName"])] = true
		}
	}
	for _, fn := range []string{metrics.FunctionExpiry, metrics.FunctionStreamProcessor, metrics.FunctionCancelWorker, metrics.FunctionReconciler} {
		for _, m := range metrics.ErrorMetrics[fn] {
			if !alarmed[fn+"/"+m] {
				t.Errorf("no alarm on %s of %s with dimensions Stack=Unschedule-dev, Function=%s", m, fn, fn)
			}
		}
	}
}

// TestTodoTargetRunsInTheFiringFunction: the to-do app's target runs
// inside its firing function (ScheduleOnWriteProps.FireEntry,
// lambdas/todofire): that function gets the target's configuration and
// no target function; no notify function is deployed; the reconciler fires an overdue task through the firing
// function.
func TestTodoTargetRunsInTheFiringFunction(t *testing.T) {
	s := Stack(t, "dev")
	fns := s.Resources("AWS::Lambda::Function")
	fireID := s.LogicalID(t, "AWS::Lambda::Function", "TasksFireFunction")
	env := func(id string) map[string]any {
		return Props(fns[id])["Environment"].(map[string]any)["Variables"].(map[string]any)
	}
	fire := env(fireID)
	for _, k := range []string{"TABLE_NAME", contract.EnvVar, "FIRE_LEASE_SECONDS", "TOPIC_ARN_PREFIX", "TOPIC_SHARDS", "WEB_URL"} {
		if fire[k] == nil || fire[k] == "" {
			t.Errorf("%s missing from the firing function's environment %s", k, JSON(fire))
		}
	}
	if _, ok := fire["TARGET_FUNCTION_ARN"]; ok {
		t.Errorf("the firing function names a target function: %s", JSON(fire))
	}
	if d, _ := Props(fns[fireID])["Description"].(string); !strings.Contains(d, "in process") {
		t.Errorf("firing function description %q, want the in-process one", d)
	}
	// The target runs in process: no notify function of its own is
	// deployed (NotifyFunction is for an adopter that wants one).
	for id := range fns {
		if strings.HasPrefix(id, "NotificationsNotify") {
			t.Errorf("the to-do stack deploys %s, a notify function nothing invokes", id)
		}
	}
	rec := env(s.LogicalID(t, "AWS::Lambda::Function", "TasksReconcilerFunction"))
	if !strings.Contains(JSON(rec["FIRE_FUNCTION_ARN"]), fireID) || rec["TARGET_FUNCTION_ARN"] != nil {
		t.Errorf("reconciler environment %s: want FIRE_FUNCTION_ARN the firing function, no TARGET_FUNCTION_ARN", JSON(rec))
	}
}
