package test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/todometrics"
)

// What a real account needs beyond the happy
// path: a per-user cap, WAF in prod, who made each request, alarms on the
// API's 5xx, log groups and queues that follow the environment's removal
// policy, deletion protection in prod, and the link in expiry emails.

// TestApiAccessLogNamesTheCaller pins the access log format exactly: the
// standard fields and the caller's Cognito sub.
func TestApiAccessLogNamesTheCaller(t *testing.T) {
	s := Stack(t, "dev")
	stages := s.Resources("AWS::ApiGateway::Stage")
	if len(stages) != 1 {
		t.Fatalf("%d stages", len(stages))
	}
	for _, st := range stages {
		setting, _ := Props(st)["AccessLogSetting"].(map[string]any)
		format, _ := setting["Format"].(string)
		var got map[string]string
		if err := json.Unmarshal([]byte(format), &got); err != nil {
			t.Fatalf("access log format is not one JSON object: %q", format)
		}
		want := map[string]string{
			"requestId": "$context.requestId", "ip": "$context.identity.sourceIp", "user": "$context.identity.user",
			"sub":         "$context.authorizer.claims.sub",
			"requestTime": "$context.requestTime", "httpMethod": "$context.httpMethod", "resourcePath": "$context.resourcePath",
			"status": "$context.status", "protocol": "$context.protocol", "responseLength": "$context.responseLength",
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("access log format:\n got %v\nwant %v", got, want)
		}
		logs := s.LogicalID(t, "AWS::Logs::LogGroup", "ApiAccessLogs")
		if !strings.Contains(JSON(setting["DestinationArn"]), `"Ref": "`+logs+`"`) {
			t.Fatalf("access logs go to %s, want %s", JSON(setting["DestinationArn"]), logs)
		}
	}
}

// TestApiServerErrorsAlarm: one alarm on the stage's 5XXError, one on the
// handler's ApiServerErrors (as the handler emits it: Stack and Function
// dimensions), both to the alarm topic.
func TestApiServerErrorsAlarm(t *testing.T) {
	s := Stack(t, "dev")
	topic := s.LogicalID(t, "AWS::SNS::Topic", "AlarmTopic")
	found := map[string]string{}
	for id, a := range s.Resources("AWS::CloudWatch::Alarm") {
		p := Props(a)
		name, _ := p["MetricName"].(string)
		if name != "5XXError" && name != todometrics.ApiServerErrors {
			continue
		}
		found[name] = id
		if !strings.Contains(JSON(p["AlarmActions"]), topic) || p["Threshold"] != float64(1) || p["Statistic"] != "Sum" {
			t.Errorf("alarm %s: %s", id, JSON(p))
		}
		dims := JSON(p["Dimensions"])
		switch name {
		case "5XXError":
			if p["Namespace"] != "AWS/ApiGateway" || !strings.Contains(dims, `"ApiName"`) || !strings.Contains(dims, `"Stage"`) {
				t.Errorf("5XXError alarm %s watches %s %s, want the API's stage", id, p["Namespace"], dims)
			}
		default:
			if p["Namespace"] != metrics.Namespace || !strings.Contains(dims, `"Value": "`+todometrics.FunctionAPI+`"`) {
				t.Errorf("ApiServerErrors alarm %s watches %s %s, want the api function's metric", id, p["Namespace"], dims)
			}
		}
	}
	if len(found) != 2 {
		t.Fatalf("alarms found: %v, want one on 5XXError and one on %s", found, todometrics.ApiServerErrors)
	}
}

// TestPendingCapReachesTheHandler: the cap from cdk.json reaches the API
// function, the table has the local index it counts on, and the function
// may query that index only.
func TestPendingCapReachesTheHandler(t *testing.T) {
	s := Stack(t, "dev")
	fn := Props(s.Resources("AWS::Lambda::Function")[s.LogicalID(t, "AWS::Lambda::Function", "ApiHandler")])
	if v := JSON(fn["Environment"]); !strings.Contains(v, `"MAX_PENDING_TASKS_PER_USER": "1000"`) {
		t.Fatalf("api environment: %s", v)
	}
	Check(t, func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"LocalSecondaryIndexes": []any{map[string]any{
				"IndexName": tableschema.UserPendingIndex,
				"KeySchema": []any{
					map[string]any{"AttributeName": tableschema.PartitionKey, "KeyType": "HASH"},
					map[string]any{"AttributeName": tableschema.UserPendingAttr, "KeyType": "RANGE"},
				},
				"Projection": map[string]any{"ProjectionType": "KEYS_ONLY"},
			}},
		})
	})
	index := "/index/" + tableschema.UserPendingIndex
	var onIndex []string
	for _, st := range s.FunctionStatements(t, "ApiHandler") {
		if strings.Contains(JSON(st["Resource"]), index) {
			onIndex = append(onIndex, Actions(st)...)
		}
	}
	if !reflect.DeepEqual(onIndex, []string{"dynamodb:Query"}) {
		t.Fatalf("actions on %s: %v, want only dynamodb:Query", index, onIndex)
	}
}

