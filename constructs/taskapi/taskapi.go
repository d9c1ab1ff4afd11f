// Package taskapi is the REST API over a schedule-on-write table: API
// Gateway with a Cognito authorizer on every method, and one Go function
// that serves /tasks, /tasks/{id} and, with Notifications, the caller's
// notification setting /me/notifications.
package taskapi

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/cursorsecret"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/restapi"
	"github.com/unschedule/unschedule/constructs/internal/waf"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
	"github.com/unschedule/unschedule/internal/todo/todometrics"
)

// ScheduleCreator is what the API needs of the scheduling side
// (scheduleonwrite.SchedulerTimer implements it).
type ScheduleCreator interface {
	GrantCreateSchedules(grantee awsiam.IGrantable) awsiam.Grant
	Environment() map[string]string
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
	// MemoryMiB of the API function (128..10240).
	// Default: 256.
	MemoryMiB float64
	// Timeout of the API function: whole seconds, 1 to 29 (API Gateway
	// ends a REST integration after 29 seconds).
	// Default: 10 seconds.
	Timeout awscdk.Duration
	// RestApiProps override the defaults of the REST API (regional
	// endpoint, CloudWatch role, and DeployOptions: stage StageName,
	// throttling, JSON access logs, metrics, ERROR logging), field by field;
	// DeployOptions merge field by field too. The security defaults stay:
	// the access logs are the construct's (DeployOptions.AccessLogDestination
	// and AccessLogFormat fail), CORS comes from AllowedOrigins
	// (DefaultCorsPreflightOptions fails), the API is deployed (Deploy
	// false fails), and the stage name and throttling come from the props
	// above (DeployOptions.StageName and Throttling... fail).
	// Default: the defaults above.
	RestApiProps *awsapigateway.RestApiProps
	// Logs of the function and the access logs.
	// Default: one month, retained.
	Logs gofn.LogOptions
	// MaxPendingTasksPerUser caps one user's open (Pending) tasks: a
	// create past it is answered 429 with the limit.
	// Default: 1000.
	MaxPendingTasksPerUser float64
	// WebAcl puts an AWS WAF web ACL on the stage: a rate limit per client
	// IP (WafRateLimitPerIp) and per Authorization header
	// (WafRateLimitPerToken), and AWS's managed common rule set. WAF bills
	// per web ACL, rule and request.
	// Default: false.
	WebAcl bool
	// WafRateLimitPerIp is the most requests one IP may send in 5 minutes.
	// Default: 1500.
	WafRateLimitPerIp float64
	// WafRateLimitPerToken is the most requests one Authorization header
	// (one signed-in session) may send in 5 minutes.
	// Default: 600.
	WafRateLimitPerToken float64
	// AlarmTopic receives the API's alarms (5XXError of the stage, and the
	// handler's ApiServerErrors).
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
}

// TaskApi is the REST API and its function.
type TaskApi struct {
	constructs.Construct
	// Api is the REST API.
	Api awsapigateway.RestApi
	// Handler serves every route.
	Handler *gofn.Function
	// CursorSecret is the generated secret whose key seals the task
	// list's page cursors; only Handler may read it.
	CursorSecret awssecretsmanager.Secret
	// AccessLogs receives one JSON line per request (AccessLogFormat).
	AccessLogs awslogs.LogGroup
	// WebAcl guards the stage (nil unless TaskApiProps.WebAcl).
	WebAcl awswafv2.CfnWebACL
	// ServerErrorAlarm fires on any 5xx the stage answers (5XXError).
	ServerErrorAlarm awscloudwatch.Alarm
	// HandlerErrorAlarm fires on any 5xx the handler answers
	// (ApiServerErrors).
	HandlerErrorAlarm awscloudwatch.Alarm
}

// AccessLogFormat is one JSON object per request: API Gateway's standard
// fields (without the IAM caller, always empty here) and the Cognito sub
// of the caller, so a request in the log names the user it acted for. It
// is every REST API's of the constructs (campaigns' too).
const AccessLogFormat = restapi.AccessLogFormat

