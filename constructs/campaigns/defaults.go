package campaigns

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/asyncinvoke"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
)

// Defaults of CampaignsProps, in one place.
const (
	DefaultProvisionTimeoutSec     = 900 // Lambda's maximum: the longest run between checkpoints
	DefaultProvisionMarginSec      = 90
	DefaultSchedulerCallsPerSecond = 50 // the lowest CreateSchedule rate quota the scheduler documents
	DefaultReconcileEveryMinutes   = 30
	DefaultThrottlingRateLimit     = 20
	DefaultThrottlingBurstLimit    = 40
	// The public unsubscribe API's stage: its own limits, so that the
	// senders' traffic never throttles an unsubscribe.
	DefaultUnsubscribeThrottlingRateLimit  = 50
	DefaultUnsubscribeThrottlingBurstLimit = 100
	// The sender limits (internal/campaigns/limits holds the rule).
	DefaultMaxCampaignsPerDay       = limits.DefaultCampaignsPerDay
	DefaultMaxSendsPerDay           = limits.DefaultSendsPerDay
	DefaultMaxRecipientsPerCampaign = limits.DefaultRecipientsPerCampaign
	// The web ACL's rate limits, requests per 5 minutes (as the task API's).
	DefaultWafRateLimitPerIp    = 1500
	DefaultWafRateLimitPerToken = 600
)

// Fixed settings of the pipeline: no prop changes them.
const (
	DefaultApiTimeoutSec  = 29 // API Gateway's integration limit
	DefaultSendTimeoutSec = 30 // below the send worker's 5-minute claim lease
	// The asynchronously invoked functions: provisioning and send retry
	// (a provisioning run resumes from its checkpoint; a send is claimed
	// once), the reconciler does not (its next period does).
	DefaultAsyncMaxEventAgeSec = asyncinvoke.MaxMaxEventAgeSec
	DefaultAsyncRetryAttempts  = asyncinvoke.MaxRetryAttempts
	// Live progress: the stream's event source mapping. A batch that keeps
	// failing is retried ProgressRetryAttempts times (bisected), records
	// older than ProgressMaxRecordAgeSec are given up (the page polls
	// meanwhile), and either goes to the progress failure queue.
	ProgressTimeoutSec      = 60
	ProgressBatchSize       = 100
	ProgressBatchWindowSec  = 1 // one invocation for a burst of sends
	ProgressRetryAttempts   = 5
	ProgressMaxRecordAgeSec = 3600
	// ProgressIteratorAgeAlarmSec: the progress function lags the stream
	// by more than this: the live page is late.
	ProgressIteratorAgeAlarmSec = 300
)

// ProgressNamespace is the AppSync Events channel namespace of campaign
// progress (internal/campaigns/campaignapi.ProgressNamespace, which the
// CDK app cannot import: it links the Lambda runtime). Its channels are
// /campaigns/<owner sub>/<campaign id>.
const ProgressNamespace = "campaigns"

// tableProps is the well-architected campaign table: on-demand,
// point-in-time recovery, encryption, keys of internal/campaigns/tablekeys.
// With stream, the table has a stream of new images (live progress).
func tableProps(removal awscdk.RemovalPolicy, protect, stream bool) *awsdynamodb.TableProps {
	p := &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(tk.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String(tk.SortKey), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:         awsdynamodb.TableEncryption_AWS_MANAGED,
		RemovalPolicy:      removal,
		DeletionProtection: jsii.Bool(protect),
	}
	// The senders' daily limit counters expire (internal/campaigns/limits).
	p.TimeToLiveAttribute = jsii.String(limits.ExpiresAttr)
	if stream {
		p.Stream = awsdynamodb.StreamViewType_NEW_IMAGE
	}
	return p
}

// timerOrDefault is Timer, or the Scheduler timer with the dead-letter
// queue props.
func timerOrDefault(p CampaignsProps) scheduleonwrite.Timer {
	if p.Timer != nil {
		return p.Timer
	}
	return scheduleonwrite.NewSchedulerTimer(&scheduleonwrite.SchedulerTimerProps{
		ExistingDeadLetterQueue: p.ExistingDeadLetterQueue, DeadLetterQueueProps: p.DeadLetterQueueProps})
}

func withDefaults(props *CampaignsProps) CampaignsProps {
	var p CampaignsProps
	if props != nil {
		p = *props
	}
	p.RemovalPolicy = propcheck.Or(p.RemovalPolicy, awscdk.RemovalPolicy_RETAIN)
	p.SenderGroup = propcheck.Or(p.SenderGroup, campaign.DefaultSenderGroup)
	deliverabilityDefaults(&p)
	p.SenderIdentity = propcheck.Or(p.SenderIdentity, p.SenderAddress)
	p.ProvisionTimeout = propcheck.SecondsOr(p.ProvisionTimeout, DefaultProvisionTimeoutSec)
	p.ProvisionMargin = propcheck.SecondsOr(p.ProvisionMargin, DefaultProvisionMarginSec)
	p.ReconcileEvery = propcheck.DurationOr(p.ReconcileEvery, awscdk.Duration_Minutes(jsii.Number(DefaultReconcileEveryMinutes)))
	p.SchedulerCallsPerSecond = propcheck.Or(p.SchedulerCallsPerSecond, DefaultSchedulerCallsPerSecond)
	p.ThrottlingRateLimit = propcheck.Or(p.ThrottlingRateLimit, DefaultThrottlingRateLimit)
	p.ThrottlingBurstLimit = propcheck.Or(p.ThrottlingBurstLimit, DefaultThrottlingBurstLimit)
	p.UnsubscribeThrottlingRateLimit = propcheck.Or(p.UnsubscribeThrottlingRateLimit, DefaultUnsubscribeThrottlingRateLimit)
	p.UnsubscribeThrottlingBurstLimit = propcheck.Or(p.UnsubscribeThrottlingBurstLimit, DefaultUnsubscribeThrottlingBurstLimit)
	p.SuppressionListId = propcheck.Or(p.SuppressionListId, tk.DefaultSuppressionList)
	p.MaxCampaignsPerDay = jsii.Number(propcheck.Number(p.MaxCampaignsPerDay, DefaultMaxCampaignsPerDay))
	p.MaxSendsPerDay = jsii.Number(propcheck.Number(p.MaxSendsPerDay, DefaultMaxSendsPerDay))
	p.MaxRecipientsPerCampaign = jsii.Number(propcheck.Number(p.MaxRecipientsPerCampaign, min(DefaultMaxRecipientsPerCampaign, *p.MaxSendsPerDay)))
	p.WafRateLimitPerIp = propcheck.Or(p.WafRateLimitPerIp, DefaultWafRateLimitPerIp)
	p.WafRateLimitPerToken = propcheck.Or(p.WafRateLimitPerToken, DefaultWafRateLimitPerToken)
	if p.LiveProgress == nil {
		p.LiveProgress = jsii.Bool(true)
	}
	if p.CloudWatchRole == nil {
		p.CloudWatchRole = jsii.Bool(true)
	}
	return p
}
