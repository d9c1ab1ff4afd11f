// Package campaigns is the construct of scheduled email campaigns: a
// campaign spreads emails over business hours, each send one durable task
// in DynamoDB, an item under the core's contract (campaign.TaskSchema),
// fired at its time by one of the core's timers (CampaignsProps.Timer:
// EventBridge Scheduler by default, Step Functions or DynamoDB TTL). It
// builds the campaign table, binds the timer to it and to the send
// function, four Go functions (API, provisioning, send, reconciler), a
// REST API with a Cognito authorizer, the reconciler's rule, alarms, and
// (LiveProgress) the live progress of a campaign page: the table's
// stream, a progress function and an AWS AppSync Events API. The rules
// live in internal/campaigns/campaign (plain Go); see docs/campaigns.md.
package campaigns

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsappsync"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsroute53"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/asyncinvoke"
	"github.com/unschedule/unschedule/constructs/internal/cursorsecret"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/restapi"
	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// CampaignsProps configures the campaigns.
type CampaignsProps struct {
	// UserPool authenticates the API's callers (a Cognito User Pools
	// authorizer); a campaign's owner is the caller's sub. Only members of
	// SenderGroup whose email address is verified may use the API: verify
	// addresses by code in this pool (userauth.UserAuthProps
	// RequireEmailVerification), or email_verified proves nothing. The
	// provisioning and send functions read the owner in this pool
	// before each run and each send (cognito-idp:AdminGetUser and
	// AdminListGroupsForUser, granted on this pool only): an owner who is
	// no longer an enabled member with a proven address (the
	// custom:email_proof attribute that userauth's PostConfirmation
	// trigger writes) has their campaigns cancelled. Required.
	UserPool awscognito.IUserPool
	// SenderEmailDomains restricts senders to addresses in these domains,
	// checked on the owner's current address before each run and send
	// (pass the sign-up allow-list, userauth.UserAuthProps
	// AllowedEmailDomains: a user may change their address after sign-up).
	// Default: any domain.
	SenderEmailDomains []string
	// SenderGroup is the name of the user pool group whose members may
	// send campaigns; the construct creates it (SenderGroupResource) in
	// UserPool, empty. Only an administrator adds users to it
	// (aws cognito-idp admin-add-user-to-group). Letters, digits, '.',
	// '_' and '-' only, at most 128 characters.
	// Default: "campaign-senders".
	SenderGroup string
	// SenderAddress is the From address of every email, an address of a
	// verified SES identity (SenderIdentity). Required.
	SenderAddress string
	// SenderIdentity is the verified SES identity the send function may
	// send as (ses:SendEmail is granted on it only): SenderAddress itself,
	// or its domain.
	// Default: SenderAddress (an email-address identity).
	SenderIdentity string
	// SesConfigurationSet names an existing SES configuration set for the
	// emails; the construct adds its bounce and complaint event
	// destination to it (Deliverability). The grant covers it too.
	// Default: a new configuration set with reputation metrics
	// (Deliverability.ConfigurationSet).
	SesConfigurationSet string
	// SenderDomain makes the construct create the SES domain identity of
	// SenderAddress's domain with Easy DKIM (Deliverability.EmailIdentity);
	// publish the DNS records constructs/campaigns/README.md lists, or
	// pass SenderHostedZone.
	// Default: the name of SenderHostedZone if given, else none (the
	// identity is verified outside this construct).
	SenderDomain string
	// SenderHostedZone is the Route 53 public zone of SenderDomain: the
	// identity's DKIM (and MAIL FROM) records are created in it.
	// Default: none (publish the records yourself).
	SenderHostedZone awsroute53.IPublicHostedZone
	// MailFromDomain is the identity's custom MAIL FROM domain, a
	// subdomain of SenderDomain such as bounce.example.com, so that SPF
	// aligns with the From domain (DMARC). Needs SenderDomain.
	// Default: none (SES's own MAIL FROM domain).
	MailFromDomain string
	// AllowedOrigins may call the API from a browser (CORS).
	// Default: none (no browser origin).
	AllowedOrigins []string
	// AlarmTopic is your topic for every alarm's state changes.
	// Default: alarms without actions.
	AlarmTopic awssns.ITopic
	// ExistingTable is your own campaign table: string keys "pk" and "sk",
	// the global secondary indexes "open" (pk "open", sk "sk", all
	// attributes) and "owner" (as constructs/campaigns/README.md lists),
	// TTL on "expiresAt", with LiveProgress a stream of new images, and
	// with the TTL timer a stream of new and old images. Not with
	// TableProps or DeletionProtection.
	// Default: a new table (TableProps).
	ExistingTable awsdynamodb.ITable
	// TableProps override, field by field, the new table's: on-demand,
	// point-in-time recovery, AWS-managed encryption, TTL on "expires",
	// RemovalPolicy, DeletionProtection (the keys cannot be changed). Not
	// with ExistingTable.
	// Default: those.
	TableProps *awsdynamodb.TableProps
	// Timer fires each send at its time, invoking the send function with
	// the send task's payload (contract.Schema.EncodePayload of
	// campaign.TaskSchema): scheduleonwrite.NewSchedulerTimer (one
	// EventBridge Scheduler schedule per send, within a minute or two),
	// NewStepFunctionsTimer (one waiting execution per send, to the
	// second) or NewTTLTimer (a marker item in the campaign table: free,
	// but up to two days late; its TTLAttribute must be the table's
	// "expiresAt"). Provisioning creates the timers, the API cancels them,
	// the reconciler repairs them; the timer's alarms join Alarms. One
	// timer serves one construct. See docs/campaigns.md, "Choosing a
	// timer for campaign sends".
	// Default: NewSchedulerTimer with ExistingDeadLetterQueue or
	// DeadLetterQueueProps below (else NewSchedulerTimer(nil)): a new
	// schedule group, the role its schedules run as (which may invoke
	// only the send function) and a dead-letter queue.
	Timer scheduleonwrite.Timer
	// ExistingDeadLetterQueue is your own standard queue for the send
	// invocations the default Scheduler timer gave up on (its role gets
	// sqs:SendMessage on it; it is alarmed). Not with DeadLetterQueueProps,
	// nor with Timer (set SchedulerTimerProps.ExistingDeadLetterQueue
	// there).
	// Default: a new queue (DeadLetterQueueProps).
	ExistingDeadLetterQueue awssqs.IQueue
	// DeadLetterQueueProps override, field by field, the default Scheduler
	// timer's new dead-letter queue's: SQS-managed encryption, TLS only,
	// 14 days, RemovalPolicy. Not with ExistingDeadLetterQueue, nor with
	// Timer (set SchedulerTimerProps.DeadLetterQueueProps there).
	// Default: those.
	DeadLetterQueueProps *awssqs.QueueProps
	// RemovalPolicy of the table, the queues and what the timer creates
	// that holds data (the schedule group, log groups).
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// DeletionProtection of the new table (not with ExistingTable).
	// Default: on exactly when the table is retained (RemovalPolicy
	// RETAIN, the default), off with DESTROY.
	DeletionProtection *bool
	// Logs is how every function's and the API's log group keeps events.
	// Default: one month, retained.
	Logs gofn.LogOptions
	// ProvisionTimeout is the provisioning function's timeout: the longest
	// run between two checkpoints.
	// Default: 15 minutes.
	ProvisionTimeout awscdk.Duration
	// ProvisionMargin is how long before its timeout a provisioning run
	// stops, saves its checkpoint and re-invokes itself.
	// Default: 90 seconds.
	ProvisionMargin awscdk.Duration
	// SchedulerCallsPerSecond paces the timer calls of provisioning and of
	// the reconciler (at most 10 are in flight); raise it to your
	// account's quota for the timer (CreateSchedule, StartExecution or the
	// table's writes).
	// Default: 50.
	SchedulerCallsPerSecond float64
	// ReconcileEvery is the reconciler's period.
	// Default: 30 minutes.
	ReconcileEvery awscdk.Duration
	// ThrottlingRateLimit and ThrottlingBurstLimit throttle the campaign
	// API's stage (the senders' routes). They never touch unsubscribes,
	// which have their own API (UnsubscribeThrottlingRateLimit).
	// Default: 20 requests per second, bursts of 40.
	ThrottlingRateLimit  float64
	ThrottlingBurstLimit float64
	// UnsubscribeThrottlingRateLimit and UnsubscribeThrottlingBurstLimit
	// throttle the public one-click unsubscribe (Deliverability.UnsubscribeApi,
	// a REST API of its own, and the campaign API's former /unsubscribe
	// route, throttled per method), apart from the senders' routes: a
	// flood of campaign requests never turns a mailbox provider's one-click
	// POST into a 429, nor the reverse. Only the account's regional API
	// Gateway limit is shared by every API.
	// Default: 50 requests per second, bursts of 100.
	UnsubscribeThrottlingRateLimit  float64
	UnsubscribeThrottlingBurstLimit float64
	// SuppressionListId names the construct's suppression list, the
	// partition of the table its entries live in (S#<id>, lower case).
	// Every unsubscribe, hard bounce and complaint of any sender of this
	// construct goes to it, and every send is checked against it,
	// whatever SenderAddress is: changing the From address forgets
	// nobody. Constructs that share one table (ExistingTable) share the
	// list unless given different ids. A table deployed before this prop
	// existed keeps its entries under the From address: set the id to
	// that SenderAddress to keep honouring them. 1 to 128 letters,
	// digits, '.', '_', '-', '@' or '+'.
	// Default: "default".
	SuppressionListId string
	// LiveProgress pushes each campaign's progress to its page: the
	// table gets a stream (new images), a progress function reads it
	// (send tasks and campaign items only) and publishes the campaign's
	// counts and changed sends to an AWS AppSync Events API (EventApi),
	// on the channel /campaigns/<owner sub>/<campaign id>. Users connect
	// and subscribe with their UserPool token, and only to channels of
	// their own sub; only the progress function may publish (IAM). False
	// leaves the page on polling (no stream, function or Event API).
	// Default: true.
	LiveProgress *bool
	// MaxCampaignsPerDay is how many campaigns one sender may create per
	// UTC day: past it the API answers a JSON 429 (limit
	// "campaignsPerDay") with Retry-After to midnight UTC. A preview does
	// not count. A whole number from 1 to 10000.
	// Default: 20.
	MaxCampaignsPerDay *float64
	// MaxSendsPerDay is how many sends (one per recipient) the campaigns
	// one sender creates in a UTC day may hold together, whatever days
	// they send on: past it the API answers 429 (limit "sendsPerDay").
	// A whole number from 1 to 10000000.
	// Default: 20000.
	MaxSendsPerDay *float64
	// MaxRecipientsPerCampaign is how many recipients one campaign may
	// have: past it a create or preview is answered 429 (limit
	// "recipientsPerCampaign", no Retry-After). A whole number from 1 to
	// 10000 (the API's hard limit) and at most MaxSendsPerDay.
	// Default: 10000, or MaxSendsPerDay when that is lower.
	MaxRecipientsPerCampaign *float64
	// WebAcl puts an AWS WAF web ACL on the API stage: a rate limit per
	// client IP (WafRateLimitPerIp) and per Authorization header
	// (WafRateLimitPerToken), and AWS's managed common rule set. WAF
	// bills per web ACL, rule and request.
	// Default: false.
	WebAcl bool
	// WafRateLimitPerIp is the most requests one IP may send in 5 minutes.
	// Default: 1500.
	WafRateLimitPerIp float64
	// WafRateLimitPerToken is the most requests one Authorization header
	// (one signed-in session) may send in 5 minutes.
	// Default: 600.
	WafRateLimitPerToken float64
	// CloudWatchRole makes the REST API set the API Gateway CloudWatch
	// Logs role of the account and region (an AWS::ApiGateway::Account,
	// which its stage's ERROR logging needs). The setting is account-wide:
	// pass false when another API of the app sets it (the to-do app's task
	// API does), and make this API's stage depend on that setting.
	// Default: true.
	CloudWatchRole *bool
}

