// Package campaigns_test holds the synth-and-assert tests of
// constructs/campaigns, composed in a test stack with a user pool. One
// package: jsii starts once per process. Bundling is skipped (the Go
// builds are gofn's own tests).
package campaignstest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/campaigns"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

func newStack(t testing.TB) awscdk.Stack {
	t.Helper()
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()),
		Context: &map[string]any{"aws:cdk:bundling-stacks": []string{}}})
	return awscdk.NewStack(app, jsii.String("CampaignsTest"), &awscdk.StackProps{
		Env: &awscdk.Environment{Account: jsii.String("123456789012"), Region: jsii.String("eu-central-1")}})
}

func pool(st awscdk.Stack) awscognito.IUserPool {
	return awscognito.NewUserPool(st, jsii.String("Users"), nil)
}

var (
	once sync.Once
	tpl  assertions.Template
	doc  map[string]any
	c    *campaigns.Campaigns
	err  any
)

// synth builds the test stack once per process.
func synth(t *testing.T) (assertions.Template, map[string]any) {
	t.Helper()
	once.Do(func() {
		defer func() { err = recover() }()
		st := newStack(t)
		c = campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{
			UserPool: pool(st), SenderAddress: "news@example.com", SenderIdentity: "example.com",
			AllowedOrigins: []string{"https://app.example.com"},
		})
		tpl = assertions.Template_FromStack(st, nil)
		doc = *tpl.ToJSON()
	})
	if err != nil {
		t.Fatalf("synth: %v", err)
	}
	return tpl, doc
}

// check turns a failed CDK assertion (a panic) into a test failure.
func check(t *testing.T, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%v", r)
		}
	}()
	f()
}

func resources(d map[string]any, typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range d["Resources"].(map[string]any) {
		m := r.(map[string]any)
		if m["Type"] == typ {
			out[id] = m
		}
	}
	return out
}

func props(r map[string]any) map[string]any { p, _ := r["Properties"].(map[string]any); return p }

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// logical finds the one resource of typ whose id starts with prefix.
func logical(t *testing.T, d map[string]any, typ, prefix string) string {
	t.Helper()
	var found []string
	for id := range resources(d, typ) {
		if strings.HasPrefix(id, prefix) {
			found = append(found, id)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s %s*: found %v, want one", typ, prefix, found)
	}
	return found[0]
}

// statements are every statement of the policies attached to role.
func statements(d map[string]any, roleID string) []map[string]any {
	var out []map[string]any
	for _, pol := range resources(d, "AWS::IAM::Policy") {
		p := props(pol)
		if !strings.Contains(js(p["Roles"]), `"`+roleID+`"`) {
			continue
		}
		for _, s := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			out = append(out, s.(map[string]any))
		}
	}
	return out
}

func roleOf(t *testing.T, d map[string]any, fnPrefix string) string {
	t.Helper()
	fn := resources(d, "AWS::Lambda::Function")[logical(t, d, "AWS::Lambda::Function", fnPrefix)]
	return props(fn)["Role"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
}

// actions maps each action a role's policies allow to the resources, as JSON.
func actions(d map[string]any, roleID string) map[string]string {
	out := map[string]string{}
	for _, s := range statements(d, roleID) {
		acts := s["Action"]
		list, ok := acts.([]any)
		if !ok {
			list = []any{acts}
		}
		for _, a := range list {
			out[a.(string)] += js(s["Resource"])
		}
	}
	return out
}

// TestTableScheduleGroupAndDLQAlarm: with the default timer (the core's
// Scheduler timer) the schedule group, its dead-letter queue and alarm
// are the timer's, under the construct's ids.
func TestTableScheduleGroupAndDLQAlarm(t *testing.T) {
	tp, d := synth(t)
	st, ok := c.Timer.(*scheduleonwrite.SchedulerTimer)
	if !ok {
		t.Fatalf("Timer is %T, want the default *scheduleonwrite.SchedulerTimer", c.Timer)
	}
	check(t, func() {
		tp.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"BillingMode":                      "PAY_PER_REQUEST",
			"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
			"SSESpecification":                 map[string]any{"SSEEnabled": true},
			"GlobalSecondaryIndexes": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"IndexName": "open", "Projection": map[string]any{"ProjectionType": "ALL"}})}),
		})
		tp.ResourceCountIs(jsii.String("AWS::Scheduler::ScheduleGroup"), jsii.Number(1))
	})
	dlq := logical(t, d, "AWS::SQS::Queue", "CampaignsScheduleDeadLetterQueue")
	alarm := props(resources(d, "AWS::CloudWatch::Alarm")[logical(t, d, "AWS::CloudWatch::Alarm", "CampaignsScheduleDeadLetterAlarm")])
	if !strings.Contains(js(alarm["Dimensions"]), dlq) || alarm["Threshold"] != 1.0 {
		t.Fatalf("dead-letter alarm %s does not watch %s at 1", js(alarm), dlq)
	}
	q := props(resources(d, "AWS::SQS::Queue")[dlq])
	if q["SqsManagedSseEnabled"] != true || q["MessageRetentionPeriod"] != 1209600.0 {
		t.Fatalf("dlq %s: want SSE and 14 days", js(q))
	}
	if got := *awscdk.Stack_Of(st.DeadLetterQueue).GetLogicalId(st.DeadLetterQueue.Node().DefaultChild().(awscdk.CfnElement)); got != dlq {
		t.Errorf("the timer's DeadLetterQueue is %s, want %s", got, dlq)
	}
}

