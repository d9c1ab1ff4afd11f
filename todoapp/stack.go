// Package todoapp composes the constructs into the flagship app: a to-do list
// whose tasks expire at their deadline, one stack per environment.
package todoapp

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/campaigns"
	"github.com/unschedule/unschedule/constructs/cancellation"
	"github.com/unschedule/unschedule/constructs/notifications"
	"github.com/unschedule/unschedule/constructs/operations"
	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/constructs/taskapi"
	"github.com/unschedule/unschedule/constructs/userauth"
	"github.com/unschedule/unschedule/constructs/webhosting"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/todometrics"
)

// TodoStackProps configures the stack.
type TodoStackProps struct {
	awscdk.StackProps
	// Config is the environment's settings. Required.
	Config Config
	// WebPlaceholderIfMissing publishes a placeholder page when web/dist
	// is not built (tests; synth on a machine without the web build).
	// Default: a missing build fails synth with how to build it.
	WebPlaceholderIfMissing bool
}

// TodoStack is the whole app.
type TodoStack struct {
	awscdk.Stack
	Auth          *userauth.UserAuth
	Notifications *notifications.UserNotifications
	// Table holds the tasks (and each user's notification settings).
	Table awsdynamodb.Table
	// Timer fires the tasks: one EventBridge Scheduler schedule each.
	Timer        *scheduleonwrite.SchedulerTimer
	Scheduling   *scheduleonwrite.ScheduleOnWrite
	Api          *taskapi.TaskApi
	Cancellation *cancellation.Cancellation
	Reconciler   *reconciler.Reconciler
	Web          *webhosting.WebHosting
	Operations   *operations.Operations
	// Campaigns is the scheduled email campaigns (nil unless
	// Config.Campaigns).
	Campaigns *campaigns.Campaigns
	// AlarmTopic receives every alarm of the stack.
	AlarmTopic awssns.Topic
	// AlarmTopicKey encrypts AlarmTopic; CloudWatch may use it.
	AlarmTopicKey awskms.Key
}

