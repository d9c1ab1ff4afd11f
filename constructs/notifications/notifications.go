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
	"maps"
	"strings"

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
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
	"github.com/unschedule/unschedule/internal/todo/todometrics"
)

// TopicsPerNestedStack bounds each nested stack: a topic and its policy
// are two resources, so 200 topics stay well under 500.
const TopicsPerNestedStack = 200

// MaxShards is the most topics the construct makes (1,000,000 users at
// the default 200 filter policies per topic).
const MaxShards = 5000

// UserNotificationsProps configures the fan-out.
type UserNotificationsProps struct {
	// UserPool is the user pool whose sign-ins subscribe users. When it is
	// a user pool this app creates (awscognito.NewUserPool) and
	// AttachPostAuthTrigger is not false, the construct makes
	// PostAuthFunction its PostAuthentication trigger. Otherwise (an
	// imported pool, such as awscognito.UserPool_FromUserPoolId, or a pool
	// that already has a PostAuthentication trigger) it only lets Cognito
	// invoke the function for this pool: attach PostAuthFunction yourself
	// (see PostAuthFunction).
	// Default: no pool: attach PostAuthFunction yourself, and give Cognito
	// the invoke permission (AllowInvokeFromUserPool).
	UserPool awscognito.IUserPool
	// AttachPostAuthTrigger adds PostAuthFunction as UserPool's
	// PostAuthentication trigger. A pool has one function per trigger:
	// set false when yours already has one (then call PostAuthFunction
	// from it, or combine them). True with an imported pool fails: its
	// configuration is not this stack's.
	// Default: true for a pool this app creates, false for an imported one.
	AttachPostAuthTrigger *bool
	// TopicNamePrefix names the topics <prefix>-<shard>. Letters, digits,
	// '-' and '_' only, at most 200 characters. Required with
	// ExistingTopics (their names must follow it).
	// Default: the stack name followed by "-notify".
	TopicNamePrefix string
	// Shards is the number of topics. Capacity is Shards × the filter
	// policies allowed per topic (200 by default). Changing it re-routes
	// users: subscriptions follow on each user's next sign-in.
	// Default: 1, or the number of ExistingTopics.
	Shards int
	// ExistingTopics are topics to use instead of creating them, in shard
	// order, named <TopicNamePrefix>-<shard> in this stack's account and
	// region (the functions find them by name). Encrypted with TopicKey
	// when that is set.
	// Default: new topics (TopicProps).
	ExistingTopics []awssns.ITopic
	// TopicProps override the defaults of the topics this construct
	// creates (display name "Task reminders", TLS only, TopicKey). The
	// name comes from TopicNamePrefix, the key from TopicKey, and TLS
	// stays enforced: setting TopicName, MasterKey or EnforceSSL fails.
	// Not allowed with ExistingTopics.
	// Default: the defaults above.
	TopicProps *awssns.TopicProps
	// TopicKey is the customer-managed KMS key that encrypts the topics
	// (new ones, or the key ExistingTopics use). GrantPublish then grants
	// its use too.
	// Default: the AWS managed key alias/aws/sns.
	TopicKey awskms.IKey
	// RemovalPolicy of the topics this construct creates: RETAIN keeps
	// them, and their subscriptions, when the stack is deleted.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// Logs of the trigger function.
	// Default: one month, retained.
	Logs gofn.LogOptions
	// AlarmTopic receives this construct's alarms.
	// Default: alarms with no action.
	AlarmTopic awssns.ITopic
	// WebURL is the web app's address, used for links in the
	// notifications the to-do app's target sends (https://, or
	// http://localhost).
	// Default: no link.
	WebURL string
}