func TestSchedulerRoleMayInvokeOnlyTheSendFunction(t *testing.T) {
	_, d := synth(t)
	roleID := logical(t, d, "AWS::IAM::Role", "CampaignsSchedulerRole")
	role := props(resources(d, "AWS::IAM::Role")[roleID])
	trust := js(role["AssumeRolePolicyDocument"])
	group := logical(t, d, "AWS::Scheduler::ScheduleGroup", "CampaignsScheduleGroup")
	// The confused-deputy condition of the shared builder
	// (constructs/internal/schedulegroup): the group's ARN, by its name.
	name, _ := props(resources(d, "AWS::Scheduler::ScheduleGroup")[group])["Name"].(string)
	if name == "" {
		t.Fatalf("the schedule group %s has no literal Name", group)
	}
	for _, want := range []string{`"Service":"scheduler.amazonaws.com"`, `"aws:SourceAccount":"123456789012"`, `"aws:SourceArn":{"Fn::Join"`,
		`:schedule-group/` + name + `"`} {
		if !strings.Contains(trust, want) {
			t.Errorf("trust policy %s lacks %s", trust, want)
		}
	}
	send := logical(t, d, "AWS::Lambda::Function", "CampaignsSend")
	got := actions(d, roleID)
	want := map[string]string{
		"lambda:InvokeFunction": `{"Fn::GetAtt":["` + send + `","Arn"]}`,
		"sqs:SendMessage":       `{"Fn::GetAtt":["` + logical(t, d, "AWS::SQS::Queue", "CampaignsScheduleDeadLetterQueue") + `","Arn"]}`,
	}
	if js(got) != js(want) {
		t.Fatalf("scheduler role allows\n %v\nwant exactly\n %v", got, want)
	}
}

