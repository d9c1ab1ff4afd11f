package test

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsamplify"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/notifications"
	"github.com/unschedule/unschedule/constructs/taskapi"
	"github.com/unschedule/unschedule/constructs/userauth"
	"github.com/unschedule/unschedule/constructs/webhosting"
)

const importedPoolArn = "arn:aws:cognito-idp:eu-west-1:111111111111:userpool/eu-west-1_abcdefghi"

func settingsTable(stack awscdk.Stack) awsdynamodb.ITable {
	return awsdynamodb.Table_FromTableName(stack, jsii.String("Settings"), jsii.String("tasks"))
}

// cognitoPermissions are the Lambda permissions that let Cognito invoke a
// function, as "<function logical id> <SourceArn JSON>".
func cognitoPermissions(s *synthed) []string {
	var out []string
	for _, r := range s.Resources("AWS::Lambda::Permission") {
		p := Props(r)
		if p["Principal"] == "cognito-idp.amazonaws.com" && p["Action"] == "lambda:InvokeFunction" {
			fn, _ := p["FunctionName"].(map[string]any)["Fn::GetAtt"].([]any)
			out = append(out, fn[0].(string)+" "+JSON(p["SourceArn"]))
		}
	}
	return out
}

// TestNotificationsOnAnImportedUserPool: with a pool this stack does not
// own, nothing touches the pool; Cognito may invoke PostAuthFunction for
// that pool only (AWS needs the permission: only the console adds it), and
// the function is exposed for the owner to attach.
func TestNotificationsOnAnImportedUserPool(t *testing.T) {
	stack := customStack(t, "ImportedPool")
	pool := awscognito.UserPool_FromUserPoolArn(stack, jsii.String("Pool"), jsii.String(importedPoolArn))
	n := notifications.NewUserNotifications(stack, jsii.String("Notifications"), &notifications.UserNotificationsProps{UserPool: pool})
	n.StoreSettingsIn(settingsTable(stack))
	if n.PostAuthFunction == nil {
		t.Fatal("PostAuthFunction is nil")
	}
	s := synthOf(t, stack)
	if pools := s.Resources("AWS::Cognito::UserPool"); len(pools) != 0 {
		t.Errorf("a user pool in the stack: %s", JSON(pools))
	}
	fn := s.LogicalID(t, "AWS::Lambda::Function", "NotificationsPostAuth")
	if got, want := cognitoPermissions(s), []string{fn + ` "` + importedPoolArn + `"`}; JSON(got) != JSON(want) {
		t.Errorf("Cognito invoke permissions %v, want %v", got, want)
	}
}

// TestNotificationsBesideAnotherPostAuthTrigger: a pool of this app that
// already has a PostAuthentication trigger keeps it (AttachPostAuthTrigger
// false); before, AddTrigger failed synth ("already exists").
func TestNotificationsBesideAnotherPostAuthTrigger(t *testing.T) {
	stack := customStack(t, "OwnTrigger")
	own := awslambda.NewFunction(stack, jsii.String("Own"), &awslambda.FunctionProps{
		Runtime: awslambda.Runtime_NODEJS_22_X(), Handler: jsii.String("index.handler"),
		Code: awslambda.Code_FromInline(jsii.String("x")),
	})
	pool := awscognito.NewUserPool(stack, jsii.String("Pool"), &awscognito.UserPoolProps{
		LambdaTriggers: &awscognito.UserPoolTriggers{PostAuthentication: own},
	})
	n := notifications.NewUserNotifications(stack, jsii.String("Notifications"), &notifications.UserNotificationsProps{
		UserPool: pool, AttachPostAuthTrigger: jsii.Bool(false),
	})
	n.StoreSettingsIn(settingsTable(stack))
	s := synthOf(t, stack)
	poolID := s.LogicalID(t, "AWS::Cognito::UserPool", "Pool")
	ownID := s.LogicalID(t, "AWS::Lambda::Function", "Own")
	cfg := JSON(Props(s.Resources("AWS::Cognito::UserPool")[poolID])["LambdaConfig"])
	if !strings.Contains(cfg, `"PostAuthentication": {`) || !strings.Contains(cfg, ownID) {
		t.Errorf("the pool's PostAuthentication is not its own trigger: %s", cfg)
	}
	fn := s.LogicalID(t, "AWS::Lambda::Function", "NotificationsPostAuth")
	perms := strings.Join(cognitoPermissions(s), "\n")
	if !strings.Contains(perms, fn+" ") || !strings.Contains(perms, poolID) {
		t.Errorf("PostAuthFunction may not be invoked by this pool's Cognito: %s", perms)
	}
}