// UserNotifications is the topics and the trigger.
type UserNotifications struct {
	constructs.Construct
	// Topics in shard order (created, or ExistingTopics).
	Topics []awssns.ITopic
	// PostAuth subscribes users on sign-in, as their setting says (its
	// function is PostAuthFunction).
	PostAuth *gofn.Function
	// PostAuthFunction is the PostAuthentication trigger. The construct
	// attaches it only to a UserPool this app creates. For any other pool,
	// attach it yourself, with the trigger event version V1_0:
	//   - a pool defined with the CDK elsewhere:
	//     pool.AddTrigger(awscognito.UserPoolOperation_POST_AUTHENTICATION(), n.PostAuthFunction, awscognito.LambdaVersion_V1_0)
	//     (which also adds Cognito's invoke permission);
	//   - a pool outside CDK: the Cognito console (User pool > Extensions >
	//     Add Lambda trigger > Authentication > Post authentication), or
	//     LambdaConfig.PostAuthentication = this function's ARN in
	//     UpdateUserPool / AWS::Cognito::UserPool. Pass that pool as
	//     UserPool (or call AllowInvokeFromUserPool) so Cognito may invoke
	//     the function: outside the console nothing adds that permission.
	PostAuthFunction awslambda.IFunction
	// SubscribeErrorsAlarm fires when PostAuth fails to subscribe someone.
	SubscribeErrorsAlarm awscloudwatch.Alarm
	// FilterPolicyLimitAlarm fires when a topic is out of filter policies.
	FilterPolicyLimitAlarm awscloudwatch.Alarm
	// notify is NotifyFunction's function, nil until it is asked for.
	notify        *gofn.Function
	prefix        string
	webURL        string
	logs          gofn.LogOptions
	key           awskms.IKey
	settingsTable awsdynamodb.ITable
}

