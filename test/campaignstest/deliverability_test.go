package campaignstest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsroute53"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/campaigns"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
)

// envOf is a function's environment variables, as JSON per name.
func envOf(t *testing.T, d map[string]any, fnPrefix string) map[string]string {
	t.Helper()
	fn := props(resources(d, "AWS::Lambda::Function")[logical(t, d, "AWS::Lambda::Function", fnPrefix)])
	out := map[string]string{}
	vars, _ := fn["Environment"].(map[string]any)["Variables"].(map[string]any)
	for k, v := range vars {
		out[k] = js(v)
	}
	return out
}

// TestReputationAlarmThresholds pins the alarms below the rates at which
// AWS reviews an SES account (5% bounces, 0.1% complaints; see
// constructs/campaigns/deliverability.go for the page).
func TestReputationAlarmThresholds(t *testing.T) {
	if campaigns.SesReviewBounceRate != 0.05 || campaigns.SesReviewComplaintRate != 0.001 {
		t.Fatalf("review rates %v, %v: AWS documents 0.05 and 0.001", campaigns.SesReviewBounceRate, campaigns.SesReviewComplaintRate)
	}
	if campaigns.BounceRateAlarmThreshold >= campaigns.SesReviewBounceRate || campaigns.ComplaintRateAlarmThreshold >= campaigns.SesReviewComplaintRate {
		t.Fatal("an alarm threshold is not below the review rate")
	}
	tpl, _ := synth(t)
	for _, c := range []struct {
		metric    string
		threshold float64
	}{{"Reputation.BounceRate", 0.04}, {"Reputation.ComplaintRate", 0.0008}} {
		check(t, func() {
			tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), &map[string]any{
				"Namespace": "AWS/SES", "MetricName": c.metric, "Threshold": c.threshold,
				"ComparisonOperator": "GreaterThanOrEqualToThreshold", "TreatMissingData": "notBreaching",
				"Dimensions": assertions.Match_Absent(), // the account's rate, which AWS reviews
			})
		})
	}
}

// TestConfigurationSetPublishesBouncesAndComplaints: the emails go
// through the construct's configuration set, whose bounce and complaint
// events reach the bounce function through an SNS topic.
func TestConfigurationSetPublishesBouncesAndComplaints(t *testing.T) {
	tpl, d := synth(t)
	set := logical(t, d, "AWS::SES::ConfigurationSet", "CampaignsConfigurationSet")
	if got := envOf(t, d, "CampaignsSend")[campaignenv.SESConfigurationSet]; got != fmt.Sprintf(`{"Ref":%q}`, set) {
		t.Errorf("the send function's %s = %s, want the set", campaignenv.SESConfigurationSet, got)
	}
	check(t, func() {
		tpl.HasResourceProperties(jsii.String("AWS::SES::ConfigurationSet"), &map[string]any{
			"ReputationOptions": map[string]any{"ReputationMetricsEnabled": true}})
		tpl.HasResourceProperties(jsii.String("AWS::SES::ConfigurationSetEventDestination"), &map[string]any{
			"ConfigurationSetName": map[string]any{"Ref": set},
			"EventDestination": map[string]any{"Enabled": true, "MatchingEventTypes": []any{"bounce", "complaint"},
				"SnsDestination": map[string]any{"TopicARN": map[string]any{"Ref": logical(t, d, "AWS::SNS::Topic", "CampaignsBounceTopic")}}},
		})
		// A delivery SNS gives up on lands in an alarmed dead-letter queue.
		tpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), &map[string]any{"Protocol": "lambda",
			"Endpoint": map[string]any{"Fn::GetAtt": []any{logical(t, d, "AWS::Lambda::Function", "CampaignsBounce"), "Arn"}},
			"RedrivePolicy": map[string]any{"deadLetterTargetArn": map[string]any{
				"Fn::GetAtt": []any{logical(t, d, "AWS::SQS::Queue", "CampaignsBounceDeliveryDLQ"), "Arn"}}}})
		tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), &map[string]any{
			"MetricName": "ApproximateNumberOfMessagesVisible",
			"Dimensions": []any{map[string]any{"Name": "QueueName", "Value": map[string]any{
				"Fn::GetAtt": []any{logical(t, d, "AWS::SQS::Queue", "CampaignsBounceDeliveryDLQ"), "QueueName"}}}}})
	})
	sesArns := ""
	for _, s := range statements(d, roleOf(t, d, "CampaignsSend")) {
		if js(s["Action"]) == `"ses:SendEmail"` {
			sesArns = js(s["Resource"])
		}
	}
	if !strings.Contains(sesArns, ":configuration-set/") || !strings.Contains(sesArns, set) {
		t.Errorf("ses:SendEmail on %s: want the configuration set too", sesArns)
	}
	if got := actions(d, roleOf(t, d, "CampaignsBounce")); got["dynamodb:PutItem"] == "" || len(got) > 6 {
		t.Errorf("bounce function allows %v: want PutItem on the table (and logs, its failure queue)", got)
	}
}

