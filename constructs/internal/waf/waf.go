// Package waf builds the regional AWS WAF web ACLs that the API stage
// (constructs/taskapi) and the user pool (constructs/userauth) can sit
// behind: a rate limit per client IP, optionally one per Authorization
// header value, and AWS's managed common rule set.
package waf

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Props configures one web ACL. Limits count requests per 5-minute window
// (WAF's default evaluation window); a client over a limit is answered
// 403 until its rate falls back.
type Props struct {
	// MetricName prefixes the ACL's and its rules' CloudWatch metrics.
	MetricName string
	// RateLimitPerIP is the most requests one source IP may send.
	RateLimitPerIP float64
	// RateLimitPerAuthorization, when above 0, adds a rule aggregated on
	// the Authorization header's value (a custom aggregation key): one
	// signed-in user's token, from however many addresses. Requests
	// without the header are not counted by it (WAF leaves out requests
	// that lack an aggregation key), and the per-IP rule still sees them.
	RateLimitPerAuthorization float64
	// CountOnly lists rules of the common rule set that only count (they
	// still show in WAF's metrics and sampled requests), for checks the
	// protected resource makes itself or that would refuse legitimate
	// input (see constructs/taskapi).
	CountOnly []string
}

// New is a REGIONAL web ACL (the scope API Gateway stages and Cognito user
// pools take) that allows by default and blocks what its rules match.
//
// Rate-based rules and custom keys:
// https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-aggregation-options.html
// and https://docs.aws.amazon.com/waf/latest/APIReference/API_RateBasedStatementCustomKey.html
// ("If you use a single header as your custom key, then each value fully
// defines an aggregation instance"; requests missing a key are not
// evaluated).
func New(scope constructs.Construct, id string, p Props) awswafv2.CfnWebACL {
	visibility := func(name string) *awswafv2.CfnWebACL_VisibilityConfigProperty {
		return &awswafv2.CfnWebACL_VisibilityConfigProperty{
			CloudWatchMetricsEnabled: jsii.Bool(true), MetricName: jsii.String(p.MetricName + name),
			SampledRequestsEnabled: jsii.Bool(true),
		}
	}
	var overrides []interface{}
	for _, r := range p.CountOnly {
		overrides = append(overrides, &awswafv2.CfnWebACL_RuleActionOverrideProperty{
			Name: jsii.String(r), ActionToUse: &awswafv2.CfnWebACL_RuleActionProperty{Count: map[string]any{}},
		})
	}
	common := &awswafv2.CfnWebACL_ManagedRuleGroupStatementProperty{
		VendorName: jsii.String("AWS"), Name: jsii.String("AWSManagedRulesCommonRuleSet"),
	}
	if len(overrides) > 0 {
		common.RuleActionOverrides = overrides
	}
	block := &awswafv2.CfnWebACL_RuleActionProperty{Block: map[string]any{}}
	rules := []interface{}{
		&awswafv2.CfnWebACL_RuleProperty{
			Name: jsii.String("RateLimitPerIp"), Priority: jsii.Number(0), Action: block,
			Statement: &awswafv2.CfnWebACL_StatementProperty{RateBasedStatement: &awswafv2.CfnWebACL_RateBasedStatementProperty{
				AggregateKeyType: jsii.String("IP"), Limit: jsii.Number(p.RateLimitPerIP),
			}},
			VisibilityConfig: visibility("RateLimitPerIp"),
		},
	}
	if p.RateLimitPerAuthorization > 0 {
		rules = append(rules, &awswafv2.CfnWebACL_RuleProperty{
			Name: jsii.String("RateLimitPerAuthorization"), Priority: jsii.Number(1), Action: block,
			Statement: &awswafv2.CfnWebACL_StatementProperty{RateBasedStatement: &awswafv2.CfnWebACL_RateBasedStatementProperty{
				AggregateKeyType: jsii.String("CUSTOM_KEYS"), Limit: jsii.Number(p.RateLimitPerAuthorization),
				CustomKeys: []interface{}{&awswafv2.CfnWebACL_RateBasedStatementCustomKeyProperty{
					Header: &awswafv2.CfnWebACL_RateLimitHeaderProperty{
						Name: jsii.String("authorization"),
						TextTransformations: []interface{}{&awswafv2.CfnWebACL_TextTransformationProperty{
							Priority: jsii.Number(0), Type: jsii.String("NONE"),
						}},
					},
				}},
			}},
			VisibilityConfig: visibility("RateLimitPerAuthorization"),
		})
	}
	rules = append(rules, &awswafv2.CfnWebACL_RuleProperty{
		Name: jsii.String("AWSManagedRulesCommonRuleSet"), Priority: jsii.Number(10),
		OverrideAction:   &awswafv2.CfnWebACL_OverrideActionProperty{None: map[string]any{}},
		Statement:        &awswafv2.CfnWebACL_StatementProperty{ManagedRuleGroupStatement: common},
		VisibilityConfig: visibility("CommonRuleSet"),
	})
	return awswafv2.NewCfnWebACL(scope, jsii.String(id), &awswafv2.CfnWebACLProps{
		Scope:            jsii.String("REGIONAL"),
		DefaultAction:    &awswafv2.CfnWebACL_DefaultActionProperty{Allow: map[string]any{}},
		VisibilityConfig: visibility(""),
		Rules:            rules,
	})
}

// Associate puts acl in front of the regional resource resourceArn (an API
// Gateway stage ARN, a Cognito user pool ARN). Cognito user pools take
// regional web ACLs:
// https://docs.aws.amazon.com/cognito/latest/developerguide/user-pool-waf.html
func Associate(scope constructs.Construct, id string, acl awswafv2.CfnWebACL, resourceArn *string) awswafv2.CfnWebACLAssociation {
	return awswafv2.NewCfnWebACLAssociation(scope, jsii.String(id), &awswafv2.CfnWebACLAssociationProps{
		WebAclArn: acl.AttrArn(), ResourceArn: resourceArn,
	})
}