// NewTodoStack builds the app.
func NewTodoStack(scope constructs.Construct, id string, props *TodoStackProps) *TodoStack {
	cfg := props.Config
	stack := awscdk.NewStack(scope, &id, &props.StackProps)
	s := &TodoStack{Stack: stack}

	s.AlarmTopicKey, s.AlarmTopic = newAlarmTopic(stack, cfg)

	s.Auth = userauth.NewUserAuth(stack, jsii.String("Auth"), &userauth.UserAuthProps{
		AllowedEmailDomains: cfg.AllowedEmailDomains,
		// Any user may be made a campaign sender, and a sender's address
		// must be verified: with campaigns on, everyone confirms by code.
		RequireEmailVerification: cfg.Campaigns,
		RemovalPolicy:            cfg.Removal(),
		DeletionProtection:       cfg.Protected(),
		WebAcl:                   cfg.Waf,
		Logs:                     cfg.Logs(),
	})
	s.Notifications = notifications.NewUserNotifications(stack, jsii.String("Notifications"), &notifications.UserNotificationsProps{
		UserPool:      s.Auth.UserPool,
		Shards:        cfg.NotificationShards,
		RemovalPolicy: cfg.Removal(),
		Logs:          cfg.Logs(),
		AlarmTopic:    s.AlarmTopic,
		// The site is built after the API (its config names the API), so
		// its URL, which the expiry emails link to, is read lazily.
		WebURL: *webhosting.Later(func() *string { return s.Web.Url }),
	})
	// The to-do app is an adopter of the core like any other: its own
	// table (with its indexes; at the logical id the core gave it when it
	// created it, so a deployed table stays), its own target
	// (task.NotifyTarget), which runs inside its firing function
	// (lambdas/todofire): one function per expiry, not two.
	s.Table = NewTaskTable(stack, "TaskTable", &TaskTableProps{
		RemovalPolicy: cfg.Removal(), DeletionProtection: cfg.Protected(), LegacyLogicalID: true,
	})
	s.Notifications.StoreSettingsIn(s.Table)
	s.Timer = scheduleonwrite.NewSchedulerTimer(nil)
	s.Scheduling = scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Tasks"), &scheduleonwrite.ScheduleOnWriteProps{
		ExistingTable:   s.Table,
		Schema:          tableschema.Todo(),
		FireEntry:       "lambdas/todofire",
		FireEnvironment: s.Notifications.NotifyTargetEnvironment(),
		Timer:           s.Timer,
		RemovalPolicy:   cfg.Removal(),
		Logs:            cfg.Logs(),
		AlarmTopic:      s.AlarmTopic,
		// The core's reconciler, reading the tasks through their pending
		// index, an armed index the task writer fills (and recording
		// confirmed schedules on them).
		Reconciler: &reconciler.ReconcilerProps{
			ArmedIndex: pendingArmedIndex(),
			Every:      awscdk.Duration_Minutes(jsii.Number(float64(cfg.ReconcileEveryMinutes))),
			// The failure queue goes with the stack in dev, like every queue.
			FailureQueueRemovalPolicy: cfg.Removal(),
		},
	})
	s.Notifications.GrantNotifyTarget(s.Scheduling.Fire.Function)
	s.Reconciler = s.Scheduling.Reconciler
	s.Api = taskapi.NewTaskApi(stack, jsii.String("Api"), &taskapi.TaskApiProps{
		Table:         s.Table,
		Schedules:     s.Timer,
		UserPool:      s.Auth.UserPool,
		Notifications: s.Notifications,
		// The hosted app's URL first (API Gateway's own error responses
		// carry the first origin), then the environment's extra origins.
		// The site is built after the API (its config names the API), so
		// its URL is read lazily.
		AllowedOrigins:         append([]string{*webhosting.Later(func() *string { return s.Web.Url })}, cfg.WebOrigins...),
		Logs:                   cfg.Logs(),
		MaxPendingTasksPerUser: float64(cfg.MaxPendingTasksPerUser),
		WebAcl:                 cfg.Waf,
		AlarmTopic:             s.AlarmTopic,
	})
	// The campaigns go before the site: its config names their API and
	// Event API, and their CORS origins name the site (lazily).
	if cfg.Campaigns {
		s.Campaigns = campaigns.NewCampaigns(stack, jsii.String("Campaigns"), &campaigns.CampaignsProps{
			UserPool: s.Auth.UserPool, SenderAddress: cfg.CampaignSender,
			// A sender's current address stays in the sign-up allow-list.
			SenderEmailDomains: cfg.AllowedEmailDomains,
			AllowedOrigins:     append([]string{*webhosting.Later(func() *string { return s.Web.Url })}, cfg.WebOrigins...),
			AlarmTopic:         s.AlarmTopic, RemovalPolicy: cfg.Removal(), DeletionProtection: jsii.Bool(cfg.Protected()), Logs: cfg.Logs(),
			WebAcl: cfg.Waf, // as on the task API and the user pool
			// The account's API Gateway logging role is one setting: the
			// task API sets it, and the campaign stage waits for it.
			CloudWatchRole: jsii.Bool(false),
		})
		s.Campaigns.RestApi.DeploymentStage().Node().AddDependency(s.Api.Api.Node().FindChild(jsii.String("Account")))
	}
	backend := map[string]string{
		"apiUrl": *s.Api.Url(), "region": *stack.Region(),
		"userPoolId": *s.Auth.UserPool.UserPoolId(), "userPoolClientId": *s.Auth.WebClient.UserPoolClientId(),
	}
	if s.Campaigns != nil {
		maps.Copy(backend, CampaignWebConfig(s.Campaigns))
	}
	webProps := &webhosting.WebHostingProps{
		BackendConfig:        backend,
		PlaceholderIfMissing: props.WebPlaceholderIfMissing,
		RemovalPolicy:        cfg.Removal(),
		Logs:                 cfg.Logs(),
	}
	if cfg.WebRepository != "" {
		webProps.Repository, webProps.Branch = cfg.WebRepository, cfg.WebBranch
		webProps.AccessTokenSecret = awssecretsmanager.Secret_FromSecretNameV2(stack, jsii.String("WebAccessToken"), jsii.String(cfg.WebAccessTokenSecretName))
	}
	s.Web = webhosting.NewWebHosting(stack, jsii.String("Web"), webProps)

	s.Cancellation = cancellation.NewCancellation(stack, jsii.String("Cancellation"), &cancellation.CancellationProps{
		Table:         s.Table,
		Timer:         s.Scheduling.Timer,
		AlarmTopic:    s.AlarmTopic,
		RemovalPolicy: cfg.Removal(),
		Logs:          cfg.Logs(),
	})
	s.Operations = operations.NewOperations(stack, jsii.String("Operations"), &operations.OperationsProps{
		AlarmTopic: s.AlarmTopic,
		// Their constructs alarm on the errors of the throttles-only ones.
		Watch: []operations.WatchedFunction{
			{Name: todometrics.FunctionAPI, Function: s.Api.Handler.Function},
			{Name: metrics.FunctionExpiry, Function: s.Scheduling.Fire.Function},
			{Name: "presignup", Function: s.Auth.PreSignUp.Function},
			{Name: "postconfirmation", Function: s.Auth.PostConfirmation.Function},
			{Name: todometrics.FunctionPostAuth, Function: s.Notifications.PostAuth.Function},
			{Name: metrics.FunctionStreamProcessor, Function: s.Cancellation.Processor.Function, ThrottlesOnly: true},
			{Name: metrics.FunctionCancelWorker, Function: s.Cancellation.Worker.Function, ThrottlesOnly: true},
			{Name: metrics.FunctionReconciler, Function: s.Reconciler.Function.Function, ThrottlesOnly: true},
		},
		ScheduleGroup: s.Timer.ScheduleGroup,
		// Every error metric of the functions (the core's and the to-do
		// app's) gets one alarm: these constructs alarm on theirs,
		// operations on the rest.
		ErrorMetrics: errorMetrics(),
		Sources:      []operations.ErrorAlarmSource{s.Api, s.Notifications, s.Scheduling, s.Cancellation, s.Reconciler},
		Lifecycle: operations.LifecycleMetrics{
			TasksCreated: s.Api.MetricTasksCreated(nil),
			TasksExpired: s.Scheduling.MetricFired(nil),
			Cancelled:    s.Cancellation.MetricCancelled(nil),
			Rescheduled:  s.Cancellation.MetricRescheduled(nil),
			DeliveryLag:  s.Scheduling.MetricLagSeconds(&awscloudwatch.MetricOptions{Statistic: jsii.String("p99")}),
		},
		DashboardQueues: []operations.NamedQueue{
			{Name: "cancellations", Queue: s.Cancellation.Queue},
			{Name: "cancellations DLQ", Queue: s.Cancellation.DeadLetterQueue},
			{Name: "expiry failures", Queue: s.Timer.FireFailureQueue},
			{Name: "reconciler failures", Queue: s.Reconciler.FailureQueue},
			{Name: "scheduler DLQ", Queue: s.Timer.DeadLetterQueue},
			{Name: "stream failures", Queue: s.Cancellation.StreamFailureQueue},
		},
		DashboardName: *stack.StackName() + "-lifecycle",
	})

	out := func(name, value, desc string) {
		awscdk.NewCfnOutput(stack, jsii.String(name), &awscdk.CfnOutputProps{Value: jsii.String(value), Description: jsii.String(desc)})
	}
	out("WebUrl", *s.Web.Url, "URL of the web app (Amplify Hosting)")
	out("ApiUrl", *s.Api.Url(), "Base URL of the task REST API")
	out("UserPoolId", *s.Auth.UserPool.UserPoolId(), "Cognito user pool id")
	out("UserPoolClientId", *s.Auth.WebClient.UserPoolClientId(), "Cognito app client id of the web app")
	out("Region", *stack.Region(), "Region of the stack")
	out("NotificationTopicArn", *s.Notifications.Topics[0].TopicArn(), "Notification topic of shard 0")
	out("NotificationTopicShards", strconv.Itoa(len(s.Notifications.Topics)), "Number of notification topics")
	out("TableName", *s.Table.TableName(), "Task table")
	out("ScheduleGroup", *s.Timer.ScheduleGroup.ScheduleGroupName(), "Schedule group holding every task schedule")
	out("AlarmTopicArn", *s.AlarmTopic.TopicArn(), "Topic that receives every alarm")
	if s.Campaigns != nil {
		web := CampaignWebConfig(s.Campaigns)
		for _, k := range slices.Sorted(maps.Keys(web)) { // a stable template
			out(campaignOutputs[k], web[k], campaignOutputDescriptions[k])
		}
	}
	return s
}