// Campaigns is the built construct.
type Campaigns struct {
	constructs.Construct
	// Table holds campaigns, send tasks, checkpoints and send records
	// (ExistingTable, or the one created).
	Table awsdynamodb.ITable
	// Timer is CampaignsProps.Timer bound to the table and the send
	// function: its environment and grants are the provisioning, API and
	// reconciler functions'. Its concrete type holds its resources: with
	// the default, *scheduleonwrite.SchedulerTimer's ScheduleGroup,
	// SchedulerRole (only the scheduler may assume it, for this group and
	// account) and DeadLetterQueue.
	Timer scheduleonwrite.TimerBinding
	// The functions.
	Api, Provision, Send, Reconciler *gofn.Function
	// ProvisionSelfInvoke lets the provisioning function re-invoke itself
	// (a policy of its own: the function's default policy cannot name the
	// function without a dependency cycle).
	ProvisionSelfInvoke awsiam.Policy
	// ReconcileRule runs the reconciler every ReconcileEvery.
	ReconcileRule awsevents.Rule
	// RestApi serves the campaign routes.
	RestApi awsapigateway.RestApi
	// CursorSecret is the generated secret whose key seals the API's page
	// cursors (the campaign list, a campaign's sends); only Api reads it.
	CursorSecret awssecretsmanager.Secret
	// WebAcl guards RestApi's stage (nil unless CampaignsProps.WebAcl).
	WebAcl awswafv2.CfnWebACL
	// SenderGroupResource is the user pool group whose verified members
	// may send campaigns (SenderGroupName); the API refuses everyone else
	// with 403.
	SenderGroupResource awscognito.CfnUserPoolGroup
	SenderGroupName     string
	// ProvisionAsync, SendAsync and ReconcilerAsync are the failure
	// queues and alarms of the asynchronously invoked functions (the
	// reconciler hands overdue sends to the send function asynchronously).
	// With the Scheduler timer, which invokes the send function
	// asynchronously too, SendAsync is the timer's (FireFailureQueue and
	// its alarms).
	ProvisionAsync, SendAsync, ReconcilerAsync AsyncFailures
	// ErrorsAlarms fire on each function's Lambda Errors.
	ErrorsAlarms FunctionAlarms
	// Api5xxAlarm fires on the API stage's 5XXError.
	Api5xxAlarm awscloudwatch.Alarm

	// Live progress (nil with LiveProgress false). EventApi is the AWS
	// AppSync Events API: Cognito user pool auth to connect and
	// subscribe, IAM to publish. ProgressChannels is its channel
	// namespace ProgressNamespace, whose onSubscribe handler lets a user
	// subscribe only to /campaigns/<their sub>/…. HttpDns and RealtimeDns
	// are its DNS names (the web app's campaignEventsHttp and
	// campaignEventsRealtime). Progress is the function that publishes
	// from the table's stream; ProgressFailureQueue receives the stream
	// batches it gave up on (alarmed).
	EventApi awsappsync.EventApi
	// EventApiLogs receives the Event API's errors (EventApiLogLevel),
	// kept as Logs says.
	EventApiLogs         awslogs.LogGroup
	ProgressChannels     awsappsync.ChannelNamespace
	HttpDns, RealtimeDns *string
	Progress             *gofn.Function
	ProgressFailureQueue awssqs.IQueue
	// ProgressFailureAlarm fires on any message in ProgressFailureQueue,
	// ProgressIteratorAgeAlarm when Progress lags the stream (nil with
	// LiveProgress false).
	ProgressFailureAlarm, ProgressIteratorAgeAlarm awscloudwatch.Alarm

	// Deliverability: the configuration set, the suppression list's
	// bounce function, one-click unsubscribe, the reputation alarms and
	// the DKIM identity (deliverability.go).
	Deliverability Deliverability

	// MetricAlarms are the alarms on the functions' error metrics, one
	// field per metric (ErrorAlarms lists them).
	MetricAlarms MetricAlarms

	errorAlarms []awscloudwatch.Alarm
}

