package campaigns

import (
	_ "embed"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsappsync"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
)

// subscribeHandler is the namespace's onSubscribe (APPSYNC_JS): a user
// may subscribe only to /campaigns/<their sub>/….
//
//go:embed subscribe.js
var subscribeHandler string

// functionMaker builds one of the construct's functions (NewCampaigns'
// fn: the table's name in its environment).
type functionMaker func(fid, entry, description string, timeoutSec float64, env ...map[string]string) *gofn.Function

// EventApiLogLevel is the Event API's CloudWatch log level: errors only
// (ALL, INFO and DEBUG log every publish and subscribe).
const EventApiLogLevel = "ERROR"

// eventApiLogs sends the Event API's errors to CloudWatch Logs, in the log
// group AppSync writes to, /aws/appsync/apis/<api id>, made here so it is
// kept as p.Logs says (retention and removal, like every log group of the
// construct). The L2's LogConfig is not used: it adds a LogRetention
// custom resource (a Node.js function) and a role with the managed
// AWSAppSyncPushToCloudWatchLogs policy on every log group; this role may
// write to this log group only.
// https://docs.aws.amazon.com/appsync/latest/eventapi/monitoring.html
func (x *Campaigns) eventApiLogs(p CampaignsProps) {
	logs := p.Logs.WithDefaults()
	stack := awscdk.Stack_Of(x.EventApi)
	x.EventApiLogs = awslogs.NewLogGroup(x.EventApi, jsii.String("Logs"), &awslogs.LogGroupProps{
		LogGroupName:  awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("/aws/appsync/apis/"), x.EventApi.ApiId()}),
		Retention:     logs.Retention,
		RemovalPolicy: logs.RemovalPolicy,
	})
	role := awsiam.NewRole(x.EventApi, jsii.String("LogsRole"), &awsiam.RoleProps{
		Description: jsii.String("AppSync writes the campaign Event API's error logs"),
		// Not the API's own ARN: the API names this role, so the role
		// cannot name the API (a dependency cycle); this account's APIs.
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("appsync.amazonaws.com"), &awsiam.ServicePrincipalOpts{
			Conditions: &map[string]any{
				"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()},
				"ArnLike": map[string]any{"aws:SourceArn": stack.FormatArn(&awscdk.ArnComponents{
					Service: jsii.String("appsync"), Resource: jsii.String("apis"), ResourceName: jsii.String("*")})},
			},
		}),
	})
	x.EventApiLogs.GrantWrite(role)
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("logs:CreateLogGroup"), Resources: &[]*string{x.EventApiLogs.LogGroupArn()},
	}))
	api := x.EventApi.Node().DefaultChild().(awsappsync.CfnApi)
	api.AddPropertyOverride(jsii.String("EventConfig.LogConfig"), map[string]any{
		"CloudWatchLogsRoleArn": role.RoleArn(), "LogLevel": EventApiLogLevel,
	})
}

// ProgressFilters are the stream records the progress function gets:
// changes (MODIFY) of a campaign's items that are send tasks (sk T#…) or
// the campaign itself (sk META). Inserts are left out (a campaign's
// creation is not progress: the page reads it whole, and its tasks would
// be one batch per 100), and so are checkpoints and the SES send records.
// https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html
func ProgressFilters() *[]*map[string]any {
	return &[]*map[string]any{awslambda.FilterCriteria_Filter(&map[string]any{
		"eventName": []any{"MODIFY"},
		"dynamodb": map[string]any{"Keys": map[string]any{
			tk.PartitionKey: map[string]any{"S": []any{map[string]any{"prefix": tk.CampaignPrefix}}},
			tk.SortKey:      map[string]any{"S": []any{map[string]any{"prefix": tk.TaskPrefix}, tk.MetaSK}},
		}},
	})}
}