// The web app's config keys of the campaigns (web/src/config.ts reads
// them; absent, the app shows no campaign page in cognito mode), and the
// stack output of each.
const (
	WebConfigCampaignsApiUrl        = "campaignsApiUrl"
	WebConfigCampaignEventsHttp     = "campaignEventsHttp"
	WebConfigCampaignEventsRealtime = "campaignEventsRealtime"
)

var (
	campaignOutputs = map[string]string{WebConfigCampaignsApiUrl: "CampaignApiUrl",
		WebConfigCampaignEventsHttp: "CampaignEventsHttp", WebConfigCampaignEventsRealtime: "CampaignEventsRealtime"}
	campaignOutputDescriptions = map[string]string{WebConfigCampaignsApiUrl: "Base URL of the campaign REST API",
		WebConfigCampaignEventsHttp:     "HTTP DNS name of the campaign progress AppSync Events API",
		WebConfigCampaignEventsRealtime: "Realtime (WebSocket) DNS name of the campaign progress AppSync Events API"}
)

// CampaignWebConfig is what the web app's /config.json says of the
// campaigns: the REST API's URL, and the Event API's DNS names when live
// progress is on.
func CampaignWebConfig(c *campaigns.Campaigns) map[string]string {
	cfg := map[string]string{WebConfigCampaignsApiUrl: *c.RestApi.Url()}
	if c.EventApi != nil {
		cfg[WebConfigCampaignEventsHttp], cfg[WebConfigCampaignEventsRealtime] = *c.HttpDns, *c.RealtimeDns
	}
	return cfg
}