// MetricAlarms holds one alarm per error metric of the campaign functions
// (campaignmetrics.CampaignErrorMetrics); the Progress ones are nil with
// LiveProgress false.
type MetricAlarms struct {
	ApiServerErrors                   awscloudwatch.Alarm
	ProvisionErrors, ProvisionLeft    awscloudwatch.Alarm
	SendErrors, SendBadInput          awscloudwatch.Alarm
	SendsFailed                       awscloudwatch.Alarm
	ReconcilerErrors, ReconcileFailed awscloudwatch.Alarm
	ProgressErrors, ProgressMalformed awscloudwatch.Alarm
}

// AsyncFailures are an asynchronously invoked function's failure queue
// (the events Lambda gave up on) and its alarms: on a message in the
// queue, on AsyncEventsDropped and on DestinationDeliveryFailures.
type AsyncFailures struct {
	Queue                                            awssqs.IQueue
	FailureAlarm, DroppedAlarm, DeliveryFailureAlarm awscloudwatch.Alarm
}

// FunctionAlarms holds one alarm per campaign function (Progress is nil
// with LiveProgress false).
type FunctionAlarms struct {
	Api, Provision, Send, Reconciler, Progress awscloudwatch.Alarm
}

// Alarms are every alarm of the construct, in a fixed order, without the
// nil ones of an absent live progress: the timer's first.
func (x *Campaigns) Alarms() []awscloudwatch.Alarm {
	all := x.Timer.Alarms()
	for _, a := range []AsyncFailures{x.ProvisionAsync, x.SendAsync, x.ReconcilerAsync} {
		all = append(all, a.FailureAlarm, a.DroppedAlarm, a.DeliveryFailureAlarm)
	}
	all = append(all, x.errorAlarms...)
	e := x.ErrorsAlarms
	all = append(all, e.Api, e.Provision, e.Send, e.Reconciler, e.Progress, x.Api5xxAlarm, x.ProgressFailureAlarm, x.ProgressIteratorAgeAlarm)
	all = append(all, x.Deliverability.alarms()...)
	// Each once: with the Scheduler timer, SendAsync's are the timer's.
	var out []awscloudwatch.Alarm
	for _, a := range all {
		if a != nil && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// ErrorAlarms are the alarms on the functions' error metrics
// (campaignmetrics.CampaignErrorMetrics): with the construct among an operations
// construct's Sources, none is repeated there.
func (x *Campaigns) ErrorAlarms() []awscloudwatch.Alarm { return x.errorAlarms }

// NewCampaigns builds the campaigns.
func NewCampaigns(scope constructs.Construct, id *string, props *CampaignsProps) *Campaigns {
	p := withDefaults(props)
	validate(*id, p)
	// The core's timer steps, as NewScheduleOnWrite takes them: plan,
	// build the table and the firing (send) function, bind.
	planned := scheduleonwrite.PlanTimer(timerOrDefault(p),
		scheduleonwrite.TimerPlan{ID: *id, Schema: campaign.TaskSchema.WithDefaults(), ExistingTable: p.ExistingTable})
	validateTimerNeeds(*id, planned.Needs)
	c := constructs.NewConstruct(scope, id)
	x := &Campaigns{Construct: c}

	x.table(p, planned.Needs)

	table := map[string]string{campaignenv.CampaignTable: *x.Table.TableName()}
	fn := func(fid, entry, description string, timeoutSec float64, env ...map[string]string) *gofn.Function {
		return gofn.NewFunction(c, jsii.String(fid), &gofn.FunctionProps{Entry: entry, Description: description,
			Timeout: awscdk.Duration_Seconds(jsii.Number(timeoutSec)), MemoryMiB: 256, Logs: p.Logs, Environment: merge(append(env, table)...)})
	}
	x.configurationSet(&p)
	sender := map[string]string{campaignenv.SenderAddress: p.SenderAddress}
	if p.SesConfigurationSet != "" {
		sender[campaignenv.SESConfigurationSet] = p.SesConfigurationSet
	}
	// The sender check of the send, provisioning and reconciler functions
	// (cognitosenders.Load).
	owners := map[string]string{campaignenv.UserPoolID: *p.UserPool.UserPoolId(), campaignenv.SenderGroup: p.SenderGroup,
		campaignenv.AllowedEmailDomains: strings.ToLower(strings.Join(p.SenderEmailDomains, ","))}
	x.Send = gofn.NewFunction(c, jsii.String("Send"), &gofn.FunctionProps{Entry: "lambdas/campaignsend",
		Description: "Sends one campaign email per timer fire (claim, SES, record)",
		Timeout:     awscdk.Duration_Seconds(jsii.Number(DefaultSendTimeoutSec)), MemoryMiB: 256, Logs: p.Logs,
		Environment: merge(sender, table, owners), ReservedConcurrentExecutions: planned.Needs.FireReservedConcurrency})

	// The timer fires the send function: the send task's payload at its
	// send time (the send function is the core's expiry function here).
	x.Timer = planned.Bind(c, scheduleonwrite.TimerCore{Table: x.Table, Fire: x.Send,
		AlarmTopic: p.AlarmTopic, RemovalPolicy: p.RemovalPolicy, Logs: p.Logs})

	// What creates, moves and cancels timers reads the timer's own
	// environment (UNSCHEDULE_TIMER and its variables), and the send
	// tasks' schema, by which the timer's adapter arms their payloads
	// (the functions refuse to start without it: campaigntimer.Load).
	timer := merge(x.Timer.Environment(), map[string]string{envvars.ItemSchema: campaign.TaskSchema.EnvValue()})
	paced := map[string]string{campaignenv.SchedulerCallsPerSecond: strconv.FormatFloat(p.SchedulerCallsPerSecond, 'f', -1, 64)}
	x.Provision = fn("Provision", "lambdas/campaignprovision", "Creates a campaign's send timers: bounded, paced, resumable",
		*p.ProvisionTimeout.ToSeconds(nil), timer, paced, owners, map[string]string{campaignenv.ProvisionMarginSec: fmt.Sprint(*p.ProvisionMargin.ToSeconds(nil))})
	// The campaign reconciler's own entry; the core's reconciler
	// construct (x.reconcile, after the grants) adds the timer's and the
	// send function's environment and grants, its rule and alarms.
	x.Reconciler = fn("Reconciler", "lambdas/campaignreconciler", "Repairs campaign drift: missing timers, stale Running tasks, interrupted cancels",
		min(900, *p.ReconcileEvery.ToSeconds(nil)/2), paced, sender, owners)
	x.Api = fn("Api", "lambdas/campaignapi", "Campaign REST API: create, preview, list, get, provision, cancel", DefaultApiTimeoutSec, timer, map[string]string{
		campaignenv.ProvisionFunctionArn: *x.Provision.Function.FunctionArn(),
		campaignenv.AllowedOrigins:       strings.Join(p.AllowedOrigins, ","), campaignenv.SenderGroup: p.SenderGroup,
	}, limitsEnv(p))
	// The API Gateway authorizer checks only that a token is the pool's:
	// group membership and email_verified are the API function's checks.
	x.SenderGroupName = p.SenderGroup
	x.SenderGroupResource = awscognito.NewCfnUserPoolGroup(c, jsii.String("SenderGroup"), &awscognito.CfnUserPoolGroupProps{
		UserPoolId: p.UserPool.UserPoolId(), GroupName: jsii.String(p.SenderGroup),
		Description: jsii.String("May send email campaigns (with a verified email address); only an administrator adds members"),
	})

	if *p.LiveProgress {
		x.liveProgress(p, fn)
	}
	x.grant(p)
	x.reconcile(p)
	x.async(p)
	x.alarmErrors(p)
	x.api(p)
	x.CursorSecret = cursorsecret.New(c, x.Api.Function)
	x.deliverability(p, fn)
	x.suppressNag()
	return x
}

// suppressNag records, on each resource, why an AwsSolutions finding does
// not apply (pinned by TestNoUnsuppressedNagFindings in test/campaignstest).
func (x *Campaigns) suppressNag() {
	// The timer's grants (TimerBinding.GrantModify and GrantRead): the
	// schedules of its own group, or the executions of its own state
	// machine; the TTL timer's are on the table itself.
	timers := nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{
		nag.Regex(`/^Resource::arn:<AWS::Partition>:scheduler:(<AWS::Region>|[^:]+):(<AWS::AccountId>|[^:]+):schedule\/[^/*]+\/\*$/g`),
		nag.Regex(`/^Resource::arn:<AWS::Partition>:states:(<AWS::Region>|[^:]+):(<AWS::AccountId>|[^:]+):execution:<[^>]+\.Name>:\*$/g`)},
		Reason: "One timer per send task, named after it: the grant covers the schedules of this construct's own schedule group, " +
			"or the executions of its own state machine, and nothing outside them"}
	list := nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{"Resource::*"},
		Reason: "scheduler:ListSchedules has no resource-level permissions (the Scheduler timer's GrantRead; the only action on *); it reveals schedule names only"}
	versions := nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{nag.Regex(`/^Resource::<[A-Za-z0-9]+\.Arn>:\*$/g`)},
		Reason: "Invoke one function of this construct and its versions/aliases (<arn>:*), nothing else"}
	nag.Suppress(nag.RolePolicy(x.Provision.Function), timers)
	nag.Suppress(nag.RolePolicy(x.Reconciler.Function), timers, list, versions)
	nag.Suppress(nag.RolePolicy(x.Api.Function), timers, versions)
	nag.Suppress(x.RestApi,
		nag.Rule{ID: "AwsSolutions-APIG2", Reason: "The handler validates every body strictly (unknown fields at every depth, sizes, the schedule rules) and answers JSON 4xx; API Gateway's validator would answer in another format"},
		nag.Rule{ID: "AwsSolutions-IAM4", AppliesTo: []any{"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"},
			Reason: "API Gateway's account-wide logging role, as AWS documents it; needed for the access logs"})
}

