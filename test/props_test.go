package test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/notifications"
	"github.com/unschedule/unschedule/constructs/operations"
	"github.com/unschedule/unschedule/constructs/taskapi"
	"github.com/unschedule/unschedule/constructs/userauth"
)

// propCase is one construct built with one bad (or edge) prop: want lists
// what the panic must say (the prop, the value, how to fix it); no want
// means the props must be accepted.
type propCase struct {
	name  string
	build func(stack awscdk.Stack, id string)
	want  []string
}

// runPropCases builds each case in its own construct of one stack whose
// functions are not bundled (customStack, panicText: cancellation_test.go).
func runPropCases(t *testing.T, cases []propCase) {
	t.Helper()
	stack := customStack(t, "Props")
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := panicText(func() { tc.build(stack, fmt.Sprint("C", i)) })
			if len(tc.want) == 0 {
				if got != "" {
					t.Fatalf("refused valid props: %s", got)
				}
				return
			}
			if got == "" {
				t.Fatalf("accepted; want a panic saying %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("panic %q lacks %q", got, w)
				}
			}
		})
	}
}

func seconds(s float64) awscdk.Duration { return awscdk.Duration_Seconds(jsii.Number(s)) }

func TestGoFunctionPropsValidation(t *testing.T) {
	fn := func(edit func(p *gofn.FunctionProps)) func(awscdk.Stack, string) {
		return func(stack awscdk.Stack, id string) {
			p := &gofn.FunctionProps{Entry: "lambdas/presignup"}
			edit(p)
			gofn.NewFunction(stack, jsii.String(id), p)
		}
	}
	runPropCases(t, []propCase{
		{"no entry", fn(func(p *gofn.FunctionProps) { p.Entry = "" }), []string{"Entry is required", "lambdas/fire"}},
		{"entry not a folder", fn(func(p *gofn.FunctionProps) { p.Entry = "lambdas/nope" }), []string{`Entry "lambdas/nope" is not a package folder of module`, "relative to that root"}},
		{"memory below Lambda's minimum", fn(func(p *gofn.FunctionProps) { p.MemoryMiB = 64 }), []string{"MemoryMiB", "between 128 and 10240", "(given 64)", "set it in range"}},
		{"memory not whole", fn(func(p *gofn.FunctionProps) { p.MemoryMiB = 200.5 }), []string{"MemoryMiB", "(given 200.5)"}},
		{"zero timeout", fn(func(p *gofn.FunctionProps) { p.Timeout = seconds(0) }), []string{"Timeout", "between 1 and 900", "(given 0 seconds)", "set it in range"}},
		{"timeout above 15 minutes", fn(func(p *gofn.FunctionProps) { p.Timeout = awscdk.Duration_Minutes(jsii.Number(16)) }), []string{"Timeout", "(given 16 minutes)"}},
		{"timeout not whole seconds", fn(func(p *gofn.FunctionProps) { p.Timeout = awscdk.Duration_Millis(jsii.Number(1500)) }), []string{"Timeout", "whole number of seconds"}},
		{"negative reserved concurrency", fn(func(p *gofn.FunctionProps) { p.ReservedConcurrentExecutions = jsii.Number(-1) }), []string{"ReservedConcurrentExecutions", "(given -1)"}},
		{"zero reserved concurrency switches the function off", fn(func(p *gofn.FunctionProps) { p.ReservedConcurrentExecutions = jsii.Number(0) }), nil},
		{"15-minute timeout", fn(func(p *gofn.FunctionProps) { p.Timeout = awscdk.Duration_Minutes(jsii.Number(15)) }), nil},
	})
}

// TestGoFunctionZeroReservedConcurrency: a pointer zero is kept (Lambda
// throttles every invocation), where unset reserves nothing.
func TestGoFunctionZeroReservedConcurrency(t *testing.T) {
	stack := customStack(t, "Zero")
	gofn.NewFunction(stack, jsii.String("Off"), &gofn.FunctionProps{Entry: "lambdas/presignup", ReservedConcurrentExecutions: jsii.Number(0)})
	gofn.NewFunction(stack, jsii.String("Free"), &gofn.FunctionProps{Entry: "lambdas/presignup", Timeout: seconds(20)})
	s := synthOf(t, stack)
	off := Props(s.Resources("AWS::Lambda::Function")[s.LogicalID(t, "AWS::Lambda::Function", "Off")])
	free := Props(s.Resources("AWS::Lambda::Function")[s.LogicalID(t, "AWS::Lambda::Function", "Free")])
	if v, ok := off["ReservedConcurrentExecutions"]; !ok || v != float64(0) {
		t.Errorf("ReservedConcurrentExecutions = %v (set %v), want 0", v, ok)
	}
	if _, ok := free["ReservedConcurrentExecutions"]; ok || free["Timeout"] != float64(20) {
		t.Errorf("unset reservation and a 20 s timeout: %s", JSON(free))
	}
}