// TestNotificationTopicsWithACustomerKey: TopicKey encrypts every topic,
// and GrantPublish includes what SNS needs of a publisher for an
// encrypted topic (kms:GenerateDataKey*, kms:Decrypt) on that key only;
// TopicProps override the display name, and TLS stays enforced.
func TestNotificationTopicsWithACustomerKey(t *testing.T) {
	stack := customStack(t, "TopicKey")
	key := awskms.NewKey(stack, jsii.String("Key"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
	n := notifications.NewUserNotifications(stack, jsii.String("Notifications"), &notifications.UserNotificationsProps{
		TopicKey: key, Shards: 2, TopicProps: &awssns.TopicProps{DisplayName: jsii.String("Reminders")},
	})
	n.StoreSettingsIn(settingsTable(stack))
	publisher := awsiam.NewRole(stack, jsii.String("Publisher"), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	n.GrantPublish(publisher)
	s := synthOf(t, stack)
	keyID := s.LogicalID(t, "AWS::KMS::Key", "Key")
	topics := 0
	for path, nested := range nestedTemplates(t, stack) {
		for id, r := range nested["Resources"].(map[string]any) {
			res := r.(map[string]any)
			if res["Type"] != "AWS::SNS::Topic" {
				continue
			}
			topics++
			p := Props(res)
			if !strings.Contains(nestedParam(s, p["KmsMasterKeyId"]), keyID) || p["DisplayName"] != "Reminders" {
				t.Errorf("%s %s: key %s, display name %v", path, id, JSON(p["KmsMasterKeyId"]), p["DisplayName"])
			}
		}
		if !strings.Contains(JSON(nested), `"aws:SecureTransport": "false"`) {
			t.Errorf("%s: topics do not refuse plain HTTP", path)
		}
	}
	if topics != 2 {
		t.Errorf("%d topics, want 2", topics)
	}
	got := ActionMap(s.RoleStatements(s.LogicalID(t, "AWS::IAM::Role", "Publisher")))
	keyArn := JSON(map[string]any{"Fn::GetAtt": []any{keyID, "Arn"}})
	for _, a := range []string{"kms:GenerateDataKey*", "kms:Decrypt"} {
		if strings.ReplaceAll(got[a], " ", "") != strings.ReplaceAll(strings.ReplaceAll(keyArn, "\n", ""), " ", "") {
			t.Errorf("%s on %s, want the topic key %s", a, got[a], keyArn)
		}
	}
	if _, ok := got["sns:Publish"]; !ok || len(got) != 3 {
		t.Errorf("publisher statements %v, want sns:Publish and the two key actions", got)
	}
}

// nestedParam is the value the parent stack passes for a nested stack's
// {"Ref": parameter}, as JSON.
func nestedParam(parent *synthed, ref any) string {
	name, _ := ref.(map[string]any)["Ref"].(string)
	for _, r := range parent.Resources("AWS::CloudFormation::Stack") {
		if params, ok := Props(r)["Parameters"].(map[string]any); ok && params[name] != nil {
			return JSON(params[name])
		}
	}
	return JSON(ref)
}

// nestedTemplates are the templates of stack's nested stacks by path.
func nestedTemplates(t *testing.T, stack awscdk.Stack) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	Check(t, func() {
		for _, c := range *stack.Node().FindAll(constructs.ConstructOrder_PREORDER) {
			if *awscdk.NestedStack_IsNestedStack(c) {
				out[*c.Node().Path()] = *assertions.Template_FromStack(awscdk.Stack_Of(c), nil).ToJSON()
			}
		}
	})
	return out
}

// TestUserAuthOnAnExistingPool: no pool is created; the web client is
// added to the existing one, and its PreSignUp function may be invoked by
// that pool's Cognito, for its owner to attach.
func TestUserAuthOnAnExistingPool(t *testing.T) {
	stack := customStack(t, "ExistingPool")
	pool := awscognito.UserPool_FromUserPoolArn(stack, jsii.String("Pool"), jsii.String(importedPoolArn))
	u := userauth.NewUserAuth(stack, jsii.String("Auth"), &userauth.UserAuthProps{ExistingUserPool: pool})
	if u.PreSignUpFunction == nil {
		t.Fatal("PreSignUpFunction is nil")
	}
	s := synthOf(t, stack)
	if n := len(s.Resources("AWS::Cognito::UserPool")); n != 0 {
		t.Errorf("%d user pools created", n)
	}
	for _, c := range s.Resources("AWS::Cognito::UserPoolClient") {
		if id := Props(c)["UserPoolId"]; id != "eu-west-1_abcdefghi" {
			t.Errorf("client on pool %v", id)
		}
		// The pool may lack custom:email_proof: the client keeps
		// Cognito's default read attributes.
		if r, ok := Props(c)["ReadAttributes"]; ok {
			t.Errorf("client on an existing pool sets ReadAttributes %v", r)
		}
	}
	fn := s.LogicalID(t, "AWS::Lambda::Function", "AuthPreSignUp")
	post := s.LogicalID(t, "AWS::Lambda::Function", "AuthPostConfirmation")
	got, want := cognitoPermissions(s), []string{fn + ` "` + importedPoolArn + `"`, post + ` "` + importedPoolArn + `"`}
	slices.Sort(got)
	slices.Sort(want)
	if JSON(got) != JSON(want) {
		t.Errorf("Cognito invoke permissions %v, want %v", got, want)
	}
}

// TestUserAuthPoolPropsKeepTheSecurityDefaults: UserPoolProps override
// what they set and nothing else.
func TestUserAuthPoolPropsKeepTheSecurityDefaults(t *testing.T) {
	stack := customStack(t, "PoolProps")
	userauth.NewUserAuth(stack, jsii.String("Auth"), &userauth.UserAuthProps{
		UserPoolProps: &awscognito.UserPoolProps{UserPoolName: jsii.String("mine"), SelfSignUpEnabled: jsii.Bool(false)},
	})
	s := synthOf(t, stack)
	for _, r := range s.Resources("AWS::Cognito::UserPool") {
		p := Props(r)
		if p["UserPoolName"] != "mine" || JSON(p["AdminCreateUserConfig"]) != JSON(map[string]any{"AllowAdminCreateUserOnly": true}) {
			t.Errorf("overrides not applied: %s", JSON(p))
		}
		pw := p["Policies"].(map[string]any)["PasswordPolicy"].(map[string]any)
		if pw["MinimumLength"] != float64(12) || pw["RequireSymbols"] != true || p["LambdaConfig"] == nil {
			t.Errorf("security defaults lost: %s", JSON(p))
		}
	}
}

// TestTaskApiPropsOverrides: RestApiProps and their DeployOptions merge
// over the defaults; the access log, throttling and CORS stay.
func TestTaskApiPropsOverrides(t *testing.T) {
	stack := customStack(t, "ApiProps")
	taskapi.NewTaskApi(stack, jsii.String("Api"), &taskapi.TaskApiProps{
		Table:          awsdynamodb.Table_FromTableName(stack, jsii.String("Table"), jsii.String("tasks")),
		Schedules:      fakeScheduleCreator{},
		UserPool:       awscognito.UserPool_FromUserPoolArn(stack, jsii.String("Pool"), jsii.String(importedPoolArn)),
		AllowedOrigins: []string{"https://app.example.com"},
		RestApiProps: &awsapigateway.RestApiProps{
			RestApiName:   jsii.String("tasks"),
			DeployOptions: &awsapigateway.StageOptions{TracingEnabled: jsii.Bool(true)},
		},
	})
	s := synthOf(t, stack)
	for _, r := range s.Resources("AWS::ApiGateway::RestApi") {
		if Props(r)["Name"] != "tasks" || !strings.Contains(JSON(Props(r)["EndpointConfiguration"]), "REGIONAL") {
			t.Errorf("rest api %s", JSON(Props(r)))
		}
	}
	for _, r := range s.Resources("AWS::ApiGateway::Stage") {
		p := Props(r)
		if p["TracingEnabled"] != true || p["StageName"] != "api" || !strings.Contains(JSON(p["AccessLogSetting"]), `\"sub\":\"$context.authorizer.claims.sub\"`) ||
			!strings.Contains(JSON(p["MethodSettings"]), `"ThrottlingRateLimit": 50`) {
			t.Errorf("stage lost a default: %s", JSON(p))
		}
	}
}

// TestWebHostingAppPropsOverride: AppProps merge over the Amplify app's
// defaults, which stay where not overridden (the single-page-app rewrite).
func TestWebHostingAppPropsOverride(t *testing.T) {
	stack := customStack(t, "AppProps")
	webhosting.NewWebHosting(stack, jsii.String("Web"), &webhosting.WebHostingProps{
		BackendConfig:        map[string]string{"apiUrl": "https://api.example.com/api", "mode": "local"},
		PlaceholderIfMissing: true,
		AppProps: &awsamplify.CfnAppProps{
			Description:   jsii.String("ours"),
			CustomHeaders: jsii.String("customHeaders:\n  - pattern: '**'\n    headers:\n      - key: X-Frame-Options\n        value: DENY\n"),
		},
	})
	s := synthOf(t, stack)
	for _, r := range s.Resources("AWS::Amplify::App") {
		p := Props(r)
		if p["Description"] != "ours" || !strings.Contains(JSON(p["CustomHeaders"]), "X-Frame-Options") ||
			!strings.Contains(JSON(p["CustomRules"]), "/index.html") || p["Platform"] != "WEB" || p["Name"] == nil {
			t.Errorf("app props %s", JSON(p))
		}
	}
}

// TestUserAuthEmailVerification: an address proves nothing until it is
// verified by code. The trigger auto-confirms only an open pool that does
// not ask for verification; an allow-list (a domain only typed) or
// RequireEmailVerification leaves every sign-up to be confirmed by the
// code Cognito emails (the pool auto-verifies email, so it sends one).
// Every pool keeps a changed address unchanged until the new one is
// verified (AttributesRequireVerificationBeforeUpdate: email).
func TestUserAuthEmailVerification(t *testing.T) {
	for _, tc := range []struct {
		name   string
		props  userauth.UserAuthProps
		byCode string
	}{
		{"open pool auto-confirms", userauth.UserAuthProps{}, "false"},
		{"allow-list verifies by code", userauth.UserAuthProps{AllowedEmailDomains: []string{"example.com"}}, "true"},
		{"required verification", userauth.UserAuthProps{RequireEmailVerification: true}, "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stack := customStack(t, "Verify")
			userauth.NewUserAuth(stack, jsii.String("Auth"), &tc.props)
			s := synthOf(t, stack)
			fn := Props(s.Resources("AWS::Lambda::Function")[s.LogicalID(t, "AWS::Lambda::Function", "AuthPreSignUp")])
			if env := fn["Environment"].(map[string]any)["Variables"].(map[string]any); env["VERIFY_EMAIL_BY_CODE"] != tc.byCode {
				t.Errorf("PreSignUp environment %s, want VERIFY_EMAIL_BY_CODE=%s", JSON(env), tc.byCode)
			}
			for _, r := range s.Resources("AWS::Cognito::UserPool") {
				p := Props(r)
				if JSON(p["AutoVerifiedAttributes"]) != JSON([]any{"email"}) ||
					JSON(p["UserAttributeUpdateSettings"]) != JSON(map[string]any{"AttributesRequireVerificationBeforeUpdate": []any{"email"}}) {
					t.Errorf("pool %s: want email auto-verified (codes sent) and kept until a change is verified", JSON(p))
				}
			}
		})
	}
}

// TestNotifyFunctionOnRequest: the to-do app's target as a function of
// its own exists only when an adopter asks for it (NotifyFunction, once
// however often it is called), and may do what the target does and no
// more: read the task and the owner's settings, record the notification,
// publish to the shard topics.
func TestNotifyFunctionOnRequest(t *testing.T) {
	stack := customStack(t, "NotifyOnRequest")
	auth := userauth.NewUserAuth(stack, jsii.String("Auth"), nil)
	n := notifications.NewUserNotifications(stack, jsii.String("Notifications"), &notifications.UserNotificationsProps{UserPool: auth.UserPool})
	WantPanic(t, func() { n.NotifyFunction() }, "NotifyFunction before StoreSettingsIn", "StoreSettingsIn(table)")
	table := settingsTable(stack)
	n.StoreSettingsIn(table)
	if first, again := n.NotifyFunction(), n.NotifyFunction(); first != again {
		t.Error("a second NotifyFunction call made a second function")
	}
	s := synthOf(t, stack)
	id := s.LogicalID(t, "AWS::Lambda::Function", "NotificationsNotify")
	got := ActionMap(s.FunctionStatements(t, "NotificationsNotify"))
	for _, a := range []string{"logs:CreateLogStream", "logs:PutLogEvents"} {
		delete(got, a)
	}
	keys := make([]string, 0, len(got))
	for a := range got {
		keys = append(keys, a)
	}
	slices.Sort(keys)
	if want := []string{"dynamodb:GetItem", "dynamodb:UpdateItem", "sns:Publish"}; !slices.Equal(keys, want) {
		t.Errorf("%s may %v, want exactly %v", id, keys, want)
	}
}
