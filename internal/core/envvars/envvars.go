// Package envvars names every environment variable that a construct sets
// on a function and a function's main reads, in one place, so the two
// sides cannot drift apart. It imports only the standard library:
// constructs (the CDK app) and Lambda mains both use it.
package envvars

import (
	"sort"

	"github.com/unschedule/unschedule/contract"
)

// The variables, one line each: who sets it, and what it carries.
const (
	// MetricsStack is the stack's name, the Stack dimension of every metric (every function; internal/core/metrics).
	MetricsStack = "METRICS_STACK"
	// ItemSchema is the table's item schema as JSON (contract.EnvVar; scheduleonwrite, cancellation, reconciler).
	ItemSchema = contract.EnvVar
	// TimerKind is the timer the cancel worker drives (internal/core/timerspec; scheduleonwrite).
	TimerKind = "UNSCHEDULE_TIMER"
	// Table is the task table's (or the adopter's item table's) name.
	Table = "TABLE_NAME"
	// AllowedOrigins lists the web origins CORS allows, comma-separated (task API and campaign API).
	AllowedOrigins = "ALLOWED_ORIGINS"
	// MaxPendingTasksPerUser caps each user's Pending tasks (taskapi).
	MaxPendingTasksPerUser = "MAX_PENDING_TASKS_PER_USER"
	// WebURL is the web app's URL, linked from notification emails (expiry, reconciler).
	WebURL = "WEB_URL"
	// TopicArnPrefix is the notification topics' ARN without the shard number (notifications).
	TopicArnPrefix = "TOPIC_ARN_PREFIX"
	// TopicShards is how many notification topics there are (notifications).
	TopicShards = "TOPIC_SHARDS"
	// ScheduleGroup is the EventBridge Scheduler schedule group (scheduleonwrite, campaigns).
	ScheduleGroup = "SCHEDULE_GROUP"
	// ExpiryFunctionArn is the function every task schedule invokes (scheduleonwrite).
	ExpiryFunctionArn = "EXPIRY_FUNCTION_ARN"
	// SchedulerRoleArn is the role schedules run as (scheduleonwrite, campaigns).
	SchedulerRoleArn = "SCHEDULER_ROLE_ARN"
	// SchedulerDLQArn is the schedules' dead-letter queue (scheduleonwrite, campaigns).
	SchedulerDLQArn = "SCHEDULER_DLQ_ARN"
	// ScheduleRetries is a schedule's retry attempts (scheduleonwrite).
	ScheduleRetries = "SCHEDULE_RETRIES"
	// ScheduleMaxEventAge is a schedule's maximum event age in seconds (scheduleonwrite).
	ScheduleMaxEventAge = "SCHEDULE_MAX_EVENT_AGE"
	// QueueURL is the cancellation FIFO queue the stream processor sends to (cancellation).
	QueueURL = "QUEUE_URL"
	// TargetFunctionArn is the adopter's target the expiry function invokes instead of notifying (scheduleonwrite).
	TargetFunctionArn = "TARGET_FUNCTION_ARN"
	// FireLeaseSeconds is how long an expiry attempt holds the right to run the target (scheduleonwrite).
	FireLeaseSeconds = "FIRE_LEASE_SECONDS"
	// TTLAttribute is the table's TTL attribute, for the TTL timer (scheduleonwrite).
	TTLAttribute = "TTL_ATTRIBUTE"
	// MaxLatenessSeconds is the TTL watch's MaxLateness in seconds (scheduleonwrite).
	MaxLatenessSeconds = "MAX_LATENESS_SECONDS"
	// StateMachineArn is the Step Functions timer's state machine (scheduleonwrite).
	StateMachineArn = "STATE_MACHINE_ARN"
	// GraceSec is how long past due the reconciler leaves a task to its schedule (reconciler).
	GraceSec = "GRACE_SEC"
	// BudgetSec is a reconciler run's time budget (reconciler).
	BudgetSec = "BUDGET_SEC"
	// ItemView is how the reconciler lists the armed items: "scan" (the
	// default, any schema) or "todo" (the to-do table's pending index).
	ItemView = "RECONCILE_ITEM_VIEW"
	// RatePerSec is the reconciler's scheduler calls per second (reconciler).
	RatePerSec = "RATE_PER_SEC"
	// AllowedEmailDomains lists the email domains that may sign up, comma-separated; empty: all (userauth; also cmd/dev).
	AllowedEmailDomains = "ALLOWED_EMAIL_DOMAINS"
	// VerifyEmailByCode is true when PreSignUp must leave email verification to Cognito's code (userauth).
	VerifyEmailByCode = "VERIFY_EMAIL_BY_CODE"
	// CampaignTable is the campaign table's name (campaigns).
	CampaignTable = "CAMPAIGN_TABLE"
	// SendFunctionArn is the function campaign schedules invoke (campaigns).
	SendFunctionArn = "SEND_FUNCTION_ARN"
	// ProvisionFunctionArn is the function the campaign API starts provisioning with (campaigns).
	ProvisionFunctionArn = "PROVISION_FUNCTION_ARN"
	// SenderAddress is the campaign emails' From address (campaigns).
	SenderAddress = "SENDER_ADDRESS"
	// SESConfigurationSet is the SES configuration set campaign emails use, optional (campaigns).
	SESConfigurationSet = "SES_CONFIGURATION_SET"
	// SchedulerCallsPerSecond caps the campaign functions' scheduler calls (campaigns).
	SchedulerCallsPerSecond = "SCHEDULER_CALLS_PER_SECOND"
	// ProvisionMarginSec is how long before its timeout provisioning hands over to a fresh invocation (campaigns).
	ProvisionMarginSec = "PROVISION_MARGIN_SEC"
	// UnsubscribeSecretArn is the Secrets Manager secret that signs unsubscribe tokens (campaigns).
	UnsubscribeSecretArn = "UNSUBSCRIBE_SECRET_ARN"
	// UnsubscribeURL is the public one-click unsubscribe endpoint campaign emails link (campaigns).
	UnsubscribeURL = "UNSUBSCRIBE_URL"
	// SenderGroup is the user pool group whose members may send campaigns (campaigns).
	SenderGroup = "SENDER_GROUP"
	// MaxCampaignsPerDay is how many campaigns one sender may create per UTC day (campaigns).
	MaxCampaignsPerDay = "MAX_CAMPAIGNS_PER_DAY"
	// MaxCampaignSendsPerDay is how many sends one sender's campaigns may schedule per UTC day (campaigns).
	MaxCampaignSendsPerDay = "MAX_CAMPAIGN_SENDS_PER_DAY"
	// MaxRecipientsPerCampaign is how many recipients one campaign may have (campaigns).
	MaxRecipientsPerCampaign = "MAX_RECIPIENTS_PER_CAMPAIGN"
	// CampaignEventsHTTP is the AppSync Events API's HTTP DNS name, where progress is published (campaigns).
	CampaignEventsHTTP = "CAMPAIGN_EVENTS_HTTP"
	// TargetFunctionArns lists the future-event handler's target functions, comma-separated (futureevents).
	TargetFunctionArns = "TARGET_FUNCTION_ARNS"
	// FutureEventsTable is the future-events table, for an adopter's function (futureevents.ConfigureClient; futureevents/client).
	FutureEventsTable = "FUTURE_EVENTS_TABLE_NAME"
	// JobQueueURL is the deferred-jobs queue the dispatcher sends to (internal/deferredjobs/jobdispatch).
	JobQueueURL = "JOB_QUEUE_URL"
	// DeferredJobsTable is the deferred-jobs items table, for an adopter's writer (deferredjobs/job; deferredjobs/writer).
	DeferredJobsTable = "DEFERRED_JOBS_TABLE"
	// DeferredJobsWeekly is the deferred-jobs weekly run time, for an adopter's writer (deferredjobs/job; deferredjobs/writer).
	DeferredJobsWeekly = "DEFERRED_JOBS_WEEKLY"
	// FunctionName is set by Lambda itself, not by a construct: the function's own name (the campaign provisioner re-invokes itself).
	FunctionName = "AWS_LAMBDA_FUNCTION_NAME"
)

