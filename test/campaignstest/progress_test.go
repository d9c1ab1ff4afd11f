package campaignstest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/campaigns"
	"github.com/unschedule/unschedule/constructs/webhosting"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/todoapp"
)

// TestEventApiAuthModes: users connect and subscribe with the user pool,
// only IAM publishes; the namespace "campaigns" (campaignapi's) repeats
// that and carries the onSubscribe handler.
func TestEventApiAuthModes(t *testing.T) {
	_, d := synth(t)
	apis := resources(d, "AWS::AppSync::Api")
	if len(apis) != 1 {
		t.Fatalf("%d AppSync APIs, want 1", len(apis))
	}
	var ev map[string]any
	for _, a := range apis {
		ev = props(a)["EventConfig"].(map[string]any)
	}
	pool := logical(t, d, "AWS::Cognito::UserPool", "Users")
	providers := js(ev["AuthProviders"])
	if !strings.Contains(providers, `"AuthType":"AMAZON_COGNITO_USER_POOLS"`) || !strings.Contains(providers, `{"Ref":"`+pool+`"}`) ||
		!strings.Contains(providers, `"AuthType":"AWS_IAM"`) || strings.Contains(providers, "API_KEY") {
		t.Errorf("auth providers %s: want the user pool and IAM, no API key", providers)
	}
	cognito, iam := `[{"AuthType":"AMAZON_COGNITO_USER_POOLS"}]`, `[{"AuthType":"AWS_IAM"}]`
	for k, want := range map[string]string{"ConnectionAuthModes": cognito, "DefaultSubscribeAuthModes": cognito, "DefaultPublishAuthModes": iam} {
		if got := js(ev[k]); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	ns := props(resources(d, "AWS::AppSync::ChannelNamespace")[logical(t, d, "AWS::AppSync::ChannelNamespace", "CampaignsEventApiProgress")])
	if ns["Name"] != campaignapi.ProgressNamespace || campaigns.ProgressNamespace != campaignapi.ProgressNamespace {
		t.Errorf("namespace %v (construct %s), want campaignapi's %s", ns["Name"], campaigns.ProgressNamespace, campaignapi.ProgressNamespace)
	}
	if js(ns["PublishAuthModes"]) != iam || js(ns["SubscribeAuthModes"]) != cognito {
		t.Errorf("namespace publishes with %s, subscribes with %s", js(ns["PublishAuthModes"]), js(ns["SubscribeAuthModes"]))
	}
	src, err := os.ReadFile("../../constructs/campaigns/subscribe.js")
	if err != nil {
		t.Fatal(err)
	}
	code, _ := ns["CodeHandlers"].(string)
	if code != string(src) || !strings.Contains(code, "export function onSubscribe(ctx)") || !strings.Contains(code, "segments[1] !== sub") {
		t.Errorf("namespace code %q: want subscribe.js (onSubscribe, owner segment = sub)", code)
	}
	if ch := campaignapi.ProgressChannel("sub-1", "c1"); ch != "/campaigns/sub-1/c1" {
		t.Errorf("ProgressChannel = %s: the handler reads the owner from the 2nd segment", ch)
	}
}

// match is Lambda's event filtering for what ProgressFilters and the TTL
// timer's filter use: nested objects, and arrays of exact strings,
// {"prefix": …} or {"exists": …}.
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html
func match(pattern, event any) bool {
	switch p := pattern.(type) {
	case map[string]any:
		e, ok := event.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range p {
			if !match(v, e[k]) {
				return false
			}
		}
		return true
	case []any:
		return slices.ContainsFunc(p, func(rule any) bool {
			r, isMap := rule.(map[string]any)
			if !isMap {
				return rule == event
			}
			if exists, ok := r["exists"].(bool); ok {
				return (event != nil) == exists
			}
			s, ok := event.(string)
			return ok && strings.HasPrefix(s, r["prefix"].(string))
		})
	}
	return false
}

// TestProgressStreamMapping: the table streams new images; the progress
// function reads them with batch item failures, bisection, bounded
// retries and record age, and an on-failure queue; its filter passes
// exactly the changes of send tasks and campaign items (the fixture of
// campaignlambda's tests).
func TestProgressStreamMapping(t *testing.T) {
	tp, d := synth(t)
	check(t, func() {
		tp.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"StreamSpecification": map[string]any{"StreamViewType": "NEW_IMAGE"}})
		tp.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(1))
	})
	var esm map[string]any
	for _, m := range resources(d, "AWS::Lambda::EventSourceMapping") {
		esm = props(m)
	}
	fn := logical(t, d, "AWS::Lambda::Function", "CampaignsProgress")
	queue := logical(t, d, "AWS::SQS::Queue", "CampaignsProgressFailureQueue")
	table := logical(t, d, "AWS::DynamoDB::Table", "CampaignsTable")
	for k, want := range map[string]string{
		"FunctionName":               `{"Ref":"` + fn + `"}`,
		"EventSourceArn":             `{"Fn::GetAtt":["` + table + `","StreamArn"]}`,
		"StartingPosition":           `"LATEST"`,
		"FunctionResponseTypes":      `["ReportBatchItemFailures"]`,
		"BisectBatchOnFunctionError": `true`,
		"MaximumRetryAttempts":       `5`,
		"MaximumRecordAgeInSeconds":  `3600`,
		"BatchSize":                  `100`,
		"DestinationConfig":          `{"OnFailure":{"Destination":{"Fn::GetAtt":["` + queue + `","Arn"]}}}`,
	} {
		if got := js(esm[k]); got != want {
			t.Errorf("mapping %s = %s, want %s", k, got, want)
		}
	}
	filters := esm["FilterCriteria"].(map[string]any)["Filters"].([]any)
	var patterns []any
	for _, f := range filters {
		var p any
		if err := json.Unmarshal([]byte(f.(map[string]any)["Pattern"].(string)), &p); err != nil {
			t.Fatal(err)
		}
		patterns = append(patterns, p)
	}
	b, err := os.ReadFile("../../internal/campaigns/campaignlambda/testdata/progress_stream.json")
	if err != nil {
		t.Fatal(err)
	}
	var batch struct{ Records []map[string]any }
	if err := json.Unmarshal(b, &batch); err != nil {
		t.Fatal(err)
	}
	var passed []string
	for _, r := range batch.Records {
		if slices.ContainsFunc(patterns, func(p any) bool { return match(p, r) }) {
			passed = append(passed, r["dynamodb"].(map[string]any)["SequenceNumber"].(string))
		}
	}
	// 101 checkpoint, 102 send record, 107 another key, 110 a removal, 111 an insert.
	if want := []string{"100", "103", "104", "105", "106", "108", "109"}; !slices.Equal(passed, want) {
		t.Errorf("the filter passes records %v, want %v (task and campaign changes)", passed, want)
	}
	q := props(resources(d, "AWS::SQS::Queue")[queue])
	if q["SqsManagedSseEnabled"] != true || q["MessageRetentionPeriod"] != 1209600.0 {
		t.Errorf("failure queue %s: want SSE and 14 days", js(q))
	}
}

