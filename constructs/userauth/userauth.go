// Package userauth is the Cognito side of the app: a user pool with email
// sign-in, an app client for the web app, a PreSignUp trigger that
// auto-confirms new users (never marking their address verified), or
// (with an allow-list of email domains, or RequireEmailVerification)
// leaves them to confirm with the code Cognito emails, which verifies the
// address, and a PostConfirmation trigger that records the proof of an
// address a code reached (custom:email_proof), which only it may write.
package userauth

import (
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/waf"
	"github.com/unschedule/unschedule/internal/core/identity"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
)

// UserAuthProps configures the user pool.
type UserAuthProps struct {
	// AllowedEmailDomains restricts sign-up to these email domains, for
	// example []string{"example.com"}. A domain typed at sign-up proves
	// nothing until the address is verified, so with an allow-list every
	// user confirms sign-up with the code Cognito emails before the first
	// sign-in (as with RequireEmailVerification).
	// Default: anyone may sign up.
	AllowedEmailDomains []string
	// RequireEmailVerification leaves every sign-up unconfirmed until the
	// user enters the code Cognito emails to the address; only then can
	// they sign in, and their email_verified is true. Turn it on where
	// the address grants something (campaign senders, an allow-list).
	// Default: false (auto-confirm; the address stays unverified until a
	// code reaches it), or true when AllowedEmailDomains is set.
	RequireEmailVerification bool
	// PasswordMinLength is the shortest password accepted (8..99).
	// Default: 12.
	PasswordMinLength float64
	// ExistingUserPool is a user pool to use instead of creating one. The
	// construct adds the web client to it and, with WebAcl, the web ACL;
	// it does not change the pool's settings or triggers: attach
	// PreSignUpFunction yourself (see it) if you want auto-confirmation,
	// and PostConfirmationFunction, with a mutable custom string attribute
	// email_proof in the pool that your clients may not write, if the
	// pool's users send campaigns.
	// PasswordMinLength, RemovalPolicy and DeletionProtection then do not
	// apply. Not allowed with UserPoolProps.
	// Default: a new user pool (UserPoolProps).
	ExistingUserPool awscognito.IUserPool
	// UserPoolProps override the defaults of the user pool this construct
	// creates (email sign-in, self sign-up, the password policy, email-only
	// recovery). The security defaults are kept or checked: the
	// PreSignUp and PostConfirmation triggers and the custom attribute
	// email_proof stay this construct's (setting them fails), a
	// PasswordPolicy must still ask for 8+ characters, and
	// RemovalPolicy and DeletionProtection come from the props above.
	// Not allowed with ExistingUserPool.
	// Default: the defaults above.
	UserPoolProps *awscognito.UserPoolProps
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
	// UserPool signs users in by email: the one created, or
	// ExistingUserPool.
	UserPool awscognito.IUserPool
	// WebClient is the public client (no secret) the web app uses.
	WebClient awscognito.UserPoolClient
	// PreSignUp auto-confirms new users, or leaves them to confirm by
	// code (its function is PreSignUpFunction).
	PreSignUp *gofn.Function
	// PreSignUpFunction is the PreSignUp trigger. It is attached to the
	// pool this construct creates. With ExistingUserPool it is not: attach
	// it yourself, trigger event version V1_0 (pool.AddTrigger(
	// awscognito.UserPoolOperation_PRE_SIGN_UP(), u.PreSignUpFunction, awscognito.LambdaVersion_V1_0)
	// for a CDK pool, or the Cognito console / LambdaConfig.PreSignUp for
	// another). The construct already lets Cognito invoke it for that
	// pool (grants.CognitoInvoke: outside the console nothing else adds
	// that permission, https://repost.aws/knowledge-center/cognito-lambda-trigger-errors).
	PreSignUpFunction awslambda.IFunction
	// PostConfirmation records the proof of an address a code reached (its
	// function is PostConfirmationFunction).
	PostConfirmation *gofn.Function
	// PostConfirmationFunction is the PostConfirmation trigger. It is
	// attached to the pool this construct creates and may write the
	// pool's custom:email_proof attribute (cognito-idp:AdminUpdateUserAttributes
	// on the pool only). With ExistingUserPool it is not attached: attach
	// it yourself (awscognito.UserPoolOperation_POST_CONFIRMATION()).
	PostConfirmationFunction awslambda.IFunction
	// WebAcl guards the user pool (nil unless UserAuthProps.WebAcl).
	WebAcl awswafv2.CfnWebACL
}