func TestUserAuthPropsValidation(t *testing.T) {
	auth := func(edit func(stack awscdk.Stack, p *userauth.UserAuthProps)) func(awscdk.Stack, string) {
		return func(stack awscdk.Stack, id string) {
			p := &userauth.UserAuthProps{}
			edit(stack, p)
			userauth.NewUserAuth(stack, jsii.String(id), p)
		}
	}
	imported := func(stack awscdk.Stack, id string) awscognito.IUserPool {
		return awscognito.UserPool_FromUserPoolId(stack, jsii.String(id+"Pool"), jsii.String("eu-west-1_abcdefghi"))
	}
	n := 0
	runPropCases(t, []propCase{
		{"password too short", auth(func(_ awscdk.Stack, p *userauth.UserAuthProps) { p.PasswordMinLength = 7 }), []string{"PasswordMinLength", "between 8 and 99", "(given 7)", "set it in range"}},
		{"password too long", auth(func(_ awscdk.Stack, p *userauth.UserAuthProps) { p.PasswordMinLength = 100 }), []string{"PasswordMinLength", "(given 100)"}},
		{"WAF limit below WAF's minimum", auth(func(_ awscdk.Stack, p *userauth.UserAuthProps) { p.WafRateLimitPerIp = 5 }), []string{"WafRateLimitPerIp", "(given 5)", "set it in range"}},
		{"an address, not a domain", auth(func(_ awscdk.Stack, p *userauth.UserAuthProps) { p.AllowedEmailDomains = []string{"me@example.com"} }), []string{`"me@example.com"`, `bare domains such as "example.com"`}},
		{"existing pool and pool props", auth(func(stack awscdk.Stack, p *userauth.UserAuthProps) {
			n++
			p.ExistingUserPool, p.UserPoolProps = imported(stack, fmt.Sprint("Both", n)), &awscognito.UserPoolProps{}
		}), []string{"ExistingUserPool and UserPoolProps are both set", "not both"}},
		{"a PreSignUp of one's own", auth(func(stack awscdk.Stack, p *userauth.UserAuthProps) {
			p.UserPoolProps = &awscognito.UserPoolProps{LambdaTriggers: &awscognito.UserPoolTriggers{PreSignUp: awslambda.Function_FromFunctionName(stack, jsii.String("Own"), jsii.String("own"))}}
		}), []string{"LambdaTriggers.PreSignUp", "use ExistingUserPool"}},
		{"a PostConfirmation of one's own", auth(func(stack awscdk.Stack, p *userauth.UserAuthProps) {
			p.UserPoolProps = &awscognito.UserPoolProps{LambdaTriggers: &awscognito.UserPoolTriggers{PostConfirmation: awslambda.Function_FromFunctionName(stack, jsii.String("OwnPost"), jsii.String("own"))}}
		}), []string{"LambdaTriggers.PostConfirmation", "records email proofs", "use ExistingUserPool"}},
		{"an email_proof attribute of one's own", auth(func(_ awscdk.Stack, p *userauth.UserAuthProps) {
			p.UserPoolProps = &awscognito.UserPoolProps{CustomAttributes: &map[string]awscognito.ICustomAttribute{
				"email_proof": awscognito.NewStringAttribute(&awscognito.StringAttributeProps{Mutable: jsii.Bool(true)})}}
		}), []string{`CustomAttributes names "email_proof"`, "remove it"}},
		{"a weak password policy", auth(func(_ awscdk.Stack, p *userauth.UserAuthProps) {
			p.UserPoolProps = &awscognito.UserPoolProps{PasswordPolicy: &awscognito.PasswordPolicy{MinLength: jsii.Number(6)}}
		}), []string{"PasswordPolicy must keep MinLength at 8 or more (given 6)", "set MinLength"}},
		{"removal policy in pool props", auth(func(_ awscdk.Stack, p *userauth.UserAuthProps) {
			p.UserPoolProps = &awscognito.UserPoolProps{RemovalPolicy: awscdk.RemovalPolicy_DESTROY}
		}), []string{"UserPoolProps.RemovalPolicy", "set UserAuthProps.RemovalPolicy"}},
		{"verification by code with no code sent", auth(func(_ awscdk.Stack, p *userauth.UserAuthProps) {
			p.RequireEmailVerification, p.UserPoolProps = true, &awscognito.UserPoolProps{AutoVerify: &awscognito.AutoVerifiedAttrs{Email: jsii.Bool(false)}}
		}), []string{"UserPoolProps.AutoVerify turns email verification off", "keep AutoVerify.Email true"}},
		{"an existing pool", auth(func(stack awscdk.Stack, p *userauth.UserAuthProps) { p.ExistingUserPool = imported(stack, "Ok") }), nil},
		{"pool props", auth(func(_ awscdk.Stack, p *userauth.UserAuthProps) {
			p.UserPoolProps = &awscognito.UserPoolProps{UserPoolName: jsii.String("mine"), SelfSignUpEnabled: jsii.Bool(false)}
		}), nil},
	})
}