func TestFunctionsHaveLeastPrivilege(t *testing.T) {
	_, d := synth(t)
	cases := []struct {
		fn      string
		allowed []string
	}{
		// The Scheduler timer gave the send function its asynchronous
		// invocation's failure queue (FireFailureQueue).
		// Send and Provision read the campaign's owner in the user pool
		// (the sender check).
		{"CampaignsSend", []string{"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "ses:SendEmail", "secretsmanager:GetSecretValue",
			"cognito-idp:AdminGetUser", "cognito-idp:AdminListGroupsForUser",
			"logs:CreateLogStream", "logs:PutLogEvents", "sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}},
		// The timer's GrantModify: create, move and delete schedules of
		// the group, pass the scheduler role.
		{"CampaignsProvision", []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem", "dynamodb:PutItem",
			"scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule", "iam:PassRole", "lambda:InvokeFunction",
			"cognito-idp:AdminGetUser", "cognito-idp:AdminListGroupsForUser",
			"logs:CreateLogStream", "logs:PutLogEvents", "sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}},
		// GrantModify and GrantRead (GetSchedule, ListSchedules on *).
		{"CampaignsReconciler", []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query", "scheduler:CreateSchedule",
			"scheduler:UpdateSchedule", "scheduler:GetSchedule", "scheduler:DeleteSchedule", "scheduler:ListSchedules", "iam:PassRole", "lambda:InvokeFunction",
			"cognito-idp:AdminGetUser", "cognito-idp:AdminListGroupsForUser",
			"logs:CreateLogStream", "logs:PutLogEvents", "sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}},
		// The timer's GrantDisarm: a cancel deletes schedules, and never
		// creates or moves one, so no CreateSchedule, UpdateSchedule or
		// iam:PassRole. secretsmanager:GetSecretValue: its page cursor key
		// only (TestOnlyTheApiReadsThePageCursorSecret).
		{"CampaignsApi", []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query", "dynamodb:BatchWriteItem",
			"scheduler:DeleteSchedule", "lambda:InvokeFunction", "secretsmanager:GetSecretValue", "logs:CreateLogStream", "logs:PutLogEvents"}},
	}
	ownQueue := map[string]string{"CampaignsSend": "CampaignsExpiryFailureQueue"}
	for _, tc := range cases {
		t.Run(tc.fn, func(t *testing.T) {
			got := actions(d, roleOf(t, d, tc.fn))
			ok := map[string]bool{}
			for _, a := range tc.allowed {
				ok[a] = true
			}
			for a, res := range got {
				queue := tc.fn + "FailureQueue"
				if q, ok := ownQueue[tc.fn]; ok {
					queue = q
				}
				if strings.HasPrefix(a, "sqs:") && !strings.Contains(res, queue) {
					t.Errorf("%s on %s: want its own failure queue only (Lambda's on-failure destination)", a, res)
				}
				if !ok[a] {
					t.Errorf("allows %s on %s: not needed", a, res)
				}
				if strings.Contains(res, `"*"`) && a != "scheduler:ListSchedules" {
					t.Errorf("%s on *", a)
				}
				if strings.HasPrefix(a, "cognito-idp:") && !userPoolArn.MatchString(res) {
					t.Errorf("%s on %s: want the user pool only", a, res)
				}
				if strings.HasPrefix(a, "scheduler:") && a != "scheduler:ListSchedules" && !strings.Contains(res, ":schedule/"+groupName(t, d)+"/*") {
					t.Errorf("%s on %s: want the schedules of the construct's group only", a, res)
				}
			}
			for _, a := range tc.allowed {
				if _, in := got[a]; !in && !strings.HasPrefix(a, "sqs:") {
					t.Errorf("lacks %s", a)
				}
			}
		})
	}
	t.Run("ses:SendEmail on the identity only, From pinned", func(t *testing.T) {
		for _, s := range statements(d, roleOf(t, d, "CampaignsSend")) {
			if js(s["Action"]) == `"ses:SendEmail"` {
				if r := js(s["Resource"]); !strings.Contains(r, ":identity/example.com") || strings.Count(r, ":identity/") != 1 {
					t.Errorf("ses:SendEmail on %s", r)
				}
				if !strings.Contains(js(s["Condition"]), `"ses:FromAddress":"news@example.com"`) {
					t.Errorf("condition %s", js(s["Condition"]))
				}
			}
		}
	})
	t.Run("schedule grants stop at the group", func(t *testing.T) {
		got := actions(d, roleOf(t, d, "CampaignsProvision"))["scheduler:CreateSchedule"]
		if !strings.Contains(got, ":schedule/"+groupName(t, d)+"/*") || strings.Count(got, ":schedule/") != 1 {
			t.Errorf("CreateSchedule on %s", got)
		}
		pass := ""
		for _, s := range statements(d, roleOf(t, d, "CampaignsProvision")) {
			if js(s["Action"]) == `"iam:PassRole"` {
				pass = js(s)
			}
		}
		if !strings.Contains(pass, `"iam:PassedToService":"scheduler.amazonaws.com"`) || !strings.Contains(pass, "CampaignsSchedulerRole") {
			t.Errorf("PassRole %s: want the scheduler role, to the scheduler only", pass)
		}
	})
}

func TestProvisionMayInvokeItself(t *testing.T) {
	_, d := synth(t)
	prov := logical(t, d, "AWS::Lambda::Function", "CampaignsProvision")
	pol := props(resources(d, "AWS::IAM::Policy")[logical(t, d, "AWS::IAM::Policy", "CampaignsProvisionSelfInvoke")])
	want := `{"Action":"lambda:InvokeFunction","Effect":"Allow","Resource":{"Fn::GetAtt":["` + prov + `","Arn"]}}`
	if got := js(pol["PolicyDocument"].(map[string]any)["Statement"]); got != "["+want+"]" {
		t.Fatalf("self-invoke policy %s, want [%s]", got, want)
	}
	if !strings.Contains(js(pol["Roles"]), roleOf(t, d, "CampaignsProvision")) {
		t.Fatalf("self-invoke policy attached to %s", js(pol["Roles"]))
	}
	env := js(props(resources(d, "AWS::Lambda::Function")[prov])["Environment"])
	send := logical(t, d, "AWS::Lambda::Function", "CampaignsSend")
	for _, k := range []string{`"UNSCHEDULE_TIMER":"EventBridgeScheduler"`, `"SCHEDULE_TARGET_ARN":{"Fn::GetAtt":["` + send + `","Arn"]}`,
		"SCHEDULER_ROLE_ARN", "SCHEDULER_DLQ_ARN", "SCHEDULE_GROUP", `"PROVISION_MARGIN_SEC":"90"`} {
		if !strings.Contains(env, k) {
			t.Errorf("provision environment %s lacks %s", env, k)
		}
	}
	if strings.Contains(env, "SEND_FUNCTION_ARN") {
		t.Errorf("provision environment %s has SEND_FUNCTION_ARN: the timer's SCHEDULE_TARGET_ARN names the send function", env)
	}
	if props(resources(d, "AWS::Lambda::Function")[prov])["Timeout"] != 900.0 {
		t.Errorf("provision timeout, want 900")
	}
}

func TestReconcilerRuleAndAsyncConfig(t *testing.T) {
	tp, d := synth(t)
	rec := logical(t, d, "AWS::Lambda::Function", "CampaignsReconciler")
	rule := props(resources(d, "AWS::Events::Rule")[logical(t, d, "AWS::Events::Rule", "CampaignsReconcilerSchedule")])
	if rule["ScheduleExpression"] != "rate(30 minutes)" || !strings.Contains(js(rule["Targets"]), rec) {
		t.Fatalf("rule %s", js(rule))
	}
	check(t, func() {
		tp.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
			"Action": "lambda:InvokeFunction", "Principal": "events.amazonaws.com",
			"FunctionName": map[string]any{"Fn::GetAtt": []any{rec, "Arn"}},
		})
		// provisioning, send, reconciler and the bounce handler.
		tp.ResourceCountIs(jsii.String("AWS::Lambda::EventInvokeConfig"), jsii.Number(4))
		tp.HasResourceProperties(jsii.String("AWS::Lambda::EventInvokeConfig"), map[string]any{
			"FunctionName": map[string]any{"Ref": rec}, "MaximumRetryAttempts": 0.0, "MaximumEventAgeInSeconds": 1800.0})
	})
}

func TestApiRoutesBehindCognito(t *testing.T) {
	_, d := synth(t)
	methods := resources(d, "AWS::ApiGateway::Method")
	n := 0
	for id, m := range methods {
		p := props(m)
		if p["HttpMethod"] == "OPTIONS" || strings.Contains(js(p["ResourceId"]), "unsubscribe") { // public: TestUnsubscribeIsPublicAndSigned
			continue
		}
		n++
		if p["AuthorizationType"] != "COGNITO_USER_POOLS" {
			t.Errorf("%s: authorization %v", id, p["AuthorizationType"])
		}
	}
	if n != 6 {
		t.Errorf("%d methods, want 6 (create, list, preview, get, provision, cancel)", n)
	}
	auth := props(resources(d, "AWS::ApiGateway::Authorizer")[logical(t, d, "AWS::ApiGateway::Authorizer", "CampaignsAuthorizer")])
	if !strings.Contains(js(auth["ProviderARNs"]), "Users") {
		t.Errorf("authorizer %s: want the user pool", js(auth))
	}
}

// Sign-up is open, so the API needs more than a valid token: the
// construct creates the sender group in the user pool and tells the API
// function its name (the function refuses non-members with 403).
func TestSenderGroupGatesTheApi(t *testing.T) {
	for _, tc := range []struct{ name, prop, want string }{
		{"default", "", "campaign-senders"},
		{"named", "newsletter.editors", "newsletter.editors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d map[string]any
			want := tc.want
			if tc.prop == "" {
				_, d = synth(t)
			} else {
				st := newStack(t)
				campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{UserPool: pool(st),
					SenderAddress: "news@example.com", SenderGroup: tc.prop})
				d = *assertions.Template_FromStack(st, nil).ToJSON()
			}
			groups := resources(d, "AWS::Cognito::UserPoolGroup")
			if len(groups) != 1 {
				t.Fatalf("%d user pool groups, want the sender group: %s", len(groups), js(groups))
			}
			for _, g := range groups {
				if p := props(g); p["GroupName"] != want || !strings.Contains(js(p["UserPoolId"]), `{"Ref":"Users`) || p["RoleArn"] != nil {
					t.Errorf("group %s: want %q in the user pool, with no IAM role", js(p), want)
				}
			}
			fn := props(resources(d, "AWS::Lambda::Function")[logical(t, d, "AWS::Lambda::Function", "CampaignsApi")])
			if env := js(fn["Environment"]); !strings.Contains(env, `"SENDER_GROUP":"`+want+`"`) {
				t.Errorf("API function environment %s lacks SENDER_GROUP=%s", env, want)
			}
		})
	}
}