// NewUserAuth builds the pool, client and PreSignUp trigger.
func NewUserAuth(scope constructs.Construct, id *string, props *UserAuthProps) *UserAuth {
	var p UserAuthProps
	if props != nil {
		p = *props
	}
	p.PasswordMinLength = propcheck.Or(p.PasswordMinLength, 12)
	if p.PasswordMinLength < 8 || p.PasswordMinLength > 99 {
		panic(fmt.Sprintf("%s: PasswordMinLength must be between 8 and 99 inclusive (given %v): set it in range (Cognito's limits)", *id, p.PasswordMinLength))
	}
	p.RemovalPolicy = propcheck.Or(p.RemovalPolicy, awscdk.RemovalPolicy_RETAIN)
	p.WafRateLimitPerIp = propcheck.Or(p.WafRateLimitPerIp, 300)
	if p.WafRateLimitPerIp < 10 || p.WafRateLimitPerIp > 2000000000 {
		panic(fmt.Sprintf("%s: WafRateLimitPerIp must be between 10 and 2000000000 requests per 5 minutes (given %v): set it in range (WAF's limits)", *id, p.WafRateLimitPerIp))
	}
	byCode := p.RequireEmailVerification || len(p.AllowedEmailDomains) > 0
	for _, d := range p.AllowedEmailDomains {
		if d == "" || strings.ContainsAny(d, "@ ,") || !strings.Contains(d, ".") {
			panic(fmt.Sprintf("%s: AllowedEmailDomains holds %q, which is not a domain: list bare domains such as \"example.com\"", *id, d))
		}
	}

	propcheck.Exclusive(*id, "ExistingUserPool", p.ExistingUserPool != nil, "UserPoolProps", p.UserPoolProps != nil)
	if o := p.UserPoolProps; o != nil {
		if o.LambdaTriggers != nil && o.LambdaTriggers.PreSignUp != nil {
			panic(fmt.Sprintf("%s: UserPoolProps.LambdaTriggers.PreSignUp is set: the PreSignUp trigger is this construct's (auto-confirmation); remove it, or use ExistingUserPool with your own", *id))
		}
		if o.LambdaTriggers != nil && o.LambdaTriggers.PostConfirmation != nil {
			panic(fmt.Sprintf("%s: UserPoolProps.LambdaTriggers.PostConfirmation is set: the PostConfirmation trigger is this construct's (it records email proofs); remove it, or use ExistingUserPool with your own", *id))
		}
		if o.CustomAttributes != nil {
			if _, ok := (*o.CustomAttributes)[identity.EmailProofName]; ok {
				panic(fmt.Sprintf("%s: UserPoolProps.CustomAttributes names %q: that attribute is this construct's (the proof of an address, written by its PostConfirmation trigger only); remove it", *id, identity.EmailProofName))
			}
		}
		if pp := o.PasswordPolicy; pp != nil && (pp.MinLength == nil || *pp.MinLength < 8) {
			given := "unset"
			if pp.MinLength != nil {
				given = fmt.Sprint(*pp.MinLength)
			}
			panic(fmt.Sprintf("%s: UserPoolProps.PasswordPolicy must keep MinLength at 8 or more (given %s): set MinLength, or leave PasswordPolicy unset and use PasswordMinLength", *id, given))
		}
		if byCode && o.AutoVerify != nil && (o.AutoVerify.Email == nil || !*o.AutoVerify.Email) {
			panic(fmt.Sprintf("%s: UserPoolProps.AutoVerify turns email verification off, yet sign-ups must be confirmed by code (RequireEmailVerification or AllowedEmailDomains): "+
				"keep AutoVerify.Email true, or Cognito sends no code and no one can confirm", *id))
		}
		if o.RemovalPolicy != "" || o.DeletionProtection != nil {
			panic(fmt.Sprintf("%s: UserPoolProps.RemovalPolicy and DeletionProtection are not used: set UserAuthProps.RemovalPolicy and DeletionProtection", *id))
		}
	}

	c := constructs.NewConstruct(scope, id)
	u := &UserAuth{Construct: c}
	u.PreSignUp = gofn.NewFunction(c, jsii.String("PreSignUp"), &gofn.FunctionProps{
		Entry:       "lambdas/presignup",
		Description: "Auto-confirms new users or leaves them to confirm by code (optionally only for allowed email domains)",
		Logs:        p.Logs,
		Environment: map[string]string{
			todoenv.AllowedEmailDomains: strings.ToLower(strings.Join(p.AllowedEmailDomains, ",")),
			todoenv.VerifyEmailByCode:   fmt.Sprint(byCode),
		},
	})
	u.PreSignUpFunction = u.PreSignUp.Function
	u.PostConfirmation = gofn.NewFunction(c, jsii.String("PostConfirmation"), &gofn.FunctionProps{
		Entry:       "lambdas/postconfirmation",
		Description: "Records the proof of an email address a confirmation code reached (custom:email_proof)",
		Logs:        p.Logs,
	})
	u.PostConfirmationFunction = u.PostConfirmation.Function
	if p.ExistingUserPool != nil {
		u.UserPool = p.ExistingUserPool
		grants.CognitoInvoke(u.PreSignUp.Function, "PreSignUpCognito", p.ExistingUserPool)
		grants.CognitoInvoke(u.PostConfirmation.Function, "PostConfirmationCognito", p.ExistingUserPool)
	} else {
		defaults := awscognito.UserPoolProps{
			SelfSignUpEnabled:   jsii.Bool(true),
			SignInAliases:       &awscognito.SignInAliases{Email: jsii.Bool(true)},
			SignInCaseSensitive: jsii.Bool(false),
			AutoVerify:          &awscognito.AutoVerifiedAttrs{Email: jsii.Bool(true)},
			// A changed address takes effect only once verified by code
			// (AttributesRequireVerificationBeforeUpdate: email), so a
			// verified user cannot swap in an address they do not hold.
			// https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_UserAttributeUpdateSettingsType.html
			KeepOriginal: &awscognito.KeepOriginalAttrs{Email: jsii.Bool(true)},
			StandardAttributes: &awscognito.StandardAttributes{
				Email: &awscognito.StandardAttribute{Required: jsii.Bool(true), Mutable: jsii.Bool(true)},
			},
			PasswordPolicy: &awscognito.PasswordPolicy{
				MinLength: jsii.Number(p.PasswordMinLength), RequireLowercase: jsii.Bool(true),
				RequireUppercase: jsii.Bool(true), RequireDigits: jsii.Bool(true), RequireSymbols: jsii.Bool(true),
				TempPasswordValidity: awscdk.Duration_Days(jsii.Number(3)),
			},
			AccountRecovery: awscognito.AccountRecovery_EMAIL_ONLY,
		}
		up := propcheck.Merge(defaults, p.UserPoolProps)
		up.RemovalPolicy, up.DeletionProtection = p.RemovalPolicy, jsii.Bool(p.DeletionProtection)
		triggers := awscognito.UserPoolTriggers{}
		if up.LambdaTriggers != nil {
			triggers = *up.LambdaTriggers
		}
		triggers.PreSignUp = u.PreSignUp.Function
		triggers.PostConfirmation = u.PostConfirmation.Function
		up.LambdaTriggers = &triggers
		// The proof of an address, written by the PostConfirmation
		// trigger only (the web client's WriteAttributes leave it out).
		custom := map[string]awscognito.ICustomAttribute{}
		if up.CustomAttributes != nil {
			maps.Copy(custom, *up.CustomAttributes) // the caller's map stays as given
		}
		custom[identity.EmailProofName] = awscognito.NewStringAttribute(&awscognito.StringAttributeProps{Mutable: jsii.Bool(true), MaxLen: jsii.Number(2048)})
		up.CustomAttributes = &custom
		pool := awscognito.NewUserPool(c, jsii.String("UserPool"), &up)
		nag.Suppress(pool,
			nag.Rule{ID: "AwsSolutions-COG8", Reason: "The Plus feature plan is billed per active user; enable it on the pool when threat protection is worth that cost"},
			nag.Rule{ID: "AwsSolutions-COG2", Reason: "MFA is off because the web app has no MFA enrolment flow yet; passwords need 12+ characters with upper, lower, digit and symbol"})
		u.UserPool = pool
	}
	// The trigger's write of the proof, in a policy of its own: the pool
	// names the function as its trigger, so the function's default
	// policy cannot name the pool without a dependency cycle.
	awsiam.NewPolicy(c, jsii.String("PostConfirmationWrite"), &awsiam.PolicyProps{
		Roles: &[]awsiam.IRole{u.PostConfirmation.Role},
		Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("cognito-idp:AdminUpdateUserAttributes"), Resources: jsii.Strings(*u.UserPool.UserPoolArn()),
		})},
	})
	if p.WebAcl {
		u.WebAcl = waf.New(c, "WebAcl", waf.Props{MetricName: "UserPool", RateLimitPerIP: p.WafRateLimitPerIp})
		waf.Associate(c, "WebAclAssociation", u.WebAcl, u.UserPool.UserPoolArn())
	}
	// The web client reads what Cognito's default gives it (every standard
	// attribute and the verified flags) and, on the pool this construct
	// makes, the proof too, so custom:email_proof is a claim of the ID
	// token that the campaign API checks. The API reference's default
	// leaves custom attributes out:
	// https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_UserPoolClientType.html
	// (ReadAttributes). An existing pool may lack the attribute, so its
	// client keeps the default (docs/decisions/sender-email-proof.md).
	var read awscognito.ClientAttributes
	if p.ExistingUserPool == nil {
		read = awscognito.NewClientAttributes().WithStandardAttributes(allStandardAttributes()).WithCustomAttributes(jsii.String(identity.EmailProofName))
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
		// The web app writes the address only (sign-up, a change); the
		// proof of an address is the PostConfirmation trigger's alone.
		WriteAttributes: awscognito.NewClientAttributes().WithStandardAttributes(&awscognito.StandardAttributesMask{Email: jsii.Bool(true)}),
		ReadAttributes:  read,
	})
	return u
}

// allStandardAttributes is every standard attribute and verified flag:
// what an app client reads when ReadAttributes is not set.
func allStandardAttributes() *awscognito.StandardAttributesMask {
	t := jsii.Bool(true)
	return &awscognito.StandardAttributesMask{Address: t, Birthdate: t, Email: t, EmailVerified: t, FamilyName: t, Fullname: t,
		Gender: t, GivenName: t, LastUpdateTime: t, Locale: t, MiddleName: t, Nickname: t, PhoneNumber: t, PhoneNumberVerified: t,
		PreferredUsername: t, ProfilePage: t, ProfilePicture: t, Timezone: t, Website: t}
}

// MetricPreSignUpErrors counts the PreSignUp trigger's failed invocations
// (each one a refused sign-up): Lambda's Errors, Sum over 5 minutes
// unless opts say otherwise.
func (u *UserAuth) MetricPreSignUpErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return u.PreSignUp.Function.MetricErrors(alarms.SumOptions(opts))
}