// NewUserNotifications builds the topics, trigger, grants and alarms.
func NewUserNotifications(scope constructs.Construct, id *string, props *UserNotificationsProps) *UserNotifications {
	var p UserNotificationsProps
	if props != nil {
		p = *props
	}
	propcheck.Exclusive(*id, "ExistingTopics", len(p.ExistingTopics) > 0, "TopicProps", p.TopicProps != nil)
	if len(p.ExistingTopics) > 0 {
		if p.TopicNamePrefix == "" {
			panic(fmt.Sprintf("%s: TopicNamePrefix is required with ExistingTopics: set the prefix their names share (<prefix>-0, <prefix>-1, ...)", *id))
		}
		if p.Shards != 0 && p.Shards != len(p.ExistingTopics) {
			panic(fmt.Sprintf("%s: Shards (%d) differs from the number of ExistingTopics (%d): leave Shards unset or pass one topic per shard", *id, p.Shards, len(p.ExistingTopics)))
		}
		p.Shards = len(p.ExistingTopics)
	}
	if t := p.TopicProps; t != nil && (t.TopicName != nil || t.MasterKey != nil || t.EnforceSSL != nil) {
		panic(fmt.Sprintf("%s: TopicProps may not set TopicName, MasterKey or EnforceSSL: names come from TopicNamePrefix, the key from TopicKey, and TLS stays enforced", *id))
	}
	p.Shards = propcheck.Or(p.Shards, 1)
	p.RemovalPolicy = propcheck.Or(p.RemovalPolicy, awscdk.RemovalPolicy_RETAIN)
	if p.Shards < 1 || p.Shards > MaxShards {
		panic(fmt.Sprintf("%s: Shards must be between 1 and %d inclusive (given %d): more shards serve more users (200 each by default)", *id, MaxShards, p.Shards))
	}
	owned := p.UserPool != nil && *awscdk.Resource_IsOwnedResource(p.UserPool)
	attach := owned
	if p.AttachPostAuthTrigger != nil {
		attach = *p.AttachPostAuthTrigger
	}
	if attach && !owned {
		panic(fmt.Sprintf("%s: AttachPostAuthTrigger is true but UserPool is not a user pool this app creates: leave it unset and attach PostAuthFunction to the pool yourself (see its doc)", *id))
	}
	c := constructs.NewConstruct(scope, id)
	p.TopicNamePrefix = propcheck.Or(p.TopicNamePrefix, *awscdk.Stack_Of(c).StackName()+"-notify")
	if !validPrefix(p.TopicNamePrefix) {
		panic(fmt.Sprintf("%s: TopicNamePrefix %q may hold only letters, digits, '-' and '_', at most 200 characters: rename it", *id, p.TopicNamePrefix))
	}
	if p.WebURL != "" && !*awscdk.Token_IsUnresolved(jsii.String(p.WebURL)) && !strings.HasPrefix(p.WebURL, "https://") && !strings.HasPrefix(p.WebURL, "http://localhost") {
		panic(fmt.Sprintf("%s: WebURL must start with https:// (or http://localhost) (given %q)", *id, p.WebURL))
	}
	n := &UserNotifications{Construct: c, prefix: p.TopicNamePrefix, key: p.TopicKey, webURL: p.WebURL, logs: p.Logs}
	for i, t := range p.ExistingTopics {
		if name := t.TopicName(); name != nil && !*awscdk.Token_IsUnresolved(name) && *name != TopicName(p.TopicNamePrefix, i) {
			panic(fmt.Sprintf("%s: ExistingTopics[%d] is named %q: the functions look for %q; name shard i's topic <TopicNamePrefix>-<i>", *id, i, *name, TopicName(p.TopicNamePrefix, i)))
		}
		n.Topics = append(n.Topics, t)
	}

	var holder constructs.Construct = c
	for i := len(n.Topics); i < p.Shards; i++ {
		if i%TopicsPerNestedStack == 0 {
			holder = awscdk.NewNestedStack(c, jsii.String(fmt.Sprintf("Topics%d", i/TopicsPerNestedStack)), nil)
		}
		key := p.TopicKey
		if key == nil {
			key = awskms.Alias_FromAliasName(holder, jsii.String(fmt.Sprintf("SnsKey%d", i)), jsii.String("alias/aws/sns"))
		}
		defaults := awssns.TopicProps{DisplayName: jsii.String("Task reminders")}
		tp := propcheck.Merge(defaults, p.TopicProps)
		tp.TopicName, tp.MasterKey, tp.EnforceSSL = jsii.String(TopicName(p.TopicNamePrefix, i)), key, jsii.Bool(true)
		topic := awssns.NewTopic(holder, jsii.String(fmt.Sprintf("Shard%d", i)), &tp)
		topic.ApplyRemovalPolicy(p.RemovalPolicy)
		n.Topics = append(n.Topics, topic)
	}

	n.PostAuth = gofn.NewFunction(c, jsii.String("PostAuth"), &gofn.FunctionProps{
		Entry:       "lambdas/postauth",
		Description: "Applies a signing-in user's notification setting: their one subscription, on their shard's topic, filtered to their id",
		Logs:        p.Logs,
		// Cognito fails a sign-in whose trigger runs over 5 s; the handler
		// stops its own SNS work at 3 s.
		Timeout:     awscdk.Duration_Seconds(jsii.Number(5)),
		Environment: n.Environment(),
		MemoryMiB:   256, // a user waits on its cold start: docs/PERFORMANCE.md, Memory sizes
	})
	n.PostAuthFunction = n.PostAuth.Function
	n.GrantSubscribe(n.PostAuth.Function)
	c.Node().AddValidation(&settingsValidation{n})
	switch {
	case attach:
		// AddTrigger also adds the permission for Cognito to invoke it.
		p.UserPool.(awscognito.UserPool).AddTrigger(awscognito.UserPoolOperation_POST_AUTHENTICATION(), n.PostAuth.Function, awscognito.LambdaVersion_V1_0)
	case p.UserPool != nil:
		n.AllowInvokeFromUserPool(p.UserPool)
	}

	n.SubscribeErrorsAlarm = alarms.AtLeast(c, "SubscribeErrorsAlarm",
		"PostAuthentication could not apply a user's notification setting (sign-in still succeeded): SNS or DynamoDB failed, the topic is full, or the address is another user's on the topic. Check the postauth logs.",
		n.MetricSubscribeErrors(nil), 1, p.AlarmTopic)
	n.FilterPolicyLimitAlarm = alarms.AtLeast(c, "FilterPolicyLimitAlarm",
		"A notification topic is out of filter policies: new users get no expiry emails. Raise the quota or the shard count (docs/notifications.md).",
		n.MetricFilterPolicyLimitExceeded(nil), 1, p.AlarmTopic)
	return n
}