func TestUserNotificationsPropsValidation(t *testing.T) {
	notif := func(edit func(stack awscdk.Stack, id string, p *notifications.UserNotificationsProps)) func(awscdk.Stack, string) {
		return func(stack awscdk.Stack, id string) {
			p := &notifications.UserNotificationsProps{TopicNamePrefix: "n" + id}
			edit(stack, id, p)
			notifications.NewUserNotifications(stack, jsii.String(id), p)
		}
	}
	topic := func(stack awscdk.Stack, id, name string) awssns.ITopic {
		return awssns.Topic_FromTopicArn(stack, jsii.String(id+name), jsii.String("arn:aws:sns:eu-west-1:111111111111:"+name))
	}
	runPropCases(t, []propCase{
		{"too many shards", notif(func(_ awscdk.Stack, _ string, p *notifications.UserNotificationsProps) { p.Shards = 5001 }), []string{"Shards must be between 1 and 5000", "(given 5001)"}},
		{"negative shards", notif(func(_ awscdk.Stack, _ string, p *notifications.UserNotificationsProps) { p.Shards = -1 }), []string{"Shards", "(given -1)"}},
		{"prefix with a space", notif(func(_ awscdk.Stack, _ string, p *notifications.UserNotificationsProps) {
			p.TopicNamePrefix = "my topics"
		}), []string{`TopicNamePrefix "my topics"`, "rename it"}},
		{"existing topics and topic props", notif(func(stack awscdk.Stack, id string, p *notifications.UserNotificationsProps) {
			p.ExistingTopics, p.TopicProps = []awssns.ITopic{topic(stack, id, "n"+id+"-0")}, &awssns.TopicProps{}
		}), []string{"ExistingTopics and TopicProps are both set", "not both"}},
		{"existing topics without a prefix", notif(func(stack awscdk.Stack, id string, p *notifications.UserNotificationsProps) {
			p.ExistingTopics, p.TopicNamePrefix = []awssns.ITopic{topic(stack, id, "x-0")}, ""
		}), []string{"TopicNamePrefix is required with ExistingTopics"}},
		{"an existing topic with another name", notif(func(stack awscdk.Stack, id string, p *notifications.UserNotificationsProps) {
			p.ExistingTopics = []awssns.ITopic{topic(stack, id, "other-0")}
		}), []string{`ExistingTopics[0] is named "other-0"`, "<TopicNamePrefix>-<i>"}},
		{"shards that disagree with the topics", notif(func(stack awscdk.Stack, id string, p *notifications.UserNotificationsProps) {
			p.ExistingTopics, p.Shards = []awssns.ITopic{topic(stack, id, "n"+id+"-0")}, 2
		}), []string{"Shards (2) differs from the number of ExistingTopics (1)"}},
		{"a topic name in topic props", notif(func(_ awscdk.Stack, _ string, p *notifications.UserNotificationsProps) {
			p.TopicProps = &awssns.TopicProps{TopicName: jsii.String("x")}
		}), []string{"TopicProps may not set TopicName", "TopicNamePrefix"}},
		{"attach to an imported pool", notif(func(stack awscdk.Stack, id string, p *notifications.UserNotificationsProps) {
			p.UserPool = awscognito.UserPool_FromUserPoolId(stack, jsii.String(id+"Pool"), jsii.String("eu-west-1_abcdefghi"))
			p.AttachPostAuthTrigger = jsii.Bool(true)
		}), []string{"AttachPostAuthTrigger is true", "attach PostAuthFunction to the pool yourself"}},
		{"do not attach to an owned pool", notif(func(stack awscdk.Stack, id string, p *notifications.UserNotificationsProps) {
			p.UserPool = awscognito.NewUserPool(stack, jsii.String(id+"Pool"), nil)
			p.AttachPostAuthTrigger = jsii.Bool(false)
		}), nil},
		{"existing topics", notif(func(stack awscdk.Stack, id string, p *notifications.UserNotificationsProps) {
			p.ExistingTopics = []awssns.ITopic{topic(stack, id, "n"+id+"-0"), topic(stack, id, "n"+id+"-1")}
		}), nil},
	})
}