// userPoolArn matches the test pool's ARN, and nothing else.
var userPoolArn = regexp.MustCompile(`^\{"Fn::GetAtt":\["Users[0-9A-F]{8}","Arn"\]\}$`)

// TestSenderCheckReadsTheOwnerInThePool: the provisioning, send and
// reconciler functions, and only they, may read a user (AdminGetUser) and their
// groups (AdminListGroupsForUser), on the construct's user pool only, and
// get the pool, the sender group and the sender domains in their
// environment (cognitosenders.Load).
func TestSenderCheckReadsTheOwnerInThePool(t *testing.T) {
	st := newStack(t)
	campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{UserPool: pool(st),
		SenderAddress: "news@example.com", SenderEmailDomains: []string{"Example.com", "example.org"}})
	d := *assertions.Template_FromStack(st, nil).ToJSON()
	want := []string{"cognito-idp:AdminGetUser", "cognito-idp:AdminListGroupsForUser"}
	for id, fn := range resources(d, "AWS::Lambda::Function") {
		role, ok := props(fn)["Role"].(map[string]any)
		if !ok {
			continue
		}
		got := actions(d, role["Fn::GetAtt"].([]any)[0].(string))
		checks := strings.HasPrefix(id, "CampaignsSend") || strings.HasPrefix(id, "CampaignsProvision") || strings.HasPrefix(id, "CampaignsReconciler")
		for _, a := range want {
			res, has := got[a]
			switch {
			case checks && !has:
				t.Errorf("%s lacks %s", id, a)
			case !checks && has:
				t.Errorf("%s may %s: only the send, provisioning and reconciler functions check senders", id, a)
			case has && !userPoolArn.MatchString(res):
				t.Errorf("%s may %s on %s: want the user pool only", id, a, res)
			}
		}
		for a := range got {
			if strings.HasPrefix(a, "cognito-idp:") && !slices.Contains(want, a) {
				t.Errorf("%s may %s: not needed", id, a)
			}
		}
		if !checks {
			continue
		}
		env := js(props(fn)["Environment"])
		for _, kv := range []string{`"USER_POOL_ID":{"Ref":"Users`, `"SENDER_GROUP":"campaign-senders"`, `"ALLOWED_EMAIL_DOMAINS":"example.com,example.org"`} {
			if !strings.Contains(env, kv) {
				t.Errorf("%s environment %s lacks %s", id, env, kv)
			}
		}
	}
}

func TestEveryErrorMetricIsAlarmed(t *testing.T) {
	_, d := synth(t)
	alarmed := map[string]bool{}
	for _, a := range resources(d, "AWS::CloudWatch::Alarm") {
		if name, ok := props(a)["MetricName"].(string); ok {
			alarmed[name] = true
		}
	}
	for _, fn := range []string{campaignmetrics.FunctionCampaignAPI, campaignmetrics.FunctionCampaignProvision, campaignmetrics.FunctionCampaignSend, campaignmetrics.FunctionCampaignReconciler,
		campaignmetrics.FunctionCampaignProgress} {
		if len(campaignmetrics.CampaignErrorMetrics[fn]) == 0 || len(metrics.ErrorMetrics[fn]) != 0 {
			t.Errorf("%s: error metrics %v, want some, and none in ErrorMetrics (operations would alarm on them in an app without campaigns)", fn, campaignmetrics.CampaignErrorMetrics[fn])
		}
		for _, m := range campaignmetrics.CampaignErrorMetrics[fn] {
			if !alarmed[m] {
				t.Errorf("error metric %s of %s has no alarm", m, fn)
			}
		}
	}
	if n := len(c.ErrorAlarms()); n != 10 {
		t.Errorf("ErrorAlarms: %d, want one per error metric (10)", n)
	}
	for _, m := range []string{"Errors", "AsyncEventsDropped", "DestinationDeliveryFailures", "5XXError"} {
		if !alarmed[m] {
			t.Errorf("no alarm on %s", m)
		}
	}
}