// merge is the union of maps (later ones win).
func merge(ms ...map[string]string) map[string]string {
	all := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			all[k] = v
		}
	}
	return all
}

// grant gives each function exactly what its code calls.
func (x *Campaigns) grant(p CampaignsProps) {
	send, prov, rec, api := x.Send.Function, x.Provision.Function, x.Reconciler.Function, x.Api.Function
	// Send: read, claim and replace its task; put, read and delete the
	// SES idempotency record; send as the identity only.
	grants.Table(x.Table, send, "dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:DeleteItem")
	stack := awscdk.Stack_Of(x.Construct)
	sesArns := []*string{stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ses"), Resource: jsii.String("identity"), ResourceName: jsii.String(p.SenderIdentity)})}
	if p.SesConfigurationSet != "" {
		sesArns = append(sesArns, stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ses"), Resource: jsii.String("configuration-set"), ResourceName: jsii.String(p.SesConfigurationSet)}))
	}
	// ses:FromAddress pins the From address as well as the identity:
	// https://docs.aws.amazon.com/ses/latest/dg/control-user-access.html
	send.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("ses:SendEmail"), Resources: &sesArns,
		Conditions: &map[string]any{"StringEquals": map[string]any{"ses:FromAddress": p.SenderAddress}},
	}))
	// Send, Provision and Reconciler: read the campaign's owner in the
	// user pool (the sender check), on that pool only.
	// https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoncognitouserpools.html
	for _, f := range []awsiam.IGrantable{send, prov, rec} {
		p.UserPool.Grant(f, jsii.String("cognito-idp:AdminGetUser"), jsii.String("cognito-idp:AdminListGroupsForUser"))
	}
	// Provision: read the campaign, list tasks, status and checkpoint
	// writes; create timers.
	grants.Table(x.Table, prov, "dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem", "dynamodb:PutItem")
	x.Timer.GrantModify(prov)
	// The self-invoke permission, in a policy of its own (see the field).
	x.ProvisionSelfInvoke = awsiam.NewPolicy(x.Construct, jsii.String("ProvisionSelfInvoke"), &awsiam.PolicyProps{
		Roles: &[]awsiam.IRole{x.Provision.Role},
		Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("lambda:InvokeFunction"), Resources: jsii.Strings(*prov.FunctionArn()),
		})},
	})
	// Reconciler: the open index, tasks and campaigns, send records
	// (read); read and repair timers; hand an overdue task to the send
	// function. It updates a campaign's DONE set and status when it ends
	// its last task.
	grants.Table(x.Table, rec, "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem")
	grants.Index(x.Table, tk.OpenIndex, rec, "dynamodb:Query")
	// API: create (put, batch), read, count, cancel (update/put tasks and
	// the campaign, cancel timers), start provisioning. Its only timer
	// call is the cancel's Delete (campaigncancel): it never arms or
	// moves a timer, so it may not create schedules nor pass their role.
	grants.Table(x.Table, api, "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query", "dynamodb:BatchWriteItem")
	grants.Index(x.Table, tk.OwnerIndex, api, "dynamodb:Query") // the caller's campaigns
	x.Timer.GrantDisarm(api)
	grants.Invoke(x.Provision.Function, api)
}