// NewTaskApi builds the API.
func NewTaskApi(scope constructs.Construct, id *string, props *TaskApiProps) *TaskApi {
	p := withDefaults(*id, props)
	c := constructs.NewConstruct(scope, id)
	a := &TaskApi{Construct: c}

	env := map[string]string{
		envvars.Table:                  *p.Table.TableName(),
		todoenv.AllowedOrigins:         strings.Join(p.AllowedOrigins, ","),
		todoenv.MaxPendingTasksPerUser: strconv.Itoa(int(p.MaxPendingTasksPerUser)),
		// The API writes to-do items and creates their schedules: the
		// to-do schema, which every function reading items must be given.
		envvars.ItemSchema: tableschema.Todo().EnvValue(),
	}
	for k, v := range p.Schedules.Environment() {
		env[k] = v
	}
	if p.Notifications != nil {
		for k, v := range p.Notifications.Environment() {
			env[k] = v
		}
	}
	a.Handler = gofn.NewFunction(c, jsii.String("Handler"), &gofn.FunctionProps{
		Entry:       "lambdas/api",
		Description: "Task REST API",
		MemoryMiB:   p.MemoryMiB,
		Timeout:     p.Timeout,
		Logs:        p.Logs,
		Environment: env,
	})
	// Exactly what the handler does: no Scan, no batch; of the indexes,
	// only the count of the caller's Pending tasks (the per-user cap).
	scheduleonwrite.GrantTable(p.Table, a.Handler.Function, "dynamodb:GetItem", "dynamodb:PutItem",
		"dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query")
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: a.Handler.Function, Actions: jsii.Strings("dynamodb:Query"),
		ResourceArns: jsii.Strings(*p.Table.TableArn() + "/index/" + tableschema.UserPendingIndex),
	})
	p.Schedules.GrantCreateSchedules(a.Handler.Function)
	a.CursorSecret = cursorsecret.New(c, a.Handler.Function)
	if p.Notifications != nil {
		// Subscribe, read the state of and delete the caller's recorded subscription.
		p.Notifications.GrantSubscribe(a.Handler.Function)
	}

	a.AccessLogs = p.Logs.NewLogGroup(c, "AccessLogs")
	var over awsapigateway.RestApiProps
	if p.RestApiProps != nil {
		over = *p.RestApiProps
	}
	deploy := propcheck.Merge(awsapigateway.StageOptions{
		StageName:            jsii.String(p.StageName),
		ThrottlingRateLimit:  jsii.Number(p.ThrottlingRateLimit),
		ThrottlingBurstLimit: jsii.Number(p.ThrottlingBurstLimit),
		MetricsEnabled:       jsii.Bool(true),
		LoggingLevel:         awsapigateway.MethodLoggingLevel_ERROR,
	}, over.DeployOptions)
	restapi.AccessLogs(&deploy, a.AccessLogs)
	over.DeployOptions = nil
	api := propcheck.Merge(awsapigateway.RestApiProps{
		Description:    jsii.String("Tasks that expire at their deadline"),
		CloudWatchRole: jsii.Bool(true),
		EndpointTypes:  &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
	}, &over)
	api.DeployOptions = &deploy
	api.DefaultCorsPreflightOptions = restapi.CorsPreflight(p.AllowedOrigins, "GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
	a.Api = awsapigateway.NewRestApi(c, jsii.String("Resource"), &api)
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

	if p.WebAcl {
		a.WebAcl = waf.New(c, "WebAcl", waf.Props{
			MetricName: "TaskApi", RateLimitPerIP: p.WafRateLimitPerIp, RateLimitPerAuthorization: p.WafRateLimitPerToken,
			// The handler refuses bodies over 16 KiB itself, with a JSON
			// 413. Task texts are plain text that the web app renders
			// escaped (React), so a title such as "fix the <script> tag"
			// is data, not an attack: blocking it would only refuse a
			// legitimate task with a bare 403.
			CountOnly: []string{"SizeRestrictions_BODY", "CrossSiteScripting_BODY"},
		})
		waf.Associate(c, "WebAclAssociation", a.WebAcl, a.Api.DeploymentStage().StageArn())
	} else {
		nag.Suppress(a.Api, nag.Rule{ID: "AwsSolutions-APIG3",
			Reason: "WAF is off (TaskApiProps.WebAcl, cdk.json waf): the stage is throttled and every method needs a Cognito token"})
	}
	a.ServerErrorAlarm = alarms.AtLeast(c, "ServerErrorAlarm",
		"The API answered 5xx (API Gateway's 5XXError: the handler failed, timed out or could not be invoked). Check the API function's logs and errors.",
		a.MetricServerErrors(nil), 1, p.AlarmTopic)
	a.HandlerErrorAlarm = alarms.AtLeast(c, "HandlerErrorAlarm",
		"The API handler answered 5xx (ApiServerErrors: a store or scheduler call failed). Check the API function's logs for \"internal error\".",
		a.MetricApiServerErrors(nil), 1, p.AlarmTopic)

	nag.Suppress(a.Api,
		nag.Rule{ID: "AwsSolutions-APIG2", Reason: "The handler validates every body strictly (unknown fields, sizes, times) and answers JSON 4xx; API Gateway's validator would answer in another format"},
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

// MetricApiServerErrors counts the handler's 5xx answers (a store or
// scheduler call failed): Sum over 5 minutes unless opts say otherwise.
func (a *TaskApi) MetricApiServerErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(a.Construct, todometrics.FunctionAPI, todometrics.ApiServerErrors, opts)
}

// MetricTasksCreated counts the tasks the API created.
func (a *TaskApi) MetricTasksCreated(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(a.Construct, todometrics.FunctionAPI, todometrics.TasksCreated, opts)
}

// MetricServerErrors counts the stage's 5xx answers (API Gateway's
// 5XXError, the handler's included).
func (a *TaskApi) MetricServerErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return a.Api.DeploymentStage().MetricServerError(alarms.SumOptions(opts))
}