func TestValidation(t *testing.T) {
	sec := func(n float64) awscdk.Duration { return awscdk.Duration_Seconds(jsii.Number(n)) }
	cases := []struct {
		name string
		set  func(p *campaigns.CampaignsProps)
		want string // "" = valid
	}{
		{"defaults", func(*campaigns.CampaignsProps) {}, ""},
		{"no user pool", func(p *campaigns.CampaignsProps) { p.UserPool = nil }, "UserPool is required"},
		{"sender not an address", func(p *campaigns.CampaignsProps) { p.SenderAddress = "News <n@example.com>" }, "plain email address"},
		{"identity not covering the sender", func(p *campaigns.CampaignsProps) { p.SenderIdentity = "other.org" }, `its domain "example.com"`},
		{"timeout over Lambda's", func(p *campaigns.CampaignsProps) { p.ProvisionTimeout = sec(901) }, "ProvisionTimeout must be"},
		{"margin eats the timeout", func(p *campaigns.CampaignsProps) { p.ProvisionTimeout, p.ProvisionMargin = sec(120), sec(100) }, "lower the margin"},
		{"reconcile too often", func(p *campaigns.CampaignsProps) { p.ReconcileEvery = sec(60) }, "ReconcileEvery must be"},
		{"reconcile not whole minutes", func(p *campaigns.CampaignsProps) { p.ReconcileEvery = sec(330) }, "whole minutes"},
		{"calls per second", func(p *campaigns.CampaignsProps) { p.SchedulerCallsPerSecond = 0.5 }, "SchedulerCallsPerSecond must be"},
		{"group with a comma", func(p *campaigns.CampaignsProps) { p.SenderGroup = "senders,admins" }, `SenderGroup "senders,admins" is not a group name`},
		{"group with a space", func(p *campaigns.CampaignsProps) { p.SenderGroup = "campaign senders" }, "letters, digits"},
		{"sender domain an address", func(p *campaigns.CampaignsProps) { p.SenderEmailDomains = []string{"ann@example.com"} }, `SenderEmailDomains holds "ann@example.com", which is not a domain: list bare domains`},
		{"sender domains", func(p *campaigns.CampaignsProps) { p.SenderEmailDomains = []string{"example.com", "example.org"} }, ""},
		{"http origin", func(p *campaigns.CampaignsProps) { p.AllowedOrigins = []string{"http://app.example.com"} }, "https://"},
		{"suppression list with a separator", func(p *campaigns.CampaignsProps) { p.SuppressionListId = "news#1" }, `SuppressionListId "news#1" is not a list id`},
		{"suppression list named by a former sender", func(p *campaigns.CampaignsProps) { p.SuppressionListId = "Old.News+x@example.com" }, ""},
		{"unsubscribe rate", func(p *campaigns.CampaignsProps) { p.UnsubscribeThrottlingRateLimit = 0.5 }, "UnsubscribeThrottlingRateLimit must be"},
		{"a day's period", func(p *campaigns.CampaignsProps) { p.ReconcileEvery = awscdk.Duration_Days(jsii.Number(1)) }, ""},
		{"table both ways", func(p *campaigns.CampaignsProps) {
			p.ExistingTable, p.TableProps = importedTable(p, true), &awsdynamodb.TableProps{}
		}, "ExistingTable and TableProps are both set"},
		{"table props with keys", func(p *campaigns.CampaignsProps) {
			p.TableProps = &awsdynamodb.TableProps{PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING}}
		}, "leave PartitionKey and SortKey unset"},
		{"table props", func(p *campaigns.CampaignsProps) {
			p.TableProps = &awsdynamodb.TableProps{DeletionProtection: jsii.Bool(true)}
		}, ""},
		{"existing table without a stream", func(p *campaigns.CampaignsProps) { p.ExistingTable = importedTable(p, false) }, "LiveProgress false"},
		{"existing table without a stream, no live progress", func(p *campaigns.CampaignsProps) {
			p.ExistingTable, p.LiveProgress = importedTable(p, false), jsii.Bool(false)
		}, ""},
		{"existing table with a stream", func(p *campaigns.CampaignsProps) { p.ExistingTable = importedTable(p, true) }, ""},
		{"existing table keyed otherwise", func(p *campaigns.CampaignsProps) {
			p.ExistingTable = awsdynamodb.NewTable(awscdk.Stack_Of(p.UserPool), jsii.String("Mine"), &awsdynamodb.TableProps{
				PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
				Stream:       awsdynamodb.StreamViewType_NEW_IMAGE})
		}, `create the table with those keys`},
		{"existing table and deletion protection", func(p *campaigns.CampaignsProps) {
			p.ExistingTable, p.DeletionProtection = importedTable(p, true), jsii.Bool(true)
		}, "set it on your table instead"},
		{"dead-letter queue both ways", func(p *campaigns.CampaignsProps) {
			p.ExistingDeadLetterQueue, p.DeadLetterQueueProps = awssqs.NewQueue(awscdk.Stack_Of(p.UserPool), jsii.String("Q"), nil), &awssqs.QueueProps{}
		}, "ExistingDeadLetterQueue and DeadLetterQueueProps are both set"},
		{"fifo dead-letter queue", func(p *campaigns.CampaignsProps) {
			p.ExistingDeadLetterQueue = awssqs.NewQueue(awscdk.Stack_Of(p.UserPool), jsii.String("Q"), &awssqs.QueueProps{Fifo: jsii.Bool(true)})
		}, "only a standard queue"},
		{"existing dead-letter queue", func(p *campaigns.CampaignsProps) {
			p.ExistingDeadLetterQueue = awssqs.NewQueue(awscdk.Stack_Of(p.UserPool), jsii.String("Q"), nil)
		}, ""},
		{"a timer and a dead-letter queue", func(p *campaigns.CampaignsProps) {
			p.Timer, p.ExistingDeadLetterQueue = scheduleonwrite.NewSchedulerTimer(nil), awssqs.NewQueue(awscdk.Stack_Of(p.UserPool), jsii.String("Q"), nil)
		}, "pass them in the timer's props instead"},
		{"Step Functions timer", func(p *campaigns.CampaignsProps) { p.Timer = scheduleonwrite.NewStepFunctionsTimer(nil) }, ""},
		{"TTL timer on its own attribute", func(p *campaigns.CampaignsProps) {
			p.Timer = scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: awscdk.Duration_Days(jsii.Number(3))})
		}, `a table has one TTL attribute: pass scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{TTLAttribute: "expiresAt"`},
		{"TTL timer on expiresAt, no live progress", func(p *campaigns.CampaignsProps) {
			p.Timer, p.LiveProgress = ttlTimer(), jsii.Bool(false)
		}, ""},
		{"TTL timer, existing table streaming new images", func(p *campaigns.CampaignsProps) {
			p.Timer, p.ExistingTable = ttlTimer(), ownTable(p, awsdynamodb.StreamViewType_NEW_IMAGE, limits.ExpiresAttr)
		}, "give it a stream of NEW_AND_OLD_IMAGES"},
		{"TTL timer, existing table without TTL", func(p *campaigns.CampaignsProps) {
			p.Timer, p.ExistingTable = ttlTimer(), ownTable(p, awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES, "")
		}, `enable TTL on attribute "expiresAt"`},
		{"existing table streaming old images, live progress", func(p *campaigns.CampaignsProps) {
			p.ExistingTable = ownTable(p, awsdynamodb.StreamViewType_OLD_IMAGE, limits.ExpiresAttr)
		}, `does not carry the new images LiveProgress reads: give it a stream of NEW_AND_OLD_IMAGES`},
		{"existing table streaming old images, no live progress", func(p *campaigns.CampaignsProps) {
			p.ExistingTable, p.LiveProgress = ownTable(p, awsdynamodb.StreamViewType_OLD_IMAGE, limits.ExpiresAttr), jsii.Bool(false)
		}, ""},
		{"TTL timer, existing table as it needs", func(p *campaigns.CampaignsProps) {
			p.Timer, p.ExistingTable = ttlTimer(), ownTable(p, awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES, limits.ExpiresAttr)
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := buildPanic(t, tc.set)
			if tc.want == "" && got != "" {
				t.Fatalf("panicked: %s", got)
			}
			if tc.want != "" && (!strings.Contains(got, tc.want) || !strings.HasPrefix(got, "C: ")) {
				t.Fatalf("panic %q, want one naming the construct and saying %q", got, tc.want)
			}
		})
	}
}