// AllowInvokeFromUserPool lets Amazon Cognito invoke PostAuthFunction
// for pool only, which Cognito needs to run the trigger (see
// grants.CognitoInvoke). The construct calls it for a UserPool it does not
// attach the trigger to; call it for any other pool you attach it to
// outside CDK.
func (n *UserNotifications) AllowInvokeFromUserPool(pool awscognito.IUserPool) {
	grants.CognitoInvoke(n.PostAuth.Function, "PostAuthenticationCognito", pool)
}

// ErrorAlarms are the construct's alarms on the error metrics its
// trigger writes (internal/core/metrics.ErrorMetrics), for
// operations.OperationsProps.Sources.
func (n *UserNotifications) ErrorAlarms() []awscloudwatch.Alarm {
	return []awscloudwatch.Alarm{n.SubscribeErrorsAlarm, n.FilterPolicyLimitAlarm}
}

// MetricSubscribeErrors counts the errors the PostAuthentication trigger
// swallowed (sign-in still succeeded): Sum over 5 minutes unless opts
// say otherwise.
func (n *UserNotifications) MetricSubscribeErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(n.Construct, todometrics.FunctionPostAuth, todometrics.SubscribeErrors, opts)
}

// MetricFilterPolicyLimitExceeded counts the subscriptions SNS refused
// because a topic holds its quota of filter policies.
func (n *UserNotifications) MetricFilterPolicyLimitExceeded(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(n.Construct, todometrics.FunctionPostAuth, todometrics.FilterPolicyLimitExceeded, opts)
}

// MetricSubscribed counts new subscriptions (each sends a confirmation
// email).
func (n *UserNotifications) MetricSubscribed(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(n.Construct, todometrics.FunctionPostAuth, todometrics.Subscribed, opts)
}

// TopicName is the name of shard i's topic.
func TopicName(prefix string, i int) string { return fmt.Sprintf("%s-%d", prefix, i) }

// Environment is what a function that routes to the topics reads.
func (n *UserNotifications) Environment() map[string]string {
	return map[string]string{
		todoenv.TopicArnPrefix: *n.topicArn(n.prefix + "-"),
		todoenv.TopicShards:    fmt.Sprint(len(n.Topics)),
	}
}

func (n *UserNotifications) topicArn(name string) *string {
	return awscdk.Stack_Of(n.Construct).FormatArn(&awscdk.ArnComponents{Service: jsii.String("sns"), Resource: jsii.String(name)})
}

// allTopics matches every shard topic (and nothing else: the prefix is
// followed by '-' and the shard number).
func (n *UserNotifications) allTopics() *string { return n.topicArn(n.prefix + "-*") }

// GrantPublish lets grantee publish to every shard topic and, when the
// topics use a customer-managed TopicKey, use that key as a publisher
// must: kms:GenerateDataKey* and kms:Decrypt
// (https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html).
// The key's policy must also allow it (a key made in this app trusts the
// account's IAM policies by default).
func (n *UserNotifications) GrantPublish(grantee awsiam.IGrantable) awsiam.Grant {
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("sns:Publish"), ResourceArns: &[]*string{n.allTopics()},
	})
	if n.key != nil {
		return g.Combine(n.key.Grant(grantee, jsii.String("kms:GenerateDataKey*"), jsii.String("kms:Decrypt")))
	}
	return g
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
// Call it once, with the to-do table (keyed by tableschema.Todo()),
// before NotifyFunction or GrantNotifyTarget; synth fails without it.
func (n *UserNotifications) StoreSettingsIn(table awsdynamodb.ITable) {
	if n.settingsTable != nil {
		panic(fmt.Sprintf("%s: StoreSettingsIn was called twice: the settings live in one table", *n.Node().Id()))
	}
	n.settingsTable = table
	n.PostAuth.Function.AddEnvironment(jsii.String(envvars.Table), table.TableName(), nil)
	grants.Table(table, n.PostAuth.Function, "dynamodb:GetItem", "dynamodb:PutItem")
}

