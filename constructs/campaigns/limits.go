package campaigns

import (
	"fmt"

	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/waf"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
)

// limitsEnv hands the sender limits to the API function
// (lambdas/campaignapi, internal/campaigns/limits).
func limitsEnv(p CampaignsProps) map[string]string {
	return map[string]string{
		campaignenv.MaxCampaignsPerDay:       fmt.Sprint(*p.MaxCampaignsPerDay),
		campaignenv.MaxCampaignSendsPerDay:   fmt.Sprint(*p.MaxSendsPerDay),
		campaignenv.MaxRecipientsPerCampaign: fmt.Sprint(*p.MaxRecipientsPerCampaign),
	}
}

// webAcl puts the WAF web ACL on the API stage (WebAcl), as the task API
// does, or records why AwsSolutions-APIG3 does not apply without one.
// The per-token rule aggregates on the Authorization header alone, so
// each token is one rate instance; requests without the header are left
// out of that rule (the per-IP rule still counts them):
// https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-aggregation-options.html
func (x *Campaigns) webAcl(p CampaignsProps) {
	if !p.WebAcl {
		nag.Suppress(x.RestApi, nag.Rule{ID: "AwsSolutions-APIG3",
			Reason: "WAF is off (CampaignsProps.WebAcl, cdk.json waf): the stage is throttled, every campaign route needs a Cognito token of a sender " +
				"and the API limits each sender's campaigns; the public /unsubscribe (links of emails sent before the unsubscribe API) is throttled per method " +
				"and acts only on an HMAC-signed token"})
		return
	}
	x.WebAcl = waf.New(x.Construct, "WebAcl", waf.Props{
		MetricName: "CampaignApi", RateLimitPerIP: p.WafRateLimitPerIp, RateLimitPerAuthorization: p.WafRateLimitPerToken,
		// A campaign's body lists up to 10,000 recipients, far over the
		// 8 KB SizeRestrictions_BODY allows; the handler bounds bodies
		// itself (campaignapi.MaxBody, a JSON 413). Emails are plain
		// text, and the web app renders what it shows escaped, so a body
		// that mentions "<script>" is data: blocking it would refuse a
		// campaign with a bare 403.
		CountOnly: []string{"SizeRestrictions_BODY", "CrossSiteScripting_BODY"},
	})
	waf.Associate(x.Construct, "WebAclAssociation", x.WebAcl, x.RestApi.DeploymentStage().StageArn())
}