// TestTodoAppWithCampaigns: the app's `campaigns` flag adds the construct
// to the to-do stack, on the app's user pool, with the web app's config
// keys (the campaign API's URL, the Event API's DNS names) and an output
// for each; without the flag the stack has none of it.
func TestTodoAppWithCampaigns(t *testing.T) {
	keys := map[string]string{"campaignsApiUrl": "CampaignApiUrl", "campaignEventsHttp": "CampaignEventsHttp", "campaignEventsRealtime": "CampaignEventsRealtime"}
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("campaigns=", on), func(t *testing.T) {
			st, d, web := todoStack(t, on)
			if (st.Campaigns != nil) != on {
				t.Fatalf("Campaigns = %v with the flag %v", st.Campaigns, on)
			}
			outs, _ := d["Outputs"].(map[string]any)
			for key, output := range keys {
				if _, ok := outs[output]; ok != on {
					t.Errorf("%s output present = %v, want %v", output, ok, on)
				}
				if v, ok := web[key]; ok != on || (on && !strings.Contains(v, "<<marker:")) {
					t.Errorf("config.json %s = %q (present %v), want a deploy-time value: %v", key, v, ok, on)
				}
			}
			// Any user may be made a sender, whose address must be
			// verified: with campaigns on, every sign-up confirms by code.
			presignup := props(resources(d, "AWS::Lambda::Function")[logical(t, d, "AWS::Lambda::Function", "AuthPreSignUp")])
			if env := js(presignup["Environment"]); !strings.Contains(env, fmt.Sprintf(`"VERIFY_EMAIL_BY_CODE":"%v"`, on)) {
				t.Errorf("PreSignUp environment %s, want VERIFY_EMAIL_BY_CODE=%v", env, on)
			}
			if got, want := len(resources(d, "AWS::Scheduler::ScheduleGroup")), map[bool]int{false: 1, true: 2}[on]; got != want {
				t.Errorf("%d schedule groups, want %d", got, want)
			}
			if !on {
				return
			}
			// One builder made both scheduler roles: each trusts the
			// scheduler only for its own group, in this account.
			for _, prefix := range []string{"Tasks", "Campaigns"} {
				group := logical(t, d, "AWS::Scheduler::ScheduleGroup", prefix+"ScheduleGroup")
				name, _ := props(resources(d, "AWS::Scheduler::ScheduleGroup")[group])["Name"].(string)
				trust := js(props(resources(d, "AWS::IAM::Role")[logical(t, d, "AWS::IAM::Role", prefix+"SchedulerRole")])["AssumeRolePolicyDocument"])
				groupRef := `{"Ref":"` + group + `"}`
				if name != "" {
					groupRef = ":schedule-group/" + name
				}
				for _, want := range []string{`"Service":"scheduler.amazonaws.com"`, `"StringEquals":{"aws:SourceAccount":{"Ref":"AWS::AccountId"}`,
					`"aws:SourceArn":{"Fn::Join"`, `:schedule-group/`, groupRef} {
					if !strings.Contains(trust, want) {
						t.Errorf("%s scheduler role trust %s lacks %s", prefix, trust, want)
					}
				}
			}
			api := logical(t, d, "AWS::AppSync::Api", "CampaignsEventApi")
			for output, attr := range map[string]string{"CampaignEventsHttp": "Dns.Http", "CampaignEventsRealtime": "Dns.Realtime"} {
				if got := js(outs[output].(map[string]any)["Value"]); got != `{"Fn::GetAtt":["`+api+`","`+attr+`"]}` {
					t.Errorf("%s = %s, want the Event API's %s", output, got, attr)
				}
			}
			var markers string
			for _, r := range resources(d, "Custom::CDKBucketDeployment") {
				markers += js(props(r)["SourceMarkers"])
			}
			restApi := logical(t, d, "AWS::ApiGateway::RestApi", "CampaignsRestApi")
			for _, want := range []string{`"Dns.Http"`, `"Dns.Realtime"`, restApi} {
				if !strings.Contains(markers, want) {
					t.Errorf("config.json's deploy-time values lack %s: %s", want, markers)
				}
			}
			// The campaign API allows the hosted app's origin.
			cors := ""
			for _, m := range resources(d, "AWS::ApiGateway::Method") {
				if p := props(m); p["HttpMethod"] == "OPTIONS" && strings.Contains(js(p["RestApiId"]), restApi) {
					cors += js(p["Integration"])
				}
			}
			if !strings.Contains(cors, "DefaultDomain") {
				t.Errorf("the campaign API's CORS does not name the web app's origin: %s", cors)
			}
		})
	}
}