// TestProgressFunctionLeastPrivilege: read the campaign table (get,
// query) and its stream, publish on the namespace only, report failed
// batches to its queue; its environment names the Event API.
func TestProgressFunctionLeastPrivilege(t *testing.T) {
	_, d := synth(t)
	role := roleOf(t, d, "CampaignsProgress")
	table := logical(t, d, "AWS::DynamoDB::Table", "CampaignsTable")
	api := logical(t, d, "AWS::AppSync::Api", "CampaignsEventApi")
	queue := logical(t, d, "AWS::SQS::Queue", "CampaignsProgressFailureQueue")
	tableArn, stream := `{"Fn::GetAtt":["`+table+`","Arn"]}`, `{"Fn::GetAtt":["`+table+`","StreamArn"]}`
	want := map[string]string{
		"dynamodb:GetItem": tableArn, "dynamodb:Query": tableArn,
		"dynamodb:DescribeStream": stream, "dynamodb:GetRecords": stream, "dynamodb:GetShardIterator": stream, "dynamodb:ListStreams": `"*"`,
		"sqs:SendMessage": `{"Fn::GetAtt":["` + queue + `","Arn"]}`, "sqs:GetQueueAttributes": `{"Fn::GetAtt":["` + queue + `","Arn"]}`,
		"sqs:GetQueueUrl": `{"Fn::GetAtt":["` + queue + `","Arn"]}`,
	}
	got := actions(d, role)
	for a, res := range got {
		switch {
		case strings.HasPrefix(a, "logs:"):
		case a == "appsync:EventPublish":
			if !strings.Contains(res, `{"Fn::GetAtt":["`+api+`","ApiId"]}`) || !strings.HasSuffix(res, `"/channelNamespace/campaigns"]]}`) ||
				strings.Count(res, "arn:") != 1 || strings.Contains(res, "*") {
				t.Errorf("appsync:EventPublish on %s: want apis/<this api>/channelNamespace/campaigns only", res)
			}
		case want[a] == "":
			t.Errorf("allows %s on %s: not needed", a, res)
		case res != want[a]:
			t.Errorf("%s on %s, want %s", a, res, want[a])
		}
	}
	for a := range want {
		if _, ok := got[a]; !ok {
			t.Errorf("lacks %s", a)
		}
	}
	if _, ok := got["appsync:EventPublish"]; !ok {
		t.Error("lacks appsync:EventPublish")
	}
	for id, r := range resources(d, "AWS::IAM::Policy") {
		if s := js(props(r)); strings.Contains(s, "appsync:") && !strings.Contains(js(props(r)["Roles"]), role) {
			t.Errorf("policy %s grants AppSync to another role: %s", id, s)
		}
	}
	env := js(props(resources(d, "AWS::Lambda::Function")[logical(t, d, "AWS::Lambda::Function", "CampaignsProgress")])["Environment"])
	if !strings.Contains(env, `"CAMPAIGN_EVENTS_HTTP":{"Fn::GetAtt":["`+api+`","Dns.Http"]}`) || !strings.Contains(env, `"CAMPAIGN_TABLE"`) {
		t.Errorf("environment %s: want the table and the Event API's HTTP DNS", env)
	}
	if c.HttpDns == nil || c.RealtimeDns == nil || c.EventApi == nil || c.Progress == nil {
		t.Error("the construct does not expose EventApi, HttpDns, RealtimeDns and Progress")
	}
}