// reconcile builds the campaign reconciler through the core's reconciler
// construct, on the campaign reconciler function: the construct adds the
// timer's environment and grants (GrantModify, GrantRead), how to fire an
// overdue send (sendFiring), the failure queue and alarms of its
// asynchronous invocations, its rule and its Errors alarm. Its id
// "Default" and the prefix "Reconciler" keep the logical ids this
// construct gave those resources before.
func (x *Campaigns) reconcile(p CampaignsProps) {
	r := reconciler.NewReconciler(x.Construct, jsii.String("Default"), &reconciler.ReconcilerProps{
		Table: x.Table, Timer: x.Timer, Core: sendFiring{send: x.Send}, Schema: campaign.TaskSchema,
		ExistingFunction: x.Reconciler, IdPrefix: "Reconciler", Every: p.ReconcileEvery,
		FailureQueueRemovalPolicy: p.RemovalPolicy, AlarmTopic: p.AlarmTopic, Logs: p.Logs,
	})
	x.ReconcileRule = r.Rule
	x.ReconcilerAsync = AsyncFailures{Queue: r.FailureQueue, FailureAlarm: r.FailureAlarm, DroppedAlarm: r.DroppedAlarm, DeliveryFailureAlarm: r.DestinationFailureAlarm}
	x.ErrorsAlarms.Reconciler = r.ErrorsAlarm
}

