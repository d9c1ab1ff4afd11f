package campaignstest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/unschedule/unschedule/constructs/campaigns"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/todoapp"
)

// apiEnv is the campaign API function's environment.
func apiEnv(t *testing.T, d map[string]any) map[string]any {
	t.Helper()
	fn := resources(d, "AWS::Lambda::Function")[logical(t, d, "AWS::Lambda::Function", "CampaignsApi")]
	return props(fn)["Environment"].(map[string]any)["Variables"].(map[string]any)
}

// TestCampaignSenderLimitsEnv: the API function gets the sender limits
// (the defaults, or the props), and the table expires their counters.
func TestCampaignSenderLimitsEnv(t *testing.T) {
	_, d := synth(t)
	want := map[string]any{campaignenv.MaxCampaignsPerDay: "20", campaignenv.MaxCampaignSendsPerDay: "20000", campaignenv.MaxRecipientsPerCampaign: "10000"}
	got := apiEnv(t, d)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("default %s = %v, want %v", k, got[k], v)
		}
	}
	table := props(resources(d, "AWS::DynamoDB::Table")[logical(t, d, "AWS::DynamoDB::Table", "CampaignsTable")])
	if ttl := js(table["TimeToLiveSpecification"]); ttl != `{"AttributeName":"`+limits.ExpiresAttr+`","Enabled":true}` {
		t.Errorf("table TTL %s, want on %s", ttl, limits.ExpiresAttr)
	}

	cases := []struct {
		name string
		set  func(p *campaigns.CampaignsProps)
		want [3]string // campaigns, sends, recipients
	}{
		{"all set", func(p *campaigns.CampaignsProps) {
			p.MaxCampaignsPerDay, p.MaxSendsPerDay, p.MaxRecipientsPerCampaign = jsii.Number(3), jsii.Number(500), jsii.Number(250)
		}, [3]string{"3", "500", "250"}},
		{"sends per day under the recipient default", func(p *campaigns.CampaignsProps) { p.MaxSendsPerDay = jsii.Number(2000) },
			[3]string{"20", "2000", "2000"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newStack(t)
			p := &campaigns.CampaignsProps{UserPool: pool(st), SenderAddress: "news@example.com"}
			tc.set(p)
			check(t, func() { campaigns.NewCampaigns(st, jsii.String("Campaigns"), p) })
			env := apiEnv(t, *assertions.Template_FromStack(st, nil).ToJSON())
			got := [3]string{fmt.Sprint(env[campaignenv.MaxCampaignsPerDay]), fmt.Sprint(env[campaignenv.MaxCampaignSendsPerDay]), fmt.Sprint(env[campaignenv.MaxRecipientsPerCampaign])}
			if got != tc.want {
				t.Fatalf("limits env %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCampaignLimitPropsValidation: a bad limit fails synth with a message
// that names the prop, shows the value and says how to fix it.
func TestCampaignLimitPropsValidation(t *testing.T) {
	n := func(v float64) *float64 { return &v }
	cases := []struct {
		name string
		set  func(p *campaigns.CampaignsProps)
		want string
	}{
		{"zero campaigns", func(p *campaigns.CampaignsProps) { p.MaxCampaignsPerDay = n(0) }, "MaxCampaignsPerDay must be a whole number between 1 and 10000 inclusive (given 0): set it in range"},
		{"negative sends", func(p *campaigns.CampaignsProps) { p.MaxSendsPerDay = n(-5) }, "MaxSendsPerDay must be a whole number between 1 and 10000000 inclusive (given -5)"},
		{"fractional campaigns", func(p *campaigns.CampaignsProps) { p.MaxCampaignsPerDay = n(2.5) }, "MaxCampaignsPerDay must be a whole number"},
		{"campaigns over the ceiling", func(p *campaigns.CampaignsProps) { p.MaxCampaignsPerDay = n(10001) }, "(given 10001)"},
		{"recipients over the API's hard limit", func(p *campaigns.CampaignsProps) { p.MaxRecipientsPerCampaign = n(10001) },
			"MaxRecipientsPerCampaign must be a whole number between 1 and 10000 inclusive (given 10001): set it in range (recipients of one campaign; the API never takes more than 10000)"},
		{"zero recipients", func(p *campaigns.CampaignsProps) { p.MaxRecipientsPerCampaign = n(0) }, "MaxRecipientsPerCampaign must be"},
		{"recipients over the day's sends", func(p *campaigns.CampaignsProps) { p.MaxSendsPerDay, p.MaxRecipientsPerCampaign = n(100), n(200) },
			"MaxRecipientsPerCampaign (200) is over MaxSendsPerDay (100): no day could hold such a campaign; lower MaxRecipientsPerCampaign or raise MaxSendsPerDay"},
		{"WAF limit under WAF's minimum", func(p *campaigns.CampaignsProps) { p.WebAcl, p.WafRateLimitPerToken = true, 5 }, "WafRateLimitPerToken must be a whole number between 10 and"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := buildPanic(t, tc.set)
			if !strings.HasPrefix(got, "C: ") || !strings.Contains(got, tc.want) {
				t.Fatalf("panic %q, want one naming the construct and saying %q", got, tc.want)
			}
		})
	}
}

// wafStack is the construct with WebAcl on.
func wafStack(t *testing.T) (awscdk.Stack, map[string]any, *campaigns.Campaigns) {
	t.Helper()
	st := newStack(t)
	var x *campaigns.Campaigns
	check(t, func() {
		x = campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{UserPool: pool(st), SenderAddress: "news@example.com", WebAcl: true})
	})
	return st, *assertions.Template_FromStack(st, nil).ToJSON(), x
}

// wafRules maps each rule of the one web ACL of d to its statement, and
// returns the ACL's logical id.
func wafRules(t *testing.T, d map[string]any) (string, map[string]map[string]any) {
	t.Helper()
	acls := resources(d, "AWS::WAFv2::WebACL")
	if len(acls) != 1 {
		t.Fatalf("%d web ACLs, want 1", len(acls))
	}
	rules := map[string]map[string]any{}
	for id, acl := range acls {
		p := props(acl)
		if p["Scope"] != "REGIONAL" || js(p["DefaultAction"]) != `{"Allow":{}}` {
			t.Errorf("web ACL scope %v, default %s; want REGIONAL, allow", p["Scope"], js(p["DefaultAction"]))
		}
		for _, r := range p["Rules"].([]any) {
			rule := r.(map[string]any)
			rules[rule["Name"].(string)] = rule["Statement"].(map[string]any)
		}
		return id, rules
	}
	return "", nil
}

// TestCampaignWafRules: with WebAcl the campaign API's stage sits behind a
// web ACL of three rules: a rate limit per IP, one per Authorization
// header (a custom aggregation key), and AWS's common rule set, whose
// body-size and XSS rules only count; without WebAcl there is none.
func TestCampaignWafRules(t *testing.T) {
	_, d, x := wafStack(t)
	acl, rules := wafRules(t, d)
	if x.WebAcl == nil {
		t.Error("Campaigns.WebAcl is nil with WebAcl on")
	}
	if len(rules) != 3 {
		t.Errorf("rules %v, want exactly three", js(rules))
	}
	perIP, _ := rules["RateLimitPerIp"]["RateBasedStatement"].(map[string]any)
	if perIP["AggregateKeyType"] != "IP" || perIP["Limit"] != float64(campaigns.DefaultWafRateLimitPerIp) {
		t.Errorf("per-IP rule %s", js(perIP))
	}
	perToken, _ := rules["RateLimitPerAuthorization"]["RateBasedStatement"].(map[string]any)
	wantKeys := []any{map[string]any{"Header": map[string]any{"Name": "authorization",
		"TextTransformations": []any{map[string]any{"Priority": float64(0), "Type": "NONE"}}}}}
	if perToken["AggregateKeyType"] != "CUSTOM_KEYS" || !reflect.DeepEqual(perToken["CustomKeys"], wantKeys) || perToken["Limit"] != float64(campaigns.DefaultWafRateLimitPerToken) {
		t.Errorf("per-Authorization rule %s", js(perToken))
	}
	common, _ := rules["AWSManagedRulesCommonRuleSet"]["ManagedRuleGroupStatement"].(map[string]any)
	if common["VendorName"] != "AWS" || common["Name"] != "AWSManagedRulesCommonRuleSet" {
		t.Errorf("common rule set %s", js(common))
	}
	if got := js(common["RuleActionOverrides"]); got != `[{"ActionToUse":{"Count":{}},"Name":"SizeRestrictions_BODY"},{"ActionToUse":{"Count":{}},"Name":"CrossSiteScripting_BODY"}]` {
		t.Errorf("common rules that only count: %s", got)
	}
	assocs := resources(d, "AWS::WAFv2::WebACLAssociation")
	stage := logical(t, d, "AWS::ApiGateway::Stage", "CampaignsRestApiDeploymentStage")
	if len(assocs) != 1 {
		t.Fatalf("%d web ACL associations, want 1", len(assocs))
	}
	for _, a := range assocs {
		p := props(a)
		if js(p["WebACLArn"]) != `{"Fn::GetAtt":["`+acl+`","Arn"]}` || !strings.Contains(js(p["ResourceArn"]), stage) || !strings.Contains(js(p["ResourceArn"]), "/stages/") {
			t.Errorf("association %s, want %s on stage %s", js(p), acl, stage)
		}
	}

	// Off (the shared synth leaves WebAcl unset): no ACL, APIG3 suppressed.
	_, off := synth(t)
	if n := len(resources(off, "AWS::WAFv2::WebACL")) + len(resources(off, "AWS::WAFv2::WebACLAssociation")); n != 0 {
		t.Errorf("WAF off: %d WAF resources, want none", n)
	}
	if c.WebAcl != nil {
		t.Error("Campaigns.WebAcl set with WebAcl off")
	}
	api := resources(off, "AWS::ApiGateway::RestApi")[logical(t, off, "AWS::ApiGateway::RestApi", "CampaignsRestApi")]
	if !strings.Contains(js(api["Metadata"]), "AwsSolutions-APIG3") {
		t.Error("WAF off, but the REST API does not record why AwsSolutions-APIG3 does not apply")
	}
	api = resources(d, "AWS::ApiGateway::RestApi")[logical(t, d, "AWS::ApiGateway::RestApi", "CampaignsRestApi")]
	if strings.Contains(js(api["Metadata"]), "AwsSolutions-APIG3") {
		t.Error("WAF on, but AwsSolutions-APIG3 is still suppressed")
	}
}

// TestCampaignWafNagClean: with WebAcl on, cdk-nag's AwsSolutions pack
// finds nothing unsuppressed in the construct either.
func TestCampaignWafNagClean(t *testing.T) {
	st := newStack(t)
	check(t, func() {
		campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{UserPool: pool(st), SenderAddress: "news@example.com", WebAcl: true})
	})
	awscdk.Aspects_Of(st).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	ann := assertions.Annotations_FromStack(st)
	rule := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
	var out []string
	for _, m := range append(*ann.FindError(jsii.String("*"), rule), *ann.FindWarning(jsii.String("*"), rule)...) {
		//lint:ignore SA1019 Annotations returns this type; the Go binding has no other
		finding := fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data)
		if !strings.HasPrefix(finding, "/CampaignsTest/Users") {
			out = append(out, finding)
		}
	}
	if len(out) > 0 {
		t.Fatalf("%d unsuppressed cdk-nag findings:\n%s", len(out), strings.Join(out, "\n"))
	}
}

// TestTodoAppCampaignWaf: the app's `waf` flag puts the web ACL on the
// campaign API too, as on the task API and the user pool.
func TestTodoAppCampaignWaf(t *testing.T) {
	cfg := todoapp.Config{Name: "prod", RemovalPolicy: "destroy", Campaigns: true, CampaignSender: "news@example.com", Waf: true}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	check(t, func() {
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: &map[string]any{"aws:cdk:bundling-stacks": []string{}}})
		st := todoapp.NewTodoStack(app, "Unschedule-prod", &todoapp.TodoStackProps{Config: cfg, WebPlaceholderIfMissing: true})
		d = *assertions.Template_FromStack(st.Stack, nil).ToJSON()
	})
	stage := logical(t, d, "AWS::ApiGateway::Stage", "CampaignsRestApiDeploymentStage")
	var guarded int
	for _, a := range resources(d, "AWS::WAFv2::WebACLAssociation") {
		if strings.Contains(js(props(a)["ResourceArn"]), stage) {
			guarded++
		}
	}
	if n := len(resources(d, "AWS::WAFv2::WebACL")); n != 3 || guarded != 1 {
		t.Fatalf("%d web ACLs (want 3: task API, user pool, campaign API), %d on the campaign stage (want 1)", n, guarded)
	}
}
