// Package taskapi is the REST API over a schedule-on-write table: API
// Gateway with a Cognito authorizer on every method, and one Go function
// that serves /tasks, /tasks/{id} and, with Notifications, the caller's
// notification setting /me/notifications.
package taskapi

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
)

// ScheduleCreator is what the API needs of the scheduling side
// (scheduleonwrite.ScheduleOnWrite implements it).
type ScheduleCreator interface {
	GrantCreateSchedules(grantee awsiam.IGrantable) awsiam.Grant
	SchedulerEnvironment() map[string]string
}

// SubscriptionManager is what the API needs of the per-user notifications
// (notifications.UserNotifications implements it).
type SubscriptionManager interface {
	GrantSubscribe(grantee awsiam.IGrantable) awsiam.Grant
	Environment() map[string]string
}

// TaskApiProps configures the API.
type TaskApiProps struct {
	// Table holds the tasks. Required.
	Table awsdynamodb.ITable
	// Schedules creates each new task's schedule. Required.
	Schedules ScheduleCreator
	// UserPool authenticates every request. Required.
	UserPool awscognito.IUserPool
	// Notifications, when set, adds GET and PUT /me/notifications: the
	// caller's notification setting, which subscribes or unsubscribes
	// their email. Their settings must be stored in Table
	// (UserNotifications.StoreSettingsIn).
	// Default: no /me/notifications routes.
	Notifications SubscriptionManager
	// AllowedOrigins may call the API from a browser (CORS), for example
	// the web app's URL. Each is https://... or http://localhost:<port>.
	// Required: at least one.
	AllowedOrigins []string
	// StageName of the deployment.
	// Default: "api".
	StageName string
	// ThrottlingRateLimit is the steady request rate per second.
	// Default: 50.
	ThrottlingRateLimit float64
	// ThrottlingBurstLimit is the burst size.
	// Default: 100.
	ThrottlingBurstLimit float64
	// MemoryMiB of the API function.
	// Default: 256.
	MemoryMiB float64
	// TimeoutSec of the API function.
	// Default: 10.
	TimeoutSec float64
	// LogRetention of the function's and the access logs.
	// Default: one month.
	LogRetention awslogs.RetentionDays
	// LogRemovalPolicy of the log groups.
	// Default: RETAIN.
	LogRemovalPolicy awscdk.RemovalPolicy
}

// TaskApi is the REST API and its function.
type TaskApi struct {
	constructs.Construct
	// Api is the REST API.
	Api awsapigateway.RestApi
	// Handler serves every route.
	Handler *gofn.Function
	// AccessLogs receives one JSON line per request.
	AccessLogs awslogs.LogGroup
}

