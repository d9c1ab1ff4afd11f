// Package notifications is the per-user fan-out: N sharded SNS topics,
// each user's email subscribed (with a filter policy on their id) to the
// one topic their id hashes to, by a Cognito PostAuthentication trigger
// that follows the user's notification setting. The setting, and the one
// subscription that is the user's, are an item of the task table
// (StoreSettingsIn); the API serves the setting (GrantSubscribe).
//
// One topic allows 200 filter policies by default, so N topics serve
// N×200 users; see docs/notifications.md for raising the quotas. Topic
// names are deterministic (<prefix>-<shard>), so functions find every
// topic from a prefix and a count, however many shards there are, and
// topics are spread over nested stacks so that a large shard count stays
// under CloudFormation's 500-resources-per-stack limit.
package notifications

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/domain/notify"
	"github.com/unschedule/unschedule/internal/metrics"
)

// TopicsPerNestedStack bounds each nested stack: a topic and its policy
// are two resources, so 200 topics stay well under 500.
const TopicsPerNestedStack = 200

// MaxShards is the most topics the construct makes (1,000,000 users at
// the default 200 filter policies per topic).
const MaxShards = 5000

// UserNotificationsProps configures the fan-out.
type UserNotificationsProps struct {
	// UserPool gets the PostAuthentication trigger. Required.
	UserPool awscognito.UserPool
	// TopicNamePrefix names the topics <prefix>-<shard>. Letters, digits,
	// '-' and '_' only, at most 200 characters.
	// Default: the stack name followed by "-notify".
	TopicNamePrefix string
	// Shards is the number of topics. Capacity is Shards × the filter
	// policies allowed per topic (200 by default). Changing it re-routes
	// users: subscriptions follow on each user's next sign-in.
	// Default: 1.
	Shards int
	// RemovalPolicy of the topics: RETAIN keeps them, and their
	// subscriptions, when the stack is deleted.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// Logs of the trigger function.
	// Default: one month, retained.
	Logs gofn.LogOptions
	// AlarmTopic receives this construct's alarms.
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
}

// UserNotifications is the topics and the trigger.
type UserNotifications struct {
	constructs.Construct
	// Topics in shard order.
	Topics []awssns.Topic
	// PostAuth subscribes users on sign-in, as their setting says.
	PostAuth *gofn.Function
	// SubscribeErrorsAlarm fires when PostAuth fails to subscribe someone.
	SubscribeErrorsAlarm awscloudwatch.Alarm
	// FilterPolicyLimitAlarm fires when a topic is out of filter policies.
	FilterPolicyLimitAlarm awscloudwatch.Alarm

	prefix        string
	settingsTable awsdynamodb.ITable
}

// NewUserNotifications builds the topics, trigger, grants and alarms.
func NewUserNotifications(scope constructs.Construct, id *string, props *UserNotificationsProps) *UserNotifications {
	if props == nil || props.UserPool == nil {
		panic(fmt.Sprintf("%s: UserPool is required: pass the user pool whose sign-ins subscribe users", *id))
	}
	p := *props
	if p.Shards == 0 {
		p.Shards = 1
	}
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	if p.Shards < 1 || p.Shards > MaxShards {
		panic(fmt.Sprintf("%s: Shards must be between 1 and %d inclusive (given %d)", *id, MaxShards, p.Shards))
	}
	c := constructs.NewConstruct(scope, id)
	if p.TopicNamePrefix == "" {
		p.TopicNamePrefix = *awscdk.Stack_Of(c).StackName() + "-notify"
	}
	if !validPrefix(p.TopicNamePrefix) {
		panic(fmt.Sprintf("%s: TopicNamePrefix %q may hold only letters, digits, '-' and '_', at most 200 characters", *id, p.TopicNamePrefix))
	}
	n := &UserNotifications{Construct: c, prefix: p.TopicNamePrefix}

	var holder constructs.Construct = c
	for i := 0; i < p.Shards; i++ {
		if i%TopicsPerNestedStack == 0 {
			holder = awscdk.NewNestedStack(c, jsii.String(fmt.Sprintf("Topics%d", i/TopicsPerNestedStack)), nil)
		}
		n.Topics = append(n.Topics, awssns.NewTopic(holder, jsii.String(fmt.Sprintf("Shard%d", i)), &awssns.TopicProps{
			TopicName:   jsii.String(TopicName(p.TopicNamePrefix, i)),
			DisplayName: jsii.String("Task reminders"),
			MasterKey:   awskms.Alias_FromAliasName(holder, jsii.String(fmt.Sprintf("SnsKey%d", i)), jsii.String("alias/aws/sns")),
			EnforceSSL:  jsii.Bool(true),
		}))
		n.Topics[i].ApplyRemovalPolicy(p.RemovalPolicy)
	}

	n.PostAuth = gofn.NewFunction(c, jsii.String("PostAuth"), &gofn.FunctionProps{
		Entry:       "lambdas/postauth",
		Description: "Applies a signing-in user's notification setting: their one subscription, on their shard's topic, filtered to their id",
		Logs:        p.Logs,
		// Cognito fails a sign-in whose trigger runs over 5 s; the handler
		// stops its own SNS work at 3 s.
		TimeoutSec:  5,
		Environment: n.Environment(),
	})
	n.GrantSubscribe(n.PostAuth.Function)
	c.Node().AddValidation(&settingsValidation{n})
	p.UserPool.AddTrigger(awscognito.UserPoolOperation_POST_AUTHENTICATION(), n.PostAuth.Function, awscognito.LambdaVersion_V1_0)

	n.SubscribeErrorsAlarm = metricAlarm(c, "SubscribeErrorsAlarm", notify.MetricSubscribeErrors,
		"PostAuthentication could not apply a user's notification setting (sign-in still succeeded): SNS or DynamoDB failed, the topic is full, or the address is another user's on the topic. Check the postauth logs.", p.AlarmTopic)
	n.FilterPolicyLimitAlarm = metricAlarm(c, "FilterPolicyLimitAlarm", notify.MetricFilterPolicyLimitExceeded,
		"A notification topic is out of filter policies: new users get no expiry emails. Raise the quota or the shard count (docs/notifications.md).", p.AlarmTopic)
	return n
}