// All lists every name above: what a construct may set on a function.
var All = []string{
	MetricsStack, ItemSchema, TimerKind, Table, AllowedOrigins, MaxPendingTasksPerUser, WebURL,
	TopicArnPrefix, TopicShards, ScheduleGroup, ExpiryFunctionArn, SchedulerRoleArn, SchedulerDLQArn,
	ScheduleRetries, ScheduleMaxEventAge, QueueURL, TargetFunctionArn, FireLeaseSeconds, TTLAttribute,
	MaxLatenessSeconds, StateMachineArn, GraceSec, BudgetSec, ItemView, RatePerSec, AllowedEmailDomains, VerifyEmailByCode,
	CampaignTable, SendFunctionArn, ProvisionFunctionArn, SenderAddress, SESConfigurationSet, UnsubscribeSecretArn, UnsubscribeURL,
	SchedulerCallsPerSecond, ProvisionMarginSec, SenderGroup, MaxCampaignsPerDay, MaxCampaignSendsPerDay, MaxRecipientsPerCampaign, CampaignEventsHTTP, TargetFunctionArns,
	FutureEventsTable, JobQueueURL, DeferredJobsTable, DeferredJobsWeekly, FunctionName,
}

// Known reports whether name is one of All.
func Known(name string) bool {
	for _, n := range All {
		if n == name {
			return true
		}
	}
	return false
}

// Unknown returns the sorted "function: variable" pairs of a synthesized
// CloudFormation template whose variable is not one of All, for the
// synth tests: a construct that sets a name from nowhere fails them. Only
// this library's functions count (constructs/gofn gives every one
// MetricsStack); the CDK's own (a BucketDeployment's handler) set theirs.
func Unknown(template map[string]any) []string {
	var out []string
	resources, _ := template["Resources"].(map[string]any)
	for id, r := range resources {
		r, _ := r.(map[string]any)
		if r["Type"] != "AWS::Lambda::Function" {
			continue
		}
		props, _ := r["Properties"].(map[string]any)
		env, _ := props["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		if _, ours := vars[MetricsStack]; !ours {
			continue
		}
		for name := range vars {
			if !Known(name) {
				out = append(out, id+": "+name)
			}
		}
	}
	sort.Strings(out)
	return out
}
