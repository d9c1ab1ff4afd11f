package campaignstest

import (
	"strings"
	"testing"

	"github.com/unschedule/unschedule/constructs/campaigns"
)

// TestEventApiLogsErrors: the Event API sends its errors to CloudWatch Logs,
// to the log group AppSync writes to (/aws/appsync/apis/<api id>), kept as
// the construct's Logs say (the default: one month, retained), through a
// role that may write to that log group only.
func TestEventApiLogsErrors(t *testing.T) {
	_, d := synth(t)
	apiID := logical(t, d, "AWS::AppSync::Api", "CampaignsEventApi")
	lc := props(resources(d, "AWS::AppSync::Api")[apiID])["EventConfig"].(map[string]any)["LogConfig"].(map[string]any)
	roleID := logical(t, d, "AWS::IAM::Role", "CampaignsEventApiLogsRole")
	if lc["LogLevel"] != campaigns.EventApiLogLevel || campaigns.EventApiLogLevel != "ERROR" ||
		js(lc["CloudWatchLogsRoleArn"]) != `{"Fn::GetAtt":["`+roleID+`","Arn"]}` {
		t.Fatalf("log config %s, want ERROR through %s", js(lc), roleID)
	}
	groupID := logical(t, d, "AWS::Logs::LogGroup", "CampaignsEventApiLogs")
	group := resources(d, "AWS::Logs::LogGroup")[groupID]
	if got, want := js(props(group)["LogGroupName"]), `{"Fn::Join":["",["/aws/appsync/apis/",{"Fn::GetAtt":["`+apiID+`","ApiId"]}]]}`; got != want {
		t.Errorf("log group name %s, want %s", got, want)
	}
	if props(group)["RetentionInDays"] != 30.0 || group["DeletionPolicy"] != "Retain" {
		t.Errorf("log group retention %v, deletion %v: want the construct's Logs (30 days, retained)", props(group)["RetentionInDays"], group["DeletionPolicy"])
	}
	arn := `{"Fn::GetAtt":["` + groupID + `","Arn"]}`
	got := actions(d, roleID)
	for _, a := range []string{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"} {
		if got[a] != arn {
			t.Errorf("%s on %s, want only the API's log group %s", a, got[a], arn)
		}
		delete(got, a)
	}
	if len(got) != 0 {
		t.Errorf("the logs role may also %v", got)
	}
	trust := js(props(resources(d, "AWS::IAM::Role")[roleID])["AssumeRolePolicyDocument"])
	if !strings.Contains(trust, `"Service":"appsync.amazonaws.com"`) || !strings.Contains(trust, `"aws:SourceAccount":"123456789012"`) ||
		!strings.Contains(trust, `"aws:SourceArn"`) || !strings.Contains(trust, `:appsync:eu-central-1:123456789012:apis/*"`) {
		t.Errorf("logs role trust %s: want AppSync of this account's APIs", trust)
	}
}

// TestOneApiGatewayAccount: the API Gateway CloudWatch Logs role is one
// setting per account and region. Alone, the construct sets it; in the
// to-do app the task API does, once, and the campaign stage waits for it.
func TestOneApiGatewayAccount(t *testing.T) {
	_, alone := synth(t)
	if n := len(resources(alone, "AWS::ApiGateway::Account")); n != 1 {
		t.Errorf("the construct alone has %d AWS::ApiGateway::Account, want 1", n)
	}
	_, d, _ := todoStack(t, true)
	accounts := resources(d, "AWS::ApiGateway::Account")
	if len(accounts) != 1 {
		t.Fatalf("the app with campaigns has %d AWS::ApiGateway::Account (%v), want 1", len(accounts), accounts)
	}
	account := logical(t, d, "AWS::ApiGateway::Account", "ApiAccount")
	stage := resources(d, "AWS::ApiGateway::Stage")[logical(t, d, "AWS::ApiGateway::Stage", "CampaignsRestApiDeploymentStage")]
	if !strings.Contains(js(stage["DependsOn"]), `"`+account+`"`) {
		t.Errorf("the campaign stage depends on %s, want the task API's %s (its ERROR logging needs the role)", js(stage["DependsOn"]), account)
	}
}