// liveProgress builds the Event API, its channel namespace, the progress
// function on the table's stream, its failure queue and alarms.
func (x *Campaigns) liveProgress(p CampaignsProps, fn functionMaker) {
	c := x.Construct
	userPool := []awsappsync.AppSyncAuthorizationType{awsappsync.AppSyncAuthorizationType_USER_POOL}
	iam := []awsappsync.AppSyncAuthorizationType{awsappsync.AppSyncAuthorizationType_IAM}
	// Users connect (WebSocket) and subscribe with their Cognito token;
	// publishing is IAM only (SigV4): no token of a user can publish.
	// https://docs.aws.amazon.com/appsync/latest/eventapi/configure-event-api-auth.html
	x.EventApi = awsappsync.NewEventApi(c, jsii.String("EventApi"), &awsappsync.EventApiProps{
		ApiName: awscdk.Names_UniqueResourceName(c, &awscdk.UniqueResourceNameOptions{MaxLength: jsii.Number(50), Separator: jsii.String("-")}),
		AuthorizationConfig: &awsappsync.EventApiAuthConfig{
			AuthProviders: &[]*awsappsync.AppSyncAuthProvider{
				{AuthorizationType: awsappsync.AppSyncAuthorizationType_USER_POOL, CognitoConfig: &awsappsync.AppSyncCognitoConfig{UserPool: p.UserPool}},
				{AuthorizationType: awsappsync.AppSyncAuthorizationType_IAM},
			},
			ConnectionAuthModeTypes:       &userPool,
			DefaultPublishAuthModeTypes:   &iam,
			DefaultSubscribeAuthModeTypes: &userPool,
		},
	})
	x.ProgressChannels = x.EventApi.AddChannelNamespace(jsii.String("Progress"), &awsappsync.ChannelNamespaceOptions{
		ChannelNamespaceName: jsii.String(ProgressNamespace),
		AuthorizationConfig:  &awsappsync.NamespaceAuthConfig{PublishAuthModeTypes: &iam, SubscribeAuthModeTypes: &userPool},
		Code:                 awsappsync.Code_FromInline(jsii.String(subscribeHandler)),
	})
	x.HttpDns, x.RealtimeDns = x.EventApi.HttpDns(), x.EventApi.RealtimeDns()
	x.eventApiLogs(p)

	x.Progress = fn("Progress", "lambdas/campaignprogress", "Publishes each campaign's live progress (AppSync Events) from the table's stream",
		ProgressTimeoutSec, map[string]string{campaignenv.CampaignEventsHTTP: *x.HttpDns})
	// Read the campaign and count its tasks; nothing else of the table.
	grants.Table(x.Table, x.Progress.Function, "dynamodb:GetItem", "dynamodb:Query")
	// appsync:EventPublish on this namespace only: the resource type
	// channelNamespace, arn:…:appsync:<region>:<account>:apis/<api id>/channelNamespace/<name>
	// (Service Authorization Reference, AWS AppSync:
	// https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsappsync.html).
	x.ProgressChannels.GrantPublish(x.Progress.Function)

	var failures awssqs.Queue
	x.ProgressFailureQueue, failures = resource.Queue(c, *x.Node().Id(), "ProgressFailureQueue", nil, "", nil, "", resource.DeadLetterQueueProps(p.RemovalPolicy))
	nag.Suppress(failures, nag.Rule{ID: "AwsSolutions-SQS3", Reason: "This queue is the progress stream mapping's on-failure destination, alarmed when not empty"})
	x.Progress.Function.AddEventSource(awslambdaeventsources.NewDynamoEventSource(x.Table, &awslambdaeventsources.DynamoEventSourceProps{
		// LATEST: a mapping created later has no page to update with older
		// changes.
		StartingPosition:        awslambda.StartingPosition_LATEST,
		BatchSize:               jsii.Number(ProgressBatchSize),
		MaxBatchingWindow:       awscdk.Duration_Seconds(jsii.Number(ProgressBatchWindowSec)),
		ReportBatchItemFailures: jsii.Bool(true),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(ProgressRetryAttempts),
		MaxRecordAge:            awscdk.Duration_Seconds(jsii.Number(ProgressMaxRecordAgeSec)),
		OnFailure:               awslambdaeventsources.NewSqsDlq(x.ProgressFailureQueue),
		Filters:                 ProgressFilters(),
	}))
	nag.Suppress(nag.RolePolicy(x.Progress.Function), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{"Resource::*"},
		Reason: "dynamodb:ListStreams has no resource-level permissions; the DynamoDB event source adds it. Stream reads are on the campaign table's stream only."})

	x.ProgressFailureAlarm = alarms.QueueNotEmpty(c, "ProgressFailureAlarm", x.ProgressFailureQueue,
		"The progress function gave up on campaign table stream records (retries or record age exhausted): those changes were not pushed; "+
			"pages poll meanwhile. The message names the shard and sequence numbers; check the function's logs.", p.AlarmTopic)
	x.ProgressIteratorAgeAlarm = alarms.New(c, "ProgressIteratorAgeAlarm",
		fmt.Sprintf("The progress function lags the campaign table's stream by more than %d s: live pages are late. Check its errors and throttles.", ProgressIteratorAgeAlarmSec),
		x.Progress.Function.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(5))}),
		ProgressIteratorAgeAlarmSec*1000, awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, p.AlarmTopic)
}