// TestFunctionEnvNamesAreEnvvars: every variable the construct sets on a
// function is a name from internal/core/envvars, which the mains read.
func TestFunctionEnvNamesAreEnvvars(t *testing.T) {
	_, d := synth(t)
	if bad := envvars.Unknown(d); len(bad) > 0 {
		t.Errorf("functions set variables not in internal/core/envvars: %v", bad)
	}
}

// TestAlarmsListsEveryAlarm: the construct's Alarms() (typed fields, no
// string-keyed map) reaches every alarm it synthesizes, each once.
func TestAlarmsListsEveryAlarm(t *testing.T) {
	_, d := synth(t)
	seen := map[string]bool{}
	for _, a := range c.Alarms() {
		id := *a.Node().Id()
		if seen[id] {
			t.Errorf("Alarms() lists %s twice", id)
		}
		seen[id] = true
	}
	if got, want := len(seen), len(resources(d, "AWS::CloudWatch::Alarm")); got != want {
		t.Errorf("Alarms() lists %d alarms, the template has %d", got, want)
	}
	if c.ProvisionAsync.Queue == nil || c.SendAsync.Queue == nil || c.ReconcilerAsync.Queue == nil || c.ErrorsAlarms.Progress == nil {
		t.Errorf("typed fields left nil: %+v %+v", c.ProvisionAsync, c.ErrorsAlarms)
	}
}

// importedTable is a table imported by name, with a stream or not.
func importedTable(p *campaigns.CampaignsProps, stream bool) awsdynamodb.ITable {
	attrs := &awsdynamodb.TableAttributes{TableName: jsii.String("campaigns")}
	if stream {
		attrs.TableStreamArn = jsii.String("arn:aws:dynamodb:eu-central-1:123456789012:table/campaigns/stream/2026-01-01T00:00:00.000")
	}
	return awsdynamodb.Table_FromTableAttributes(awscdk.Stack_Of(p.UserPool), jsii.String("Imported"), attrs)
}