// TestWafOnlyWhereConfigured: prod (waf: true) puts one web ACL on the API
// stage (per IP, per Authorization header, common rule set) and one on the
// user pool (per IP, common rule set), and drops the APIG3 suppression;
// dev has no WAF and keeps the suppression.
func TestWafOnlyWhereConfigured(t *testing.T) {
	apig3 := func(s *synthed) bool {
		for _, r := range s.Resources("AWS::ApiGateway::RestApi") {
			if strings.Contains(JSON(r["Metadata"]), "AwsSolutions-APIG3") {
				return true
			}
		}
		return false
	}
	dev := Stack(t, "dev")
	if n := len(dev.Resources("AWS::WAFv2::WebACL")); n != 0 || !apig3(dev) {
		t.Fatalf("dev: %d web ACLs, APIG3 suppressed %v; want none and suppressed", n, apig3(dev))
	}

	s := Stack(t, "prod")
	if apig3(s) {
		t.Fatal("prod has WAF on the API, but APIG3 is still suppressed")
	}
	acls := s.Resources("AWS::WAFv2::WebACL")
	if len(acls) != 2 {
		t.Fatalf("%d web ACLs, want one for the API and one for the user pool", len(acls))
	}
	stage := s.LogicalID(t, "AWS::ApiGateway::Stage", "Api")
	pool := s.LogicalID(t, "AWS::Cognito::UserPool", "AuthUserPool")
	guarded := map[string]string{} // web ACL -> what it guards
	for _, a := range s.Resources("AWS::WAFv2::WebACLAssociation") {
		p := Props(a)
		acl := p["WebACLArn"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
		switch res := JSON(p["ResourceArn"]); {
		case strings.Contains(res, stage) && strings.Contains(res, "/stages/"):
			guarded[acl] = "api"
		case strings.Contains(res, pool):
			guarded[acl] = "pool"
		default:
			t.Errorf("association to %s", res)
		}
	}
	for id, acl := range acls {
		p := Props(acl)
		if p["Scope"] != "REGIONAL" || JSON(p["DefaultAction"]) != JSON(map[string]any{"Allow": map[string]any{}}) {
			t.Errorf("web ACL %s: scope %v, default %s", id, p["Scope"], JSON(p["DefaultAction"]))
		}
		rules := map[string]map[string]any{}
		for _, r := range asList(p["Rules"]) {
			rule := r.(map[string]any)
			rules[rule["Name"].(string)] = rule["Statement"].(map[string]any)
		}
		perIP, _ := rules["RateLimitPerIp"]["RateBasedStatement"].(map[string]any)
		if perIP["AggregateKeyType"] != "IP" {
			t.Errorf("web ACL %s has no per-IP rate rule: %s", id, JSON(rules))
		}
		common, _ := rules["AWSManagedRulesCommonRuleSet"]["ManagedRuleGroupStatement"].(map[string]any)
		if common["VendorName"] != "AWS" || common["Name"] != "AWSManagedRulesCommonRuleSet" {
			t.Errorf("web ACL %s lacks the AWS common rule set: %s", id, JSON(rules))
		}
		perToken, hasToken := rules["RateLimitPerAuthorization"]["RateBasedStatement"].(map[string]any)
		switch guarded[id] {
		case "api":
			want := []any{map[string]any{"Header": map[string]any{"Name": "authorization",
				"TextTransformations": []any{map[string]any{"Priority": float64(0), "Type": "NONE"}}}}}
			if perToken["AggregateKeyType"] != "CUSTOM_KEYS" || !reflect.DeepEqual(perToken["CustomKeys"], want) {
				t.Errorf("API web ACL: per-Authorization rule %s", JSON(perToken))
			}
			var counted []string
			for _, o := range asList(common["RuleActionOverrides"]) {
				if JSON(o.(map[string]any)["ActionToUse"]) == JSON(map[string]any{"Count": map[string]any{}}) {
					counted = append(counted, o.(map[string]any)["Name"].(string))
				}
			}
			if want := []string{"SizeRestrictions_BODY", "CrossSiteScripting_BODY"}; !reflect.DeepEqual(counted, want) {
				t.Errorf("API web ACL: common rules that only count: %v, want %v", counted, want)
			}
		case "pool":
			if hasToken {
				t.Errorf("user pool web ACL aggregates on Authorization, which Cognito's sign-up and sign-in do not carry")
			}
		default:
			t.Errorf("web ACL %s guards nothing", id)
		}
	}
	if len(guarded) != 2 {
		t.Fatalf("guarded: %v", guarded)
	}
}

// TestLogGroupsFollowTheRemovalPolicy: every log group of the stack (its
// functions', the access logs, the web publisher's) goes with a dev stack
// and stays with prod, with the environment's retention.
func TestLogGroupsFollowTheRemovalPolicy(t *testing.T) {
	for _, tc := range []struct {
		env       string
		policy    string
		retention float64
	}{{"dev", "Delete", 7}, {"prod", "Retain", 365}} {
		t.Run(tc.env, func(t *testing.T) {
			s := Stack(t, tc.env)
			groups := s.Resources("AWS::Logs::LogGroup")
			if len(groups) < 8 {
				t.Fatalf("%d log groups", len(groups))
			}
			for id, g := range groups {
				if g["DeletionPolicy"] != tc.policy || g["UpdateReplacePolicy"] != tc.policy {
					t.Errorf("log group %s: DeletionPolicy %v, UpdateReplacePolicy %v, want %s", id, g["DeletionPolicy"], g["UpdateReplacePolicy"], tc.policy)
				}
				if Props(g)["RetentionInDays"] != tc.retention {
					t.Errorf("log group %s keeps %v days, want %v", id, Props(g)["RetentionInDays"], tc.retention)
				}
			}
		})
	}
}

// TestProdRetainsQueuesTopicsAndProtectsState: in prod every queue (the
// dead-letter queues, the stream failure queue, the work queue) and every
// topic (alarms, notification shards in their nested stacks) is retained,
// and the table and user pool have deletion protection; dev deletes them
// and protects nothing.
func TestProdRetainsQueuesTopicsAndProtectsState(t *testing.T) {
	for _, tc := range []struct {
		env       string
		policy    string
		protected bool
	}{{"dev", "Delete", false}, {"prod", "Retain", true}} {
		t.Run(tc.env, func(t *testing.T) {
			s := Stack(t, tc.env)
			count := map[string]int{}
			check := func(where string, res map[string]any) {
				for id, r := range res {
					r := r.(map[string]any)
					typ, _ := r["Type"].(string)
					if typ != "AWS::SQS::Queue" && typ != "AWS::SNS::Topic" {
						continue
					}
					count[typ]++
					if r["DeletionPolicy"] != tc.policy {
						t.Errorf("%s %s %s: DeletionPolicy %v, want %s", where, typ, id, r["DeletionPolicy"], tc.policy)
					}
				}
			}
			check("stack", s.json["Resources"].(map[string]any))
			// The notification topics live in nested stacks: read their
			// policy from the construct tree.
			for _, topic := range s.stack.Notifications.Topics {
				cfn := topic.Node().DefaultChild().(awscdk.CfnResource)
				count["AWS::SNS::Topic"]++
				if got := string(cfn.CfnOptions().DeletionPolicy()); !strings.EqualFold(got, tc.policy) {
					t.Errorf("notification topic %s: DeletionPolicy %s, want %s", *topic.Node().Path(), got, tc.policy)
				}
			}
			if count["AWS::SQS::Queue"] < 4 || count["AWS::SNS::Topic"] < 2 {
				t.Fatalf("checked %v: want the four queues, the alarm topic and the notification topics", count)
			}
			table := Props(s.Resources("AWS::DynamoDB::Table")[s.LogicalID(t, "AWS::DynamoDB::Table", "TasksTable")])
			pool := Props(s.Resources("AWS::Cognito::UserPool")[s.LogicalID(t, "AWS::Cognito::UserPool", "AuthUserPool")])
			wantPool := "INACTIVE"
			if tc.protected {
				wantPool = "ACTIVE"
			}
			if table["DeletionProtectionEnabled"] != tc.protected {
				t.Errorf("table DeletionProtectionEnabled = %v, want %v", table["DeletionProtectionEnabled"], tc.protected)
			}
			if pool["DeletionProtection"] != wantPool {
				t.Errorf("user pool DeletionProtection = %v, want %s", pool["DeletionProtection"], wantPool)
			}
		})
	}
}

// TestNotifyingFunctionsGetTheSiteUrl: the function that sends expiry
// emails (the notify target, which the expiry function and the
// reconciler invoke) is told the hosted site's URL, so the email links to
// the task.
func TestNotifyingFunctionsGetTheSiteUrl(t *testing.T) {
	s := Stack(t, "dev")
	site := JSON(s.json["Outputs"].(map[string]any)["WebUrl"].(map[string]any)["Value"])
	if !strings.Contains(site, "https://") {
		t.Fatalf("WebUrl output = %s", site)
	}
	for _, prefix := range []string{"TasksFire"} {
		fn := Props(s.Resources("AWS::Lambda::Function")[s.LogicalID(t, "AWS::Lambda::Function", prefix)])
		vars, _ := fn["Environment"].(map[string]any)["Variables"].(map[string]any)
		url := JSON(vars["WEB_URL"])
		if url != site {
			t.Errorf("%s WEB_URL = %s, want the site's URL (the WebUrl output) %s", prefix, url, site)
		}
	}
}