// TestProgressAlarms: every failure path of the live progress alarms:
// the failure queue, the function's errors and lag, its error metrics.
func TestProgressAlarms(t *testing.T) {
	_, d := synth(t)
	queue := logical(t, d, "AWS::SQS::Queue", "CampaignsProgressFailureQueue")
	fn := logical(t, d, "AWS::Lambda::Function", "CampaignsProgress")
	all := resources(d, "AWS::CloudWatch::Alarm")
	for _, tc := range []struct{ prefix, metric, watches string }{
		{"CampaignsProgressFailureAlarm", "ApproximateNumberOfMessagesVisible", queue},
		{"CampaignsProgressErrorsAlarm", "Errors", fn},
		{"CampaignsProgressIteratorAgeAlarm", "IteratorAge", fn},
		{"CampaignsCampaignProgressErrorsAlarm", "CampaignProgressErrors", "campaignprogress"},
		{"CampaignsCampaignProgressMalformedAlarm", "CampaignProgressMalformed", "campaignprogress"},
	} {
		a := props(all[logical(t, d, "AWS::CloudWatch::Alarm", tc.prefix)])
		if a["MetricName"] != tc.metric || !strings.Contains(js(a["Dimensions"]), tc.watches) {
			t.Errorf("%s: %s on %s, want %s on %s", tc.prefix, a["MetricName"], js(a["Dimensions"]), tc.metric, tc.watches)
		}
	}
}

// TestLiveProgressOff: LiveProgress false builds none of it.
func TestLiveProgressOff(t *testing.T) {
	st := newStack(t)
	var x *campaigns.Campaigns
	check(t, func() {
		x = campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{UserPool: pool(st), SenderAddress: "news@example.com",
			LiveProgress: jsii.Bool(false)})
	})
	d := *assertions.Template_FromStack(st, nil).ToJSON()
	for _, typ := range []string{"AWS::AppSync::Api", "AWS::AppSync::ChannelNamespace", "AWS::Lambda::EventSourceMapping"} {
		if n := len(resources(d, typ)); n != 0 {
			t.Errorf("%d %s, want none", n, typ)
		}
	}
	for id, tb := range resources(d, "AWS::DynamoDB::Table") {
		if props(tb)["StreamSpecification"] != nil {
			t.Errorf("table %s has a stream", id)
		}
	}
	if x.EventApi != nil || x.Progress != nil || x.HttpDns != nil || len(x.ErrorAlarms()) != 8 {
		t.Errorf("EventApi %v, Progress %v, %d error alarms: want none of the live progress", x.EventApi, x.Progress, len(x.ErrorAlarms()))
	}
}

// configAsset reads the web app's config.json from a synthesized app.
func configAsset(t *testing.T, outdir string) map[string]string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(outdir, "asset.*"))
	for _, d := range dirs {
		entries, _ := os.ReadDir(d)
		b, err := os.ReadFile(filepath.Join(d, webhosting.ConfigFile))
		if err != nil || len(entries) != 1 {
			continue
		}
		var cfg map[string]string
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatalf("config.json: %v: %s", err, b)
		}
		return cfg
	}
	t.Fatalf("no config.json asset in %s", outdir)
	return nil
}

// todoStack synthesizes the app's stack with the campaigns flag.
func todoStack(t *testing.T, on bool) (st *todoapp.TodoStack, d map[string]any, web map[string]string) {
	t.Helper()
	cfg := todoapp.Config{Name: "dev", RemovalPolicy: "destroy", Campaigns: on}
	if on {
		cfg.CampaignSender = "news@example.com"
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	check(t, func() {
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()),
			Context: &map[string]any{"aws:cdk:bundling-stacks": []string{}}})
		st = todoapp.NewTodoStack(app, "Unschedule-dev", &todoapp.TodoStackProps{Config: cfg, WebPlaceholderIfMissing: true})
		d = *assertions.Template_FromStack(st.Stack, nil).ToJSON()
		web = configAsset(t, *app.Synth(nil).Directory())
	})
	return st, d, web
}
