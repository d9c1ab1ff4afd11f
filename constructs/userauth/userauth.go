// Package userauth is the Cognito side of the app: a user pool with email
// sign-in, an app client for the web app, and a PreSignUp trigger that
// auto-confirms new users (optionally only for listed email domains).
package userauth

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/waf"
)

// UserAuthProps configures the user pool.
type UserAuthProps struct {
	// AllowedEmailDomains restricts sign-up (and so auto-confirmation) to
	// these email domains, for example []string{"example.com"}.
	// Default: anyone may sign up.
	AllowedEmailDomains []string
	// PasswordMinLength is the shortest password accepted.
	// Default: 12.
	PasswordMinLength float64
	// RemovalPolicy applies to the user pool.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// DeletionProtection keeps CloudFormation and the API from deleting
	// the user pool (turn it off on the pool before deleting it by hand).
	// Default: false.
	DeletionProtection bool
	// WebAcl puts an AWS WAF web ACL on the user pool's endpoints (sign-up,
	// sign-in, token refresh): a rate limit per client IP
	// (WafRateLimitPerIp) and AWS's managed common rule set. WAF bills per
	// web ACL, rule and request.
	// Default: false.
	WebAcl bool
	// WafRateLimitPerIp is the most requests one IP may send to the user
	// pool in 5 minutes.
	// Default: 300.
	WafRateLimitPerIp float64
	// Logs of the trigger function.
	// Default: one month, retained.
	Logs gofn.LogOptions
}

// UserAuth is the user pool, its web client and its triggers.
type UserAuth struct {
	constructs.Construct
	// UserPool signs users in by email.
	UserPool awscognito.UserPool
	// WebClient is the public client (no secret) the web app uses.
	WebClient awscognito.UserPoolClient
	// PreSignUp auto-confirms new users.
	PreSignUp *gofn.Function
	// WebAcl guards the user pool (nil unless UserAuthProps.WebAcl).
	WebAcl awswafv2.CfnWebACL
}

// NewUserAuth builds the pool, client and PreSignUp trigger.
func NewUserAuth(scope constructs.Construct, id *string, props *UserAuthProps) *UserAuth {
	var p UserAuthProps
	if props != nil {
		p = *props
	}
	if p.PasswordMinLength == 0 {
		p.PasswordMinLength = 12
	}
	if p.PasswordMinLength < 8 || p.PasswordMinLength > 99 {
		panic(fmt.Sprintf("%s: PasswordMinLength must be between 8 and 99 inclusive (given %v)", *id, p.PasswordMinLength))
	}
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	if p.WafRateLimitPerIp == 0 {
		p.WafRateLimitPerIp = 300
	}
	if p.WafRateLimitPerIp < 10 || p.WafRateLimitPerIp > 2000000000 {
		panic(fmt.Sprintf("%s: WafRateLimitPerIp must be between 10 and 2000000000 requests per 5 minutes (given %v)", *id, p.WafRateLimitPerIp))
	}
	for _, d := range p.AllowedEmailDomains {
		if d == "" || strings.ContainsAny(d, "@ ,") || !strings.Contains(d, ".") {
			panic(fmt.Sprintf("%s: AllowedEmailDomains holds %q, which is not a domain: list bare domains such as \"example.com\"", *id, d))
		}
	}

	c := constructs.NewConstruct(scope, id)
	u := &UserAuth{Construct: c}
	u.PreSignUp = gofn.NewFunction(c, jsii.String("PreSignUp"), &gofn.FunctionProps{
		Entry:       "lambdas/presignup",
		Description: "Auto-confirms new users (optionally only for allowed email domains)",
		Logs:        p.Logs,
		Environment: map[string]string{"ALLOWED_EMAIL_DOMAINS": strings.ToLower(strings.Join(p.AllowedEmailDomains, ","))},
	})
	u.UserPool = awscognito.NewUserPool(c, jsii.String("UserPool"), &awscognito.UserPoolProps{
		SelfSignUpEnabled:   jsii.Bool(true),
		SignInAliases:       &awscognito.SignInAliases{Email: jsii.Bool(true)},
		SignInCaseSensitive: jsii.Bool(false),
		AutoVerify:          &awscognito.AutoVerifiedAttrs{Email: jsii.Bool(true)},
		StandardAttributes: &awscognito.StandardAttributes{
			Email: &awscognito.StandardAttribute{Required: jsii.Bool(true), Mutable: jsii.Bool(true)},
		},
		PasswordPolicy: &awscognito.PasswordPolicy{
			MinLength: jsii.Number(p.PasswordMinLength), RequireLowercase: jsii.Bool(true),
			RequireUppercase: jsii.Bool(true), RequireDigits: jsii.Bool(true), RequireSymbols: jsii.Bool(true),
			TempPasswordValidity: awscdk.Duration_Days(jsii.Number(3)),
		},
		AccountRecovery:    awscognito.AccountRecovery_EMAIL_ONLY,
		RemovalPolicy:      p.RemovalPolicy,
		DeletionProtection: jsii.Bool(p.DeletionProtection),
		LambdaTriggers:     &awscognito.UserPoolTriggers{PreSignUp: u.PreSignUp.Function},
	})
	nag.Suppress(u.UserPool,
		nag.Rule{ID: "AwsSolutions-COG8", Reason: "The Plus feature plan is billed per active user; enable it on the pool when threat protection is worth that cost"},
		nag.Rule{ID: "AwsSolutions-COG2", Reason: "MFA is off because the web app has no MFA enrolment flow yet; passwords need 12+ characters with upper, lower, digit and symbol"})
	if p.WebAcl {
		u.WebAcl = waf.New(c, "WebAcl", waf.Props{MetricName: "UserPool", RateLimitPerIP: p.WafRateLimitPerIp})
		waf.Associate(c, "WebAclAssociation", u.WebAcl, u.UserPool.UserPoolArn())
	}
	u.WebClient = u.UserPool.AddClient(jsii.String("WebClient"), &awscognito.UserPoolClientOptions{
		GenerateSecret:             jsii.Bool(false),
		AuthFlows:                  &awscognito.AuthFlow{UserSrp: jsii.Bool(true)},
		PreventUserExistenceErrors: jsii.Bool(true),
		EnableTokenRevocation:      jsii.Bool(true),
		IdTokenValidity:            awscdk.Duration_Hours(jsii.Number(1)),
		AccessTokenValidity:        awscdk.Duration_Hours(jsii.Number(1)),
		RefreshTokenValidity:       awscdk.Duration_Days(jsii.Number(30)),
		DisableOAuth:               jsii.Bool(true),
	})
	return u
}