type fakeScheduleCreator struct{}

func (fakeScheduleCreator) GrantCreateSchedules(g awsiam.IGrantable) awsiam.Grant {
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{Grantee: g, Actions: jsii.Strings("scheduler:CreateSchedule"), ResourceArns: jsii.Strings("*")})
}
func (fakeScheduleCreator) Environment() map[string]string { return map[string]string{} }

func TestTaskApiPropsValidation(t *testing.T) {
	var table awsdynamodb.ITable
	var pool awscognito.IUserPool
	api := func(edit func(p *taskapi.TaskApiProps)) func(awscdk.Stack, string) {
		return func(stack awscdk.Stack, id string) {
			if table == nil {
				table = awsdynamodb.Table_FromTableName(stack, jsii.String("Table"), jsii.String("tasks"))
				pool = awscognito.UserPool_FromUserPoolId(stack, jsii.String("Pool"), jsii.String("eu-west-1_abcdefghi"))
			}
			p := &taskapi.TaskApiProps{Table: table, Schedules: fakeScheduleCreator{}, UserPool: pool, AllowedOrigins: []string{"https://app.example.com"}}
			edit(p)
			taskapi.NewTaskApi(stack, jsii.String(id), p)
		}
	}
	runPropCases(t, []propCase{
		{"no table", api(func(p *taskapi.TaskApiProps) { p.Table = nil }), []string{"Table is required", "pass the schedule-on-write table"}},
		{"no schedules", api(func(p *taskapi.TaskApiProps) { p.Schedules = nil }), []string{"Schedules is required"}},
		{"no user pool", api(func(p *taskapi.TaskApiProps) { p.UserPool = nil }), []string{"UserPool is required"}},
		{"no origins", api(func(p *taskapi.TaskApiProps) { p.AllowedOrigins = nil }), []string{"AllowedOrigins is required", "https://app.example.com"}},
		{"an origin with a path", api(func(p *taskapi.TaskApiProps) { p.AllowedOrigins = []string{"https://app.example.com/"} }), []string{`"https://app.example.com/"`, "without a path or trailing slash"}},
		{"a fractional cap", api(func(p *taskapi.TaskApiProps) { p.MaxPendingTasksPerUser = 0.5 }), []string{"MaxPendingTasksPerUser", "(given 0.5)", "leave it unset for 1000"}},
		{"a timeout past API Gateway's", api(func(p *taskapi.TaskApiProps) { p.Timeout = seconds(30) }), []string{"Timeout", "between 1 and 29", "(given 30 seconds)"}},
		{"negative throttling", api(func(p *taskapi.TaskApiProps) { p.ThrottlingRateLimit = -1 }), []string{"ThrottlingRateLimit must be above 0", "(given -1)"}},
		{"WAF limit below WAF's minimum", api(func(p *taskapi.TaskApiProps) { p.WafRateLimitPerToken = 5 }), []string{"WafRateLimitPerToken", "(given 5)"}},
		{"CORS in the API props", api(func(p *taskapi.TaskApiProps) {
			p.RestApiProps = &awsapigateway.RestApiProps{DefaultCorsPreflightOptions: &awsapigateway.CorsOptions{AllowOrigins: jsii.Strings("*")}}
		}), []string{"DefaultCorsPreflightOptions", "set that instead"}},
		{"no deployment", api(func(p *taskapi.TaskApiProps) { p.RestApiProps = &awsapigateway.RestApiProps{Deploy: jsii.Bool(false)} }), []string{"Deploy is false", "remove it"}},
		{"another access log", api(func(p *taskapi.TaskApiProps) {
			p.RestApiProps = &awsapigateway.RestApiProps{DeployOptions: &awsapigateway.StageOptions{AccessLogFormat: awsapigateway.AccessLogFormat_Clf()}}
		}), []string{"sets the access log", "remove AccessLogDestination and AccessLogFormat"}},
		{"stage name in the API props", api(func(p *taskapi.TaskApiProps) {
			p.RestApiProps = &awsapigateway.RestApiProps{DeployOptions: &awsapigateway.StageOptions{StageName: jsii.String("v1")}}
		}), []string{"set TaskApiProps.StageName"}},
		{"API props", api(func(p *taskapi.TaskApiProps) {
			p.RestApiProps = &awsapigateway.RestApiProps{RestApiName: jsii.String("tasks"), DeployOptions: &awsapigateway.StageOptions{TracingEnabled: jsii.Bool(true)}}
		}), nil},
	})
}