// TestUnsubscribeIsPublicAndSigned: GET and POST /unsubscribe without an
// authorizer (RFC 8058), on the unsubscribe API and on the campaign API
// (links of emails sent before); the send function links it; only the
// send and unsubscribe functions may read the signing secret.
func TestUnsubscribeIsPublicAndSigned(t *testing.T) {
	_, d := synth(t)
	n := 0
	for id, m := range resources(d, "AWS::ApiGateway::Method") {
		p := props(m)
		if !strings.Contains(js(p["ResourceId"]), "unsubscribe") || p["HttpMethod"] == "OPTIONS" {
			continue
		}
		n++
		if p["AuthorizationType"] != "NONE" || !strings.Contains(js(p["Integration"]), "CampaignsUnsubscribe") {
			t.Errorf("%s: %s", id, js(p))
		}
	}
	if n != 4 {
		t.Errorf("%d unsubscribe methods, want GET and POST on each API", n)
	}
	secret := logical(t, d, "AWS::SecretsManager::Secret", "CampaignsUnsubscribeSecret")
	env := envOf(t, d, "CampaignsSend")
	if !strings.Contains(env[campaignenv.UnsubscribeURL], "/unsubscribe") || env[campaignenv.UnsubscribeSecretArn] != fmt.Sprintf(`{"Ref":%q}`, secret) {
		t.Errorf("send env %v", env)
	}
	if got := envOf(t, d, "CampaignsUnsubscribe")[campaignenv.UnsubscribeSecretArn]; got != fmt.Sprintf(`{"Ref":%q}`, secret) {
		t.Errorf("unsubscribe env %s", got)
	}
	readers := map[string]bool{}
	for _, pol := range resources(d, "AWS::IAM::Policy") {
		// The policies that name this secret (the API reads its own
		// page cursor secret: TestOnlyTheApiReadsThePageCursorSecret).
		if doc := js(props(pol)["PolicyDocument"]); strings.Contains(doc, "secretsmanager:") && strings.Contains(doc, `{"Ref":"`+secret+`"}`) {
			if !strings.Contains(js(props(pol)["PolicyDocument"]), `"Action":"secretsmanager:GetSecretValue","Effect":"Allow","Resource":{"Ref":"`+secret+`"}`) {
				t.Errorf("secret grant %s", js(props(pol)["PolicyDocument"]))
			}
			readers[js(props(pol)["Roles"])] = true
		}
	}
	want := map[string]bool{fmt.Sprintf(`[{"Ref":%q}]`, roleOf(t, d, "CampaignsSend")): true, fmt.Sprintf(`[{"Ref":%q}]`, roleOf(t, d, "CampaignsUnsubscribe")): true}
	if fmt.Sprint(readers) != fmt.Sprint(want) {
		t.Errorf("secret readers %v, want %v", readers, want)
	}
	if got := actions(d, roleOf(t, d, "CampaignsUnsubscribe")); got["dynamodb:PutItem"] == "" || got["dynamodb:GetItem"] != "" {
		t.Errorf("unsubscribe function allows %v: want PutItem only on the table", got)
	}
}