// MetricClientErrors counts the stage's 4xx answers (API Gateway's
// 4XXError: bad input, unauthenticated calls, throttling).
func (a *TaskApi) MetricClientErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return a.Api.DeploymentStage().MetricClientError(alarms.SumOptions(opts))
}

// ErrorAlarms are the construct's alarms on the error metrics its
// function writes (internal/core/metrics.ErrorMetrics), for
// operations.OperationsProps.Sources.
func (a *TaskApi) ErrorAlarms() []awscloudwatch.Alarm {
	return []awscloudwatch.Alarm{a.HandlerErrorAlarm}
}

func withDefaults(id string, props *TaskApiProps) TaskApiProps {
	if props == nil {
		panic(fmt.Sprintf("%s: props are required: Table, Schedules, UserPool and AllowedOrigins", id))
	}
	p := *props
	switch {
	case p.Table == nil:
		panic(fmt.Sprintf("%s: Table is required: pass the schedule-on-write table", id))
	case p.Schedules == nil:
		panic(fmt.Sprintf("%s: Schedules is required: pass the scheduleonwrite.SchedulerTimer of the schedule-on-write construct", id))
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
	if o := p.RestApiProps; o != nil {
		switch {
		case o.DefaultCorsPreflightOptions != nil:
			panic(fmt.Sprintf("%s: RestApiProps.DefaultCorsPreflightOptions is set: CORS comes from AllowedOrigins; set that instead", id))
		case o.Deploy != nil && !*o.Deploy:
			panic(fmt.Sprintf("%s: RestApiProps.Deploy is false: the API needs its stage (Url, access logs, alarms); remove it", id))
		case o.DeployOptions != nil && (o.DeployOptions.AccessLogDestination != nil || o.DeployOptions.AccessLogFormat != nil):
			panic(fmt.Sprintf("%s: RestApiProps.DeployOptions sets the access log: the construct keeps JSON access logs naming the caller (AccessLogs, Logs); remove AccessLogDestination and AccessLogFormat", id))
		case o.DeployOptions != nil && (o.DeployOptions.StageName != nil || o.DeployOptions.ThrottlingRateLimit != nil || o.DeployOptions.ThrottlingBurstLimit != nil):
			panic(fmt.Sprintf("%s: RestApiProps.DeployOptions sets StageName or throttling: set TaskApiProps.StageName, ThrottlingRateLimit and ThrottlingBurstLimit instead", id))
		}
	}
	p.StageName = propcheck.Or(p.StageName, "api")
	p.ThrottlingRateLimit = propcheck.Or(p.ThrottlingRateLimit, 50)
	p.ThrottlingBurstLimit = propcheck.Or(p.ThrottlingBurstLimit, 100)
	p.MemoryMiB = propcheck.Or(p.MemoryMiB, 256)
	propcheck.CheckSeconds(id, "Timeout", p.Timeout, 1, 29, "API Gateway ends a REST integration after 29 seconds")
	for name, v := range map[string]float64{"ThrottlingRateLimit": p.ThrottlingRateLimit, "ThrottlingBurstLimit": p.ThrottlingBurstLimit} {
		if v <= 0 {
			panic(fmt.Sprintf("%s: %s must be above 0 requests per second (given %v): raise it, or leave it unset for the default", id, name, v))
		}
	}
	p.MaxPendingTasksPerUser = propcheck.Or(p.MaxPendingTasksPerUser, task.DefaultMaxPendingPerUser)
	if p.MaxPendingTasksPerUser < 1 || p.MaxPendingTasksPerUser != float64(int(p.MaxPendingTasksPerUser)) {
		panic(fmt.Sprintf("%s: MaxPendingTasksPerUser must be a whole number of at least 1 (given %v): raise it, or leave it unset for 1000", id, p.MaxPendingTasksPerUser))
	}
	p.WafRateLimitPerIp = propcheck.Or(p.WafRateLimitPerIp, 1500)
	p.WafRateLimitPerToken = propcheck.Or(p.WafRateLimitPerToken, 600)
	// WAF's bounds for a rate-based rule's limit.
	for name, v := range map[string]float64{"WafRateLimitPerIp": p.WafRateLimitPerIp, "WafRateLimitPerToken": p.WafRateLimitPerToken} {
		if v < 10 || v > 2000000000 {
			panic(fmt.Sprintf("%s: %s must be between 10 and 2000000000 requests per 5 minutes (given %v): set it in range (WAF's limits)", id, name, v))
		}
	}
	return p
}