func TestOperationsPropsValidation(t *testing.T) {
	ops := func(edit func(stack awscdk.Stack, p *operations.OperationsProps)) func(awscdk.Stack, string) {
		return func(stack awscdk.Stack, id string) {
			p := &operations.OperationsProps{AlarmTopic: awssns.Topic_FromTopicArn(stack, jsii.String(id+"Topic"), jsii.String("arn:aws:sns:eu-west-1:111111111111:alarms"))}
			edit(stack, p)
			operations.NewOperations(stack, jsii.String(id), p)
		}
	}
	runPropCases(t, []propCase{
		{"no topic", func(stack awscdk.Stack, id string) {
			operations.NewOperations(stack, jsii.String(id), &operations.OperationsProps{})
		}, []string{"AlarmTopic is required", "pass the topic"}},
		{"a dashboard name with a space", ops(func(_ awscdk.Stack, p *operations.OperationsProps) { p.DashboardName = "my dashboard" }), []string{`DashboardName "my dashboard"`, "rename it"}},
		{"a function without a name", ops(func(stack awscdk.Stack, p *operations.OperationsProps) {
			p.Watch = []operations.WatchedFunction{{Function: awslambda.Function_FromFunctionName(stack, jsii.String("Fn"), jsii.String("fn"))}}
		}), []string{"Watch holds a function without a Name or a Function"}},
		{"a watched function without its function", ops(func(_ awscdk.Stack, p *operations.OperationsProps) {
			p.Watch = []operations.WatchedFunction{{Name: "api"}}
		}), []string{"Watch holds a function without a Name or a Function", `"api"`}},
		{"a function named twice", ops(func(stack awscdk.Stack, p *operations.OperationsProps) {
			fn := awslambda.Function_FromFunctionName(stack, jsii.String("Twice"), jsii.String("fn"))
			p.Watch = []operations.WatchedFunction{{Name: "api", Function: fn}, {Name: "api", Function: fn, ThrottlesOnly: true}}
		}), []string{`function name "api" is given twice`, "rename one"}},
		{"a dashboard queue without a name", ops(func(stack awscdk.Stack, p *operations.OperationsProps) {
			p.DashboardQueues = []operations.NamedQueue{{Queue: awssqs.Queue_FromQueueArn(stack, jsii.String("Q"), jsii.String("arn:aws:sqs:us-east-1:123456789012:q"))}}
		}), []string{"DashboardQueues holds a queue without a Name"}},
		{"a function without metrics", ops(func(_ awscdk.Stack, p *operations.OperationsProps) { p.ErrorMetrics = map[string][]string{"api": nil} }), []string{"ErrorMetrics maps a function name", "leave ErrorMetrics unset"}},
		{"only the topic", ops(func(awscdk.Stack, *operations.OperationsProps) {}), nil},
	})
}