// NewTaskApi builds the API.
func NewTaskApi(scope constructs.Construct, id *string, props *TaskApiProps) *TaskApi {
	p := withDefaults(*id, props)
	c := constructs.NewConstruct(scope, id)
	a := &TaskApi{Construct: c}

	env := map[string]string{
		"TABLE_NAME":      *p.Table.TableName(),
		"ALLOWED_ORIGINS": strings.Join(p.AllowedOrigins, ","),
	}
	for k, v := range p.Schedules.SchedulerEnvironment() {
		env[k] = v
	}
	if p.Notifications != nil {
		for k, v := range p.Notifications.Environment() {
			env[k] = v
		}
	}
	a.Handler = gofn.NewFunction(c, jsii.String("Handler"), &gofn.FunctionProps{
		Entry:            "lambdas/api",
		Description:      "Task REST API",
		MemoryMiB:        p.MemoryMiB,
		TimeoutSec:       p.TimeoutSec,
		LogRetention:     p.LogRetention,
		LogRemovalPolicy: p.LogRemovalPolicy,
		Environment:      env,
	})
	// Exactly what the handler does: no Scan, no batch, no index access.
	scheduleonwrite.GrantTable(p.Table, a.Handler.Function, "dynamodb:GetItem", "dynamodb:PutItem",
		"dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query")
	p.Schedules.GrantCreateSchedules(a.Handler.Function)
	if p.Notifications != nil {
		// Subscribe, read the state of and delete the caller's recorded subscription.
		p.Notifications.GrantSubscribe(a.Handler.Function)
	}

	a.AccessLogs = awslogs.NewLogGroup(c, jsii.String("AccessLogs"), &awslogs.LogGroupProps{
		Retention: p.LogRetention, RemovalPolicy: p.LogRemovalPolicy,
	})
	a.Api = awsapigateway.NewRestApi(c, jsii.String("Resource"), &awsapigateway.RestApiProps{
		Description:    jsii.String("Tasks that expire at their deadline"),
		CloudWatchRole: jsii.Bool(true),
		EndpointTypes:  &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		DeployOptions: &awsapigateway.StageOptions{
			StageName:            jsii.String(p.StageName),
			ThrottlingRateLimit:  jsii.Number(p.ThrottlingRateLimit),
			ThrottlingBurstLimit: jsii.Number(p.ThrottlingBurstLimit),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(a.AccessLogs),
			AccessLogFormat: awsapigateway.AccessLogFormat_JsonWithStandardFields(&awsapigateway.JsonWithStandardFieldProps{
				Caller: jsii.Bool(false), HttpMethod: jsii.Bool(true), Ip: jsii.Bool(true), Protocol: jsii.Bool(true),
				RequestTime: jsii.Bool(true), ResourcePath: jsii.Bool(true), ResponseLength: jsii.Bool(true),
				Status: jsii.Bool(true), User: jsii.Bool(true),
			}),
			MetricsEnabled: jsii.Bool(true),
			LoggingLevel:   awsapigateway.MethodLoggingLevel_ERROR,
		},
		DefaultCorsPreflightOptions: &awsapigateway.CorsOptions{
			AllowOrigins: jsii.Strings(p.AllowedOrigins...),
			AllowMethods: jsii.Strings("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"),
			AllowHeaders: jsii.Strings("Authorization", "Content-Type"),
			MaxAge:       awscdk.Duration_Hours(jsii.Number(1)),
		},
	})
	// Errors API Gateway answers itself (401 from the authorizer, 429
	// throttling, 5xx) must carry CORS headers too, or the browser hides
	// them from the app.
	for _, rt := range []struct {
		id string
		t  awsapigateway.ResponseType
	}{{"Default4xx", awsapigateway.ResponseType_DEFAULT_4XX()}, {"Default5xx", awsapigateway.ResponseType_DEFAULT_5XX()}} {
		a.Api.AddGatewayResponse(jsii.String(rt.id), &awsapigateway.GatewayResponseOptions{
			Type: rt.t,
			ResponseHeaders: &map[string]*string{
				"Access-Control-Allow-Origin": jsii.String("'" + p.AllowedOrigins[0] + "'"),
				"Vary":                        jsii.String("'Origin'"),
			},
			Templates: &map[string]*string{
				"application/json": jsii.String(`{"error":"gateway","message":$context.error.messageString}`),
			},
		})
	}

	nag.Suppress(a.Api,
		nag.Rule{ID: "AwsSolutions-APIG2", Reason: "The handler validates every body strictly (unknown fields, sizes, times) and answers JSON 4xx; API Gateway's validator would answer in another format"},
		nag.Rule{ID: "AwsSolutions-APIG3", Reason: "WAF is an account-level choice with its own cost; the stage is throttled and every method needs a Cognito token"},
		nag.Rule{ID: "AwsSolutions-IAM4", AppliesTo: []any{"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"},
			Reason: "API Gateway's account-wide logging role, as AWS documents it; needed for the access logs"})
	nag.Suppress(nag.RolePolicy(a.Handler.Function), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{nag.ScheduleGroupWildcard},
		Reason: "Creates one schedule per task, named after the task id, only inside this table's schedule group"})

	auth := awsapigateway.NewCognitoUserPoolsAuthorizer(c, jsii.String("Authorizer"), &awsapigateway.CognitoUserPoolsAuthorizerProps{
		CognitoUserPools: &[]awscognito.IUserPool{p.UserPool},
	})
	integration := awsapigateway.NewLambdaIntegration(a.Handler.Function, nil)
	method := &awsapigateway.MethodOptions{Authorizer: auth, AuthorizationType: awsapigateway.AuthorizationType_COGNITO}
	tasks := a.Api.Root().AddResource(jsii.String("tasks"), nil)
	one := tasks.AddResource(jsii.String("{id}"), nil)
	for _, m := range []string{"GET", "POST"} {
		tasks.AddMethod(jsii.String(m), integration, method)
	}
	for _, m := range []string{"GET", "PATCH", "DELETE"} {
		one.AddMethod(jsii.String(m), integration, method)
	}
	if p.Notifications != nil {
		settings := a.Api.Root().AddResource(jsii.String("me"), nil).AddResource(jsii.String("notifications"), nil)
		for _, m := range []string{"GET", "PUT"} {
			settings.AddMethod(jsii.String(m), integration, method)
		}
	}
	return a
}

// Url is the API's base URL (the stage's invoke URL).
func (a *TaskApi) Url() *string { return a.Api.Url() }

func withDefaults(id string, props *TaskApiProps) TaskApiProps {
	if props == nil {
		panic(fmt.Sprintf("%s: props are required: Table, Schedules, UserPool and AllowedOrigins", id))
	}
	p := *props
	switch {
	case p.Table == nil:
		panic(fmt.Sprintf("%s: Table is required: pass the schedule-on-write table", id))
	case p.Schedules == nil:
		panic(fmt.Sprintf("%s: Schedules is required: pass the schedule-on-write construct", id))
	case p.UserPool == nil:
		panic(fmt.Sprintf("%s: UserPool is required: pass the Cognito user pool that signs users in", id))
	case len(p.AllowedOrigins) == 0:
		panic(fmt.Sprintf("%s: AllowedOrigins is required: list the web app's origin, such as https://app.example.com", id))
	}
	for _, o := range p.AllowedOrigins {
		if *awscdk.Token_IsUnresolved(jsii.String(o)) {
			continue
		}
		if !strings.HasPrefix(o, "https://") && !strings.HasPrefix(o, "http://localhost") || strings.HasSuffix(o, "/") || o == "https://" {
			panic(fmt.Sprintf("%s: AllowedOrigins holds %q: give an origin such as https://app.example.com or http://localhost:5173, without a path or trailing slash", id, o))
		}
	}
	if p.StageName == "" {
		p.StageName = "api"
	}
	if p.ThrottlingRateLimit == 0 {
		p.ThrottlingRateLimit = 50
	}
	if p.ThrottlingBurstLimit == 0 {
		p.ThrottlingBurstLimit = 100
	}
	if p.MemoryMiB == 0 {
		p.MemoryMiB = 256
	}
	if p.LogRetention == "" {
		p.LogRetention = awslogs.RetentionDays_ONE_MONTH
	}
	if p.LogRemovalPolicy == "" {
		p.LogRemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	return p
}