// sendFiring is how the reconciler fires an overdue send: it invokes the
// send function (the campaigns' target), which claims the task itself.
type sendFiring struct{ send *gofn.Function }

// FiringEnvironment implements reconciler.FiringCore: the send function.
func (s sendFiring) FiringEnvironment() map[string]string {
	return map[string]string{campaignenv.SendFunctionArn: *s.send.Function.FunctionArn()}
}

// GrantFire implements reconciler.FiringCore: invoke the send function
// (its ARN and its versions and aliases) only.
func (s sendFiring) GrantFire(fn awslambda.IFunction) awsiam.Grant {
	return grants.Invoke(s.send.Function, fn)
}

// async gives the asynchronously invoked functions an EventInvokeConfig
// with a failure queue and alarms (the reconciler's are its construct's).
// A timer that invokes the send function asynchronously (the Scheduler
// timer) has already given it one (TimerBinding.FireFailures): the
// construct then keeps the timer's.
func (x *Campaigns) async(p CampaignsProps) {
	if f := x.Timer.FireFailures(); f != nil {
		x.SendAsync = AsyncFailures{Queue: f.Queue, FailureAlarm: f.FailureAlarm, DroppedAlarm: f.DroppedAlarm, DeliveryFailureAlarm: f.DeliveryFailureAlarm}
	}
	for _, a := range []struct {
		prefix, name, remedy string
		fn                   *gofn.Function
		age, retries         float64
		out                  *AsyncFailures
	}{
		{"Provision", "campaign provisioning", "Invoke the provisioning function again with the record's requestPayload: it resumes from the campaign's checkpoint.",
			x.Provision, DefaultAsyncMaxEventAgeSec, DefaultAsyncRetryAttempts, &x.ProvisionAsync},
		{"Send", "campaign send", "Nothing to redrive by hand: the reconciler sends or moves each overdue Pending task, and recovers a stale Running one.",
			x.Send, DefaultAsyncMaxEventAgeSec, DefaultAsyncRetryAttempts, &x.SendAsync},
	} {
		if a.out.Queue != nil {
			continue // configured by the timer
		}
		cfg := asyncinvoke.Configure(x.Construct, a.prefix, a.fn.Function, asyncinvoke.Props{Name: a.name, MaxEventAgeSec: a.age,
			RetryAttempts: a.retries, Remedy: a.remedy, AlarmTopic: p.AlarmTopic, RemovalPolicy: p.RemovalPolicy})
		*a.out = AsyncFailures{Queue: cfg.Queue, FailureAlarm: cfg.FailureAlarm, DroppedAlarm: cfg.DroppedAlarm, DeliveryFailureAlarm: cfg.DeliveryFailureAlarm}
	}
}