// TestGrantsAndMetrics: the Grant methods give exactly their actions on
// the construct's own resources; the Metric methods name the functions'
// EMF metrics; every error metric has its typed alarm field.
func TestGrantsAndMetrics(t *testing.T) {
	st := newStack(t)
	x := campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{UserPool: pool(st), SenderAddress: "news@example.com"})
	role := awsiam.NewRole(st, jsii.String("Mine"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	x.GrantManageSchedules(role)
	x.GrantReadCampaigns(role)
	x.GrantStartProvisioning(role)
	d := *assertions.Template_FromStack(st, nil).ToJSON()
	got := actions(d, logical(t, d, "AWS::IAM::Role", "Mine"))
	// GrantManageSchedules is the timer's GrantModify and GrantRead.
	want := []string{"scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:GetSchedule", "scheduler:DeleteSchedule",
		"scheduler:ListSchedules", "iam:PassRole", "dynamodb:GetItem", "dynamodb:Query", "lambda:InvokeFunction"}
	for _, a := range want {
		if _, ok := got[a]; !ok {
			t.Errorf("grants lack %s: %v", a, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("grants give %v, want exactly the %d actions above", got, len(want))
	}
	if r := got["scheduler:CreateSchedule"]; !strings.Contains(r, ":schedule/"+groupName(t, d)+"/*") {
		t.Errorf("schedule grant on %s, want the group's schedules only", r)
	}
	for _, m := range []struct {
		metric   awscloudwatch.Metric
		fn, name string
	}{
		{x.MetricSends(nil), campaignmetrics.FunctionCampaignSend, campaignmetrics.CampaignSendsSent},
		{x.MetricSendErrors(nil), campaignmetrics.FunctionCampaignSend, campaignmetrics.CampaignSendErrors},
		{x.MetricSendsFailed(nil), campaignmetrics.FunctionCampaignSend, campaignmetrics.CampaignSendsFailed},
		{x.MetricSendsSkipped(nil), campaignmetrics.FunctionCampaignSend, campaignmetrics.CampaignSendsSkipped},
		{x.MetricSchedulesCreated(nil), campaignmetrics.FunctionCampaignProvision, campaignmetrics.CampaignSchedulesCreated},
		{x.MetricProvisionThrottles(nil), campaignmetrics.FunctionCampaignProvision, campaignmetrics.CampaignProvisionThrottles},
	} {
		if *m.metric.MetricName() != m.name || !strings.Contains(js(m.metric.Dimensions()), m.fn) {
			t.Errorf("metric %s %v, want %s of %s", *m.metric.MetricName(), js(m.metric.Dimensions()), m.name, m.fn)
		}
	}
	a := x.MetricAlarms
	for name, f := range map[string]awscloudwatch.Alarm{"ApiServerErrors": a.ApiServerErrors, "ProvisionErrors": a.ProvisionErrors, "ProvisionLeft": a.ProvisionLeft,
		"SendErrors": a.SendErrors, "SendBadInput": a.SendBadInput, "SendsFailed": a.SendsFailed, "ReconcilerErrors": a.ReconcilerErrors,
		"ReconcileFailed": a.ReconcileFailed, "ProgressErrors": a.ProgressErrors, "ProgressMalformed": a.ProgressMalformed} {
		if f == nil {
			t.Errorf("MetricAlarms.%s is nil", name)
		}
	}
}

// ttlTimer is the TTL timer as the campaign table needs it (TTL on the
// limits' attribute).
func ttlTimer() scheduleonwrite.Timer {
	return scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: awscdk.Duration_Days(jsii.Number(3)), TTLAttribute: limits.ExpiresAttr})
}

// ownTable is a campaign table of the app's own, with the campaign keys
// and indexes, the stream view and TTL on ttl ("" for none).
func ownTable(p *campaigns.CampaignsProps, view awsdynamodb.StreamViewType, ttl string) awsdynamodb.ITable {
	str := func(n string) *awsdynamodb.Attribute {
		return &awsdynamodb.Attribute{Name: jsii.String(n), Type: awsdynamodb.AttributeType_STRING}
	}
	tp := &awsdynamodb.TableProps{PartitionKey: str("pk"), SortKey: str("sk"), Stream: view}
	if ttl != "" {
		tp.TimeToLiveAttribute = jsii.String(ttl)
	}
	t := awsdynamodb.NewTable(awscdk.Stack_Of(p.UserPool), jsii.String("Mine"), tp)
	t.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{IndexName: jsii.String("open"), PartitionKey: str("openShard"), SortKey: str("sk")})
	t.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{IndexName: jsii.String("owner"), PartitionKey: str("owner"), SortKey: str("createdAt")})
	return t
}

// groupName is the literal name of the one schedule group.
func groupName(t *testing.T, d map[string]any) string {
	t.Helper()
	name, _ := props(resources(d, "AWS::Scheduler::ScheduleGroup")[logical(t, d, "AWS::Scheduler::ScheduleGroup", "CampaignsScheduleGroup")])["Name"].(string)
	if name == "" {
		t.Fatal("the schedule group has no literal Name")
	}
	return name
}

// buildPanic builds the campaigns construct with set applied to minimal
// props, and returns what it panicked with ("" when it did not).
func buildPanic(t *testing.T, set func(*campaigns.CampaignsProps)) (got string) {
	t.Helper()
	st := newStack(t)
	p := &campaigns.CampaignsProps{UserPool: pool(st), SenderAddress: "news@example.com"}
	set(p)
	defer func() {
		if r := recover(); r != nil {
			got = fmt.Sprint(r)
		}
	}()
	campaigns.NewCampaigns(st, jsii.String("C"), p)
	return ""
}

// The page cursor key is the API function's alone: its environment
// names the secret, and no other role may read it.
func TestOnlyTheApiReadsThePageCursorSecret(t *testing.T) {
	_, d := synth(t)
	secret := logical(t, d, "AWS::SecretsManager::Secret", "CampaignsPageCursorSecret")
	if got := envOf(t, d, "CampaignsApi")[envvars.PageCursorSecretArn]; got != fmt.Sprintf(`{"Ref":%q}`, secret) {
		t.Errorf("api env %s=%s", envvars.PageCursorSecretArn, got)
	}
	readers := map[string]bool{}
	for _, pol := range resources(d, "AWS::IAM::Policy") {
		doc := js(props(pol)["PolicyDocument"])
		if !strings.Contains(doc, `{"Ref":"`+secret+`"}`) {
			continue
		}
		if !strings.Contains(doc, `"Action":"secretsmanager:GetSecretValue","Effect":"Allow","Resource":{"Ref":"`+secret+`"}`) {
			t.Errorf("cursor secret grant %s", doc)
		}
		readers[js(props(pol)["Roles"])] = true
	}
	if want := map[string]bool{fmt.Sprintf(`[{"Ref":%q}]`, roleOf(t, d, "CampaignsApi")): true}; fmt.Sprint(readers) != fmt.Sprint(want) {
		t.Errorf("cursor secret readers %v, want %v", readers, want)
	}
}