// AlarmTopicName is the name of the alarm topic of stack stackName.
func AlarmTopicName(stackName string) string { return stackName + "-alarms" }

// NoAlarmRecipientWarning is the id of the synth warning an environment
// other than dev gets when its alarmEmail is empty.
const NoAlarmRecipientWarning = "todo:no-alarm-recipient"

// newAlarmTopic is the topic every alarm notifies, encrypted with a
// customer-managed key that CloudWatch may use. CloudWatch cannot publish
// to a topic encrypted with the AWS-managed key alias/aws/sns (its key
// policy cannot be changed): the key policy must let cloudwatch.amazonaws.com
// call kms:Decrypt and kms:GenerateDataKey*, and the topic policy must let it
// publish.
// https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
// https://repost.aws/knowledge-center/cloudwatch-configure-alarm-sns
// https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger
//
// The key policy lets CloudWatch use the key for this topic only, by the
// encryption context aws:sns:topicArn; the topic therefore has a fixed
// name (docs/decisions/alarm-topic-key.md).
func newAlarmTopic(stack awscdk.Stack, cfg Config) (awskms.Key, awssns.Topic) {
	cloudwatch := awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)
	thisAccount := map[string]any{"aws:SourceAccount": stack.Account()}
	name := AlarmTopicName(*stack.StackName())
	topicArn := stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("sns"), Resource: jsii.String(name)})
	key := awskms.NewKey(stack, jsii.String("AlarmTopicKey"), &awskms.KeyProps{
		Description:       jsii.String("Encrypts the alarm topic of " + *stack.StackName() + "; CloudWatch alarms of this account may use it to publish"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     cfg.Removal(),
	})
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarmsPublishToTheAlarmTopic"),
		Principals: &[]awsiam.IPrincipal{cloudwatch},
		Actions:    jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"),
		Resources:  jsii.Strings("*"), // in a key policy, "*" is this key
		Conditions: &map[string]any{"StringEquals": map[string]any{
			"aws:SourceAccount":                      stack.Account(),
			"kms:EncryptionContext:aws:sns:topicArn": topicArn,
		}},
	}), nil)
	topic := awssns.NewTopic(stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		TopicName:   jsii.String(name),
		DisplayName: jsii.String("Unschedule alarms (" + cfg.Name + ")"),
		MasterKey:   key,
		EnforceSSL:  jsii.Bool(true),
	})
	// Retained with the table in prod (RETAIN), like its key.
	topic.ApplyRemovalPolicy(cfg.Removal())
	topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarmsPublish"),
		Principals: &[]awsiam.IPrincipal{cloudwatch},
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  &[]*string{topic.TopicArn()},
		Conditions: &map[string]any{
			"StringEquals": thisAccount,
			"ArnLike": map[string]any{"aws:SourceArn": stack.FormatArn(&awscdk.ArnComponents{
				Service: jsii.String("cloudwatch"), Resource: jsii.String("alarm"), ResourceName: jsii.String("*"),
				ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME,
			})},
		},
	}))
	if cfg.AlarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(cfg.AlarmEmail), nil))
	} else if cfg.Name != "dev" {
		awscdk.Annotations_Of(topic).AddWarningV2(jsii.String(NoAlarmRecipientWarning), jsii.String(fmt.Sprintf(
			"environment %q has no alarm recipient: its alarms notify the alarm topic, which reaches no one. "+
				"Set \"alarmEmail\" under context.environments.%s in cdk.json, or subscribe to the AlarmTopicArn output.", cfg.Name, cfg.Name)), nil)
	}
	return key, topic
}

// errorMetrics are the error metrics of the app's functions: the core's
// (metrics.ErrorMetrics) and the to-do app's own (todometrics.ErrorMetrics).
func errorMetrics() map[string][]string {
	all := maps.Clone(metrics.ErrorMetrics)
	maps.Copy(all, todometrics.ErrorMetrics)
	return all
}