// TestDeliverabilityAlarms: each new function has its errors alarm, the
// bounce function its failure queue's alarms, and Alarms() lists them.
func TestDeliverabilityAlarms(t *testing.T) {
	synth(t)
	dl := c.Deliverability
	listed := map[string]bool{}
	for _, a := range c.Alarms() {
		listed[*a.Node().Id()] = true
	}
	for _, a := range []string{"BounceErrorsAlarm", "UnsubscribeErrorsAlarm", "UnsubscribeApi5xxAlarm", "BounceRateAlarm", "ComplaintRateAlarm"} {
		if !listed[a] {
			t.Errorf("Alarms() lacks %s", a)
		}
	}
	if dl.BounceAsync.Queue == nil || dl.BounceAsync.FailureAlarm == nil || dl.EmailIdentity != nil {
		t.Errorf("deliverability fields %+v", dl)
	}
}

// TestEmailIdentityWithEasyDkim: with SenderDomain (and its zone), the
// construct creates the domain identity, Easy DKIM 2048-bit, the custom
// MAIL FROM, the DKIM CNAMEs in the zone; the send grant names it.
func TestEmailIdentityWithEasyDkim(t *testing.T) {
	st := newStack(t)
	zone := awsroute53.NewPublicHostedZone(st, jsii.String("Zone"), &awsroute53.PublicHostedZoneProps{ZoneName: jsii.String("example.com")})
	var x *campaigns.Campaigns
	check(t, func() {
		x = campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{UserPool: pool(st), SenderAddress: "news@example.com",
			SenderHostedZone: zone, MailFromDomain: "bounce.example.com"})
	})
	tpl := assertions.Template_FromStack(st, nil)
	d := *tpl.ToJSON()
	check(t, func() {
		tpl.HasResourceProperties(jsii.String("AWS::SES::EmailIdentity"), &map[string]any{
			"EmailIdentity":         "example.com",
			"DkimAttributes":        map[string]any{"SigningEnabled": true},
			"DkimSigningAttributes": map[string]any{"NextSigningKeyLength": "RSA_2048_BIT"},
			"MailFromAttributes":    map[string]any{"MailFromDomain": "bounce.example.com"},
			"ConfigurationSetAttributes": map[string]any{"ConfigurationSetName": map[string]any{
				"Ref": logical(t, d, "AWS::SES::ConfigurationSet", "CampaignsConfigurationSet")}},
		})
		tpl.ResourcePropertiesCountIs(jsii.String("AWS::Route53::RecordSet"), &map[string]any{"Type": "CNAME"}, jsii.Number(3))
	})
	if x.Deliverability.EmailIdentity == nil {
		t.Error("EmailIdentity is nil")
	}
	for _, s := range statements(d, roleOf(t, d, "CampaignsSend")) {
		if js(s["Action"]) == `"ses:SendEmail"` && !strings.Contains(js(s["Resource"]), ":identity/example.com") {
			t.Errorf("ses:SendEmail on %s: want the domain identity", js(s["Resource"]))
		}
	}
}

func TestDeliverabilityValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(p *campaigns.CampaignsProps)
		want string
	}{
		{"domain of the sender", func(p *campaigns.CampaignsProps) { p.SenderDomain = "example.com" }, ""},
		{"another domain", func(p *campaigns.CampaignsProps) { p.SenderDomain = "example.org" }, `set it to "example.com"`},
		{"MAIL FROM without a domain", func(p *campaigns.CampaignsProps) { p.MailFromDomain = "bounce.example.com" }, "needs SenderDomain"},
		{"MAIL FROM outside the domain", func(p *campaigns.CampaignsProps) {
			p.SenderDomain, p.MailFromDomain = "example.com", "bounce.example.org"
		}, `subdomain of SenderDomain "example.com"`},
		{"an existing configuration set", func(p *campaigns.CampaignsProps) { p.SesConfigurationSet = "marketing" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := buildPanic(t, tc.set)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("panic %q, want %q", got, tc.want)
			}
		})
	}
}
