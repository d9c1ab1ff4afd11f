// Package campaignenv names the scheduled campaigns' own environment
// variables, beside their code; the core's are in internal/core/envvars.
// Importing it registers them there (envvars.Register), so the synth
// tests know them.
package campaignenv

import "github.com/unschedule/unschedule/internal/core/envvars"

// The variables, one line each: who sets it, and what it carries.
const (
	// AllowedOrigins lists the web origins the campaign API allows (CORS), comma-separated.
	AllowedOrigins = "ALLOWED_ORIGINS"
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
	// UserPoolID is the user pool whose users own campaigns: the sender check reads them (campaigns).
	UserPoolID = "USER_POOL_ID"
	// AllowedEmailDomains lists the email domains a campaign sender's current address must be in, comma-separated; empty: all (campaigns; the to-do app's sign-up reads the same name).
	AllowedEmailDomains = "ALLOWED_EMAIL_DOMAINS"
	// SuppressionList is the id of the campaigns' suppression list, the partition its entries live in (campaigns).
	SuppressionList = "SUPPRESSION_LIST"
	// MaxCampaignsPerDay is how many campaigns one sender may create per UTC day (campaigns).
	MaxCampaignsPerDay = "MAX_CAMPAIGNS_PER_DAY"
	// MaxCampaignSendsPerDay is how many sends one sender's campaigns may schedule per UTC day (campaigns).
	MaxCampaignSendsPerDay = "MAX_CAMPAIGN_SENDS_PER_DAY"
	// MaxRecipientsPerCampaign is how many recipients one campaign may have (campaigns).
	MaxRecipientsPerCampaign = "MAX_RECIPIENTS_PER_CAMPAIGN"
	// CampaignEventsHTTP is the AppSync Events API's HTTP DNS name, where progress is published (campaigns).
	CampaignEventsHTTP = "CAMPAIGN_EVENTS_HTTP"
	// FunctionName is set by Lambda itself, not by a construct: the function's own name (the campaign provisioner re-invokes itself).
	FunctionName = "AWS_LAMBDA_FUNCTION_NAME"
)

// All lists every name above.
var All = []string{
	AllowedOrigins, CampaignTable, SendFunctionArn, ProvisionFunctionArn, SenderAddress, SESConfigurationSet, SchedulerCallsPerSecond, ProvisionMarginSec,
	UnsubscribeSecretArn, UnsubscribeURL, SenderGroup, UserPoolID, AllowedEmailDomains, SuppressionList, MaxCampaignsPerDay, MaxCampaignSendsPerDay, MaxRecipientsPerCampaign, CampaignEventsHTTP, FunctionName,
}

func init() { envvars.Register(All...) }
