package campaign

// Environment variables constructs/campaigns sets on the campaign
// functions (internal/campaign/campaignlambda reads them).
const (
	EnvTable             = "CAMPAIGN_TABLE"
	EnvScheduleGroup     = "SCHEDULE_GROUP"
	EnvSendFunction      = "SEND_FUNCTION_ARN"
	EnvSchedulerRole     = "SCHEDULER_ROLE_ARN"
	EnvSchedulerDLQ      = "SCHEDULER_DLQ_ARN"
	EnvProvisionFunction = "PROVISION_FUNCTION_ARN"
	EnvSender            = "SENDER_ADDRESS"
	EnvConfigurationSet  = "SES_CONFIGURATION_SET"
	EnvCallsPerSecond    = "SCHEDULER_CALLS_PER_SECOND"
	EnvMarginSec         = "PROVISION_MARGIN_SEC"
	EnvOrigins           = "WEB_ORIGINS"
	// EnvSenderGroup is the user pool group whose members may send
	// campaigns (the API function refuses everyone else).
	EnvSenderGroup = "SENDER_GROUP"
	// EnvEventsHTTP is the AWS AppSync Events API's HTTP DNS name, where
	// the progress function publishes (https://<it>/event).
	EnvEventsHTTP = "CAMPAIGN_EVENTS_HTTP"
	// EnvSelf is set by Lambda: the function's own name (the provisioning
	// function re-invokes itself by it).
	EnvSelf = "AWS_LAMBDA_FUNCTION_NAME"
)

// DefaultSenderGroup is the sender group's name unless the construct's
// SenderGroup prop names another.
const DefaultSenderGroup = "campaign-senders"