// TopicName is the name of shard i's topic.
func TopicName(prefix string, i int) string { return fmt.Sprintf("%s-%d", prefix, i) }

// Environment is what a function that routes to the topics reads.
func (n *UserNotifications) Environment() map[string]string {
	return map[string]string{
		"TOPIC_ARN_PREFIX": *n.topicArn(n.prefix + "-"),
		"TOPIC_SHARDS":     fmt.Sprint(len(n.Topics)),
	}
}

func (n *UserNotifications) topicArn(name string) *string {
	return awscdk.Stack_Of(n.Construct).FormatArn(&awscdk.ArnComponents{Service: jsii.String("sns"), Resource: jsii.String(name)})
}

// allTopics matches every shard topic (and nothing else: the prefix is
// followed by '-' and the shard number).
func (n *UserNotifications) allTopics() *string { return n.topicArn(n.prefix + "-*") }

// GrantPublish lets grantee publish to every shard topic.
func (n *UserNotifications) GrantPublish(grantee awsiam.IGrantable) awsiam.Grant {
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("sns:Publish"), ResourceArns: &[]*string{n.allTopics()},
	})
}

// GrantSubscribe lets grantee manage users' subscriptions by their
// recorded ARN: subscribe on the shard topics, and read a subscription's
// state and delete it. It grants nothing that lists subscriptions or
// changes a filter policy. sns:Unsubscribe and
// sns:GetSubscriptionAttributes have no resource-level permissions (the
// Service Authorization Reference lists no resource type for them:
// https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsns.html),
// so those two are on "*": they touch only subscriptions, never a topic or
// a message. The grantee's function also needs Environment().
func (n *UserNotifications) GrantSubscribe(grantee awsiam.IGrantable) awsiam.Grant {
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("sns:GetSubscriptionAttributes", "sns:Unsubscribe"),
		ResourceArns: jsii.Strings("*"),
	})
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("sns:Subscribe"),
		ResourceArns: &[]*string{n.allTopics()},
	})
	if fn, ok := grantee.(awslambda.IFunction); ok && fn.Role() != nil {
		nag.Suppress(nag.RolePolicy(fn),
			nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{"Resource::*"},
				Reason: "sns:GetSubscriptionAttributes and sns:Unsubscribe have no resource-level permissions; they touch only the subscription recorded for a user"},
			nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{nag.Regex(`/^Resource::arn:<AWS::Partition>:sns:<AWS::Region>:<AWS::AccountId>:.+-\*$/g`)},
				Reason: "Subscribe on the shard topics: deterministic names <prefix>-<n>, possibly thousands"})
	}
	return g
}

// StoreSettingsIn keeps each user's notification setting, and the one
// subscription recorded as theirs, in table: an item under the user's
// partition key and the reserved sort key "#settings", which the task
// listing, the stream filter and the stream processor all skip. The
// trigger reads it (TABLE_NAME) and may get and put items of the table.
// Call it once, with the schedule-on-write table; synth fails without it.
func (n *UserNotifications) StoreSettingsIn(table awsdynamodb.ITable) {
	if n.settingsTable != nil {
		panic(fmt.Sprintf("%s: StoreSettingsIn was called twice: the settings live in one table", *n.Node().Id()))
	}
	n.settingsTable = table
	n.PostAuth.Function.AddEnvironment(jsii.String("TABLE_NAME"), table.TableName(), nil)
	scheduleonwrite.GrantTable(table, n.PostAuth.Function, "dynamodb:GetItem", "dynamodb:PutItem")
}

// settingsValidation fails synth when StoreSettingsIn was never called:
// the trigger would fail at its first cold start.
type settingsValidation struct{ n *UserNotifications }

func (v *settingsValidation) Validate() *[]*string {
	if v.n.settingsTable != nil {
		return &[]*string{}
	}
	return &[]*string{jsii.String("the notification settings have no table: call StoreSettingsIn(table) with the schedule-on-write table")}
}

func metricAlarm(scope constructs.Construct, id, metric, description string, topic awssns.ITopic) awscloudwatch.Alarm {
	return alarms.AtLeast(scope, id, description, alarms.CustomMetric(scope, metrics.FunctionPostAuth, metric, "Sum", nil), 1, topic)
}

func validPrefix(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	if *awscdk.Token_IsUnresolved(jsii.String(s)) {
		return true
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