// errorAlarms alarms on every error metric the functions write, and on
// each function's Lambda errors.
func (x *Campaigns) alarmErrors(p CampaignsProps) {
	m := &x.MetricAlarms
	fields := map[string]*awscloudwatch.Alarm{
		campaignmetrics.CampaignApiServerErrors: &m.ApiServerErrors, campaignmetrics.CampaignProvisionErrors: &m.ProvisionErrors,
		campaignmetrics.CampaignProvisionLeft: &m.ProvisionLeft, campaignmetrics.CampaignSendErrors: &m.SendErrors,
		campaignmetrics.CampaignSendBadInput: &m.SendBadInput, campaignmetrics.CampaignSendsFailed: &m.SendsFailed,
		campaignmetrics.CampaignReconcilerErrors: &m.ReconcilerErrors, campaignmetrics.CampaignReconcileFailed: &m.ReconcileFailed,
		campaignmetrics.CampaignProgressErrors: &m.ProgressErrors, campaignmetrics.CampaignProgressMalformed: &m.ProgressMalformed,
	}
	for fn, d := range map[string]map[string]string{
		campaignmetrics.FunctionCampaignAPI: {campaignmetrics.CampaignApiServerErrors: "The campaign API answered 5xx (the table, the timer or the provisioning invoke failed). Check its logs."},
		campaignmetrics.FunctionCampaignProvision: {
			campaignmetrics.CampaignProvisionErrors: "A campaign provisioning run failed or could not re-invoke itself; Lambda retries it from the checkpoint. Check its logs.",
			campaignmetrics.CampaignProvisionLeft:   "Provisioning left sends without a schedule after repeated errors; the reconciler recreates them before their time. Check the provisioning logs.",
		},
		campaignmetrics.FunctionCampaignSend: {
			campaignmetrics.CampaignSendErrors:   "Campaign sends failed and are retried (the timer, then Lambda); the reconciler repairs what is left. Check the send function's logs.",
			campaignmetrics.CampaignSendBadInput: "The send function got an event it cannot read: that timer can never send. Check the timer's input (the send task's payload).",
			campaignmetrics.CampaignSendsFailed:  "Campaign emails ended Failed (SES refused them, or an earlier attempt's outcome is unknown). See each task's error.",
		},
		campaignmetrics.FunctionCampaignReconciler: {
			campaignmetrics.CampaignReconcilerErrors: "The campaign reconciler could not repair some tasks, or a pass failed. Check its logs (firstErrors).",
			campaignmetrics.CampaignReconcileFailed:  "The campaign reconciler gave up on tasks (Failed with a reason: too many attempts or moves).",
		},
		campaignmetrics.FunctionCampaignProgress: {
			campaignmetrics.CampaignProgressErrors: "The progress function could not announce campaigns (the table read or the AppSync Events publish failed); " +
				"the stream retries them. Pages poll meanwhile. Check its logs and the Event API.",
			campaignmetrics.CampaignProgressMalformed: "The progress function skipped campaign table stream records it cannot decode: those changes were not pushed " +
				"(pages poll). Check its logs for the items.",
		},
	} {
		if fn == campaignmetrics.FunctionCampaignProgress && x.Progress == nil {
			continue
		}
		// alarms.ErrorMetricAlarms reads metrics.ErrorMetrics, which the
		// campaign functions are kept out of (see CampaignErrorMetrics).
		for _, name := range campaignmetrics.CampaignErrorMetrics[fn] {
			desc, ok := d[name]
			if !ok {
				panic("campaigns: no description for error metric " + name + " of function " + fn)
			}
			a := alarms.AtLeast(x.Construct, name+"Alarm", desc, alarms.Metric(x.Construct, fn, name, nil), 1, p.AlarmTopic)
			x.errorAlarms = append(x.errorAlarms, a)
			field, ok := fields[name]
			if !ok {
				panic("campaigns: no MetricAlarms field for error metric " + name + " of function " + fn)
			}
			*field = a
		}
	}
	sum := &awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5))}
	e := &x.ErrorsAlarms
	for _, f := range []struct {
		id  string
		fn  *gofn.Function
		out *awscloudwatch.Alarm
	}{{"Api", x.Api, &e.Api}, {"Provision", x.Provision, &e.Provision}, {"Send", x.Send, &e.Send}, {"Progress", x.Progress, &e.Progress}} {
		if f.fn == nil {
			continue
		}
		*f.out = alarms.AtLeast(x.Construct, f.id+"ErrorsAlarm",
			fmt.Sprintf("The campaign %s function failed invocations (Lambda Errors). Check its logs.", strings.ToLower(f.id)),
			f.fn.Function.MetricErrors(sum), 1, p.AlarmTopic)
	}
}