// NotifyFunction is a function of its own that runs the to-do app's
// target (task.NotifyTarget): it emails a task's owner that it expired
// (or, for a reminder payload, that it soon will), for a schedule-on-write
// construct that takes it as its Target. It reads the task and the
// owner's settings from the StoreSettingsIn table and publishes to the
// owner's shard topic. It is created on the first call only: the to-do
// app runs the same target inside its firing function instead
// (NotifyTargetEnvironment, GrantNotifyTarget), and deploys none.
func (n *UserNotifications) NotifyFunction() *gofn.Function {
	if n.notify != nil {
		return n.notify
	}
	if n.settingsTable == nil {
		panic(fmt.Sprintf("%s: NotifyFunction before StoreSettingsIn: call StoreSettingsIn(table) with the to-do table first", *n.Node().Id()))
	}
	env := map[string]string{envvars.Table: *n.settingsTable.TableName(), envvars.ItemSchema: tableschema.Todo().EnvValue()}
	maps.Copy(env, n.NotifyTargetEnvironment())
	n.notify = gofn.NewFunction(n.Construct, jsii.String("Notify"), &gofn.FunctionProps{
		Entry:       "lambdas/notify",
		Description: "Emails a task's owner that it expired or is due soon (the schedule-on-write target of the to-do app)",
		Logs:        n.logs,
		Environment: env,
	})
	n.GrantNotifyTarget(n.notify.Function)
	return n.notify
}

// NotifyTargetEnvironment is what the to-do app's target
// (task.NotifyTarget) reads besides the table and schema: the shard
// topics and the web app's URL (WEB_URL, when WebURL is set).
func (n *UserNotifications) NotifyTargetEnvironment() map[string]string {
	env := n.Environment()
	if n.webURL != "" {
		env[todoenv.WebURL] = n.webURL
	}
	return env
}

// GrantNotifyTarget lets fn run the to-do app's target: read the task and
// its owner's settings (GetItem on the settings table only), publish to
// the owner's shard topic, and record the notification (UpdateItem), which
// takes the task out of the pending indexes. Call StoreSettingsIn first.
func (n *UserNotifications) GrantNotifyTarget(fn awslambda.IFunction) awsiam.Grant {
	if n.settingsTable == nil {
		panic(fmt.Sprintf("%s: GrantNotifyTarget before StoreSettingsIn: call StoreSettingsIn(table) with the to-do table first", *n.Node().Id()))
	}
	grants.Table(n.settingsTable, fn, "dynamodb:GetItem", "dynamodb:UpdateItem")
	g := n.GrantPublish(fn)
	nag.Suppress(nag.RolePolicy(fn), nag.Rule{ID: "AwsSolutions-IAM5",
		AppliesTo: []any{nag.Regex(`/^Resource::arn:<AWS::Partition>:sns:<AWS::Region>:<AWS::AccountId>:.+-\*$/g`)},
		Reason:    "Publish to the notification shard topics: thousands of deterministic names <prefix>-<n>; one pattern keeps the policy under IAM's size limit"})
	return g
}

// settingsValidation fails synth when StoreSettingsIn was never called:
// the trigger would fail at its first cold start.
type settingsValidation struct{ n *UserNotifications }

func (v *settingsValidation) Validate() *[]*string {
	if v.n.settingsTable != nil {
		return &[]*string{}
	}
	return &[]*string{jsii.String("the notification settings have no table: call StoreSettingsIn(table) with the to-do table")}
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