// api builds the REST API: every campaign route behind the Cognito
// authorizer. The stage's throttle is the senders'; the former public
// /unsubscribe route (deliverability.go) has method-level limits of its
// own, which take its methods out of the stage's (UnsubscribeThrottling*).
func (x *Campaigns) api(p CampaignsProps) {
	logs := p.Logs.NewLogGroup(x.Construct, "AccessLogs")
	unsubscribe := &awsapigateway.MethodDeploymentOptions{ThrottlingRateLimit: jsii.Number(p.UnsubscribeThrottlingRateLimit),
		ThrottlingBurstLimit: jsii.Number(p.UnsubscribeThrottlingBurstLimit), MetricsEnabled: jsii.Bool(true),
		LoggingLevel: awsapigateway.MethodLoggingLevel_ERROR}
	props := &awsapigateway.RestApiProps{
		Description:    jsii.String("Scheduled email campaigns"),
		CloudWatchRole: p.CloudWatchRole,
		EndpointTypes:  &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		DeployOptions: &awsapigateway.StageOptions{
			ThrottlingRateLimit: jsii.Number(p.ThrottlingRateLimit), ThrottlingBurstLimit: jsii.Number(p.ThrottlingBurstLimit),
			MetricsEnabled: jsii.Bool(true), LoggingLevel: awsapigateway.MethodLoggingLevel_ERROR,
			MethodOptions: &map[string]*awsapigateway.MethodDeploymentOptions{
				"/" + UnsubscribePath + "/GET": unsubscribe, "/" + UnsubscribePath + "/POST": unsubscribe},
		},
	}
	restapi.AccessLogs(props.DeployOptions, logs)
	if len(p.AllowedOrigins) > 0 {
		props.DefaultCorsPreflightOptions = restapi.CorsPreflight(p.AllowedOrigins, "GET", "POST", "OPTIONS")
	}
	x.RestApi = awsapigateway.NewRestApi(x.Construct, jsii.String("RestApi"), props)
	auth := awsapigateway.NewCognitoUserPoolsAuthorizer(x.Construct, jsii.String("Authorizer"), &awsapigateway.CognitoUserPoolsAuthorizerProps{
		CognitoUserPools: &[]awscognito.IUserPool{p.UserPool},
	})
	integration := awsapigateway.NewLambdaIntegration(x.Api.Function, nil)
	method := &awsapigateway.MethodOptions{Authorizer: auth, AuthorizationType: awsapigateway.AuthorizationType_COGNITO}
	root := x.RestApi.Root().AddResource(jsii.String("campaigns"), nil)
	root.AddMethod(jsii.String("POST"), integration, method)
	root.AddMethod(jsii.String("GET"), integration, method)
	root.AddResource(jsii.String("preview"), nil).AddMethod(jsii.String("POST"), integration, method)
	one := root.AddResource(jsii.String("{id}"), nil)
	one.AddMethod(jsii.String("GET"), integration, method)
	one.AddResource(jsii.String("provision"), nil).AddMethod(jsii.String("POST"), integration, method)
	one.AddResource(jsii.String("cancel"), nil).AddMethod(jsii.String("POST"), integration, method)
	x.webAcl(p)
	x.Api5xxAlarm = alarms.AtLeast(x.Construct, "Api5xxAlarm", "The campaign API stage answered 5xx. Check the API function's logs.",
		x.RestApi.DeploymentStage().MetricServerError(&awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"),
			Period: awscdk.Duration_Minutes(jsii.Number(5))}), 1, p.AlarmTopic)
}
