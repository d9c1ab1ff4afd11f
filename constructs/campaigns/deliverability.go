package campaigns

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsses"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/asyncinvoke"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/constructs/internal/restapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
)

// SES reputation: AWS places an account under review at a bounce rate
// of 5% and a complaint rate of 0.1%, and may pause its sending at 10%
// and 0.5% ("Reputation metrics messages", Amazon SES Developer Guide):
// https://docs.aws.amazon.com/ses/latest/dg/reputationdashboard-messages.html
// The alarms fire below the review rates, while there is time to act.
// The metrics are ratios (0.05 is 5%).
const (
	SesReviewBounceRate    = 0.05
	SesReviewComplaintRate = 0.001
	// BounceRateAlarmThreshold and ComplaintRateAlarmThreshold: the
	// account's AWS/SES Reputation.BounceRate and Reputation.ComplaintRate
	// alarms fire at or above these.
	BounceRateAlarmThreshold    = 0.04
	ComplaintRateAlarmThreshold = 0.0008
	// UnsubscribePath is the public one-click unsubscribe route (no
	// authorizer: RFC 8058 requires none) of the unsubscribe API, and of
	// the campaign API for the links of emails sent before that API.
	UnsubscribePath = "unsubscribe"
	// UnsubscribeSecretLength is the generated secret's length (letters
	// and digits), above unsubscribe.MinSecretBytes.
	UnsubscribeSecretLength = 64
	BounceTimeoutSec        = 30
	// apiStageName is API Gateway's default stage, which both APIs keep.
	apiStageName          = "prod"
	UnsubscribeTimeoutSec = 10
)

// Deliverability is what the construct builds so that mailbox providers
// and SES accept its mail: the configuration set and its bounce and
// complaint events, the suppression list's function, one-click
// unsubscribe, the reputation alarms and (SenderDomain) the DKIM
// identity.
type Deliverability struct {
	// ConfigurationSet is every campaign email's SES configuration set:
	// the one the construct created, or SesConfigurationSet's.
	ConfigurationSet awsses.IConfigurationSet
	// EventDestination publishes the set's bounces and complaints to
	// BounceTopic, which invokes Bounce (the suppression list).
	EventDestination awsses.ConfigurationSetEventDestination
	BounceTopic      awssns.Topic
	// BounceTopicKey encrypts BounceTopic (its messages hold recipients'
	// addresses); SES may use it for that topic only.
	BounceTopicKey awskms.Key
	Bounce         *gofn.Function
	BounceAsync    AsyncFailures
	// BounceDeliveryDLQ holds the events SNS could not hand to Bounce
	// after its retries (the subscription's redrive policy), alarmed by
	// BounceDeliveryDLQAlarm: a hard bounce or complaint that never
	// reached the suppression list.
	BounceDeliveryDLQ      awssqs.Queue
	BounceDeliveryDLQAlarm awscloudwatch.Alarm
	// Unsubscribe serves UnsubscribeUrl (GET: a page, POST: one-click);
	// UnsubscribeSecret signs its tokens (read only by Send and
	// Unsubscribe).
	Unsubscribe       *gofn.Function
	UnsubscribeSecret awssecretsmanager.Secret
	// UnsubscribeApi is the public REST API of UnsubscribeUrl, apart from
	// the campaign API so that each has its own throttle
	// (UnsubscribeThrottlingRateLimit); UnsubscribeUrl is its
	// /unsubscribe. The campaign API keeps /unsubscribe for the links of
	// emails sent before, throttled per method with the same limits.
	UnsubscribeApi awsapigateway.RestApi
	UnsubscribeUrl *string
	// EmailIdentity is the SenderDomain identity with Easy DKIM (nil
	// without SenderDomain).
	EmailIdentity awsses.EmailIdentity
	// The alarms: the account's reputation, and the new functions' errors.
	BounceRateAlarm, ComplaintRateAlarm       awscloudwatch.Alarm
	BounceErrorsAlarm, UnsubscribeErrorsAlarm awscloudwatch.Alarm
	// UnsubscribeApi5xxAlarm fires on the unsubscribe stage's 5XXError:
	// the function answers 503 when the suppression list refuses the
	// write (no Lambda error), and that unsubscribe is not recorded.
	UnsubscribeApi5xxAlarm awscloudwatch.Alarm
}

// deliverabilityDefaults: SenderDomain defaults to the zone's name, and
// the identity the send function may use to the domain it creates.
func deliverabilityDefaults(p *CampaignsProps) {
	if p.SenderDomain == "" && p.SenderHostedZone != nil {
		p.SenderDomain = *p.SenderHostedZone.ZoneName()
	}
	if p.SenderIdentity == "" {
		p.SenderIdentity = p.SenderDomain
	}
}

// validateDeliverability checks the SES props (tokens are skipped).
func validateDeliverability(id string, p CampaignsProps) {
	if p.SenderDomain != "" && !unresolved(p.SenderDomain) && !unresolved(p.SenderAddress) {
		domain := p.SenderAddress[strings.LastIndex(p.SenderAddress, "@")+1:]
		if !strings.EqualFold(domain, p.SenderDomain) {
			panic(fmt.Sprintf("%s: SenderDomain %q is not the domain of SenderAddress %q: set it to %q, or leave it empty to verify the identity yourself",
				id, p.SenderDomain, p.SenderAddress, domain))
		}
		if p.SenderHostedZone != nil && !unresolved(*p.SenderHostedZone.ZoneName()) &&
			!strings.EqualFold(strings.TrimSuffix(*p.SenderHostedZone.ZoneName(), "."), p.SenderDomain) {
			panic(fmt.Sprintf("%s: SenderHostedZone %q does not hold SenderDomain %q: pass the zone named %q, or leave SenderDomain empty",
				id, *p.SenderHostedZone.ZoneName(), p.SenderDomain, p.SenderDomain))
		}
	}
	if p.MailFromDomain != "" && !unresolved(p.MailFromDomain) {
		if p.SenderDomain == "" {
			panic(fmt.Sprintf("%s: MailFromDomain %q needs SenderDomain: the construct sets MAIL FROM only on the identity it creates", id, p.MailFromDomain))
		}
		if !unresolved(p.SenderDomain) && !strings.HasSuffix(strings.ToLower(p.MailFromDomain), "."+strings.ToLower(p.SenderDomain)) {
			panic(fmt.Sprintf("%s: MailFromDomain %q must be a subdomain of SenderDomain %q, such as \"bounce.%s\"", id, p.MailFromDomain, p.SenderDomain, p.SenderDomain))
		}
	}
}

// configurationSet builds or imports the configuration set (before the
// send function, whose environment and grant name it).
func (x *Campaigns) configurationSet(p *CampaignsProps) {
	d := &x.Deliverability
	if p.SesConfigurationSet != "" {
		d.ConfigurationSet = awsses.ConfigurationSet_FromConfigurationSetName(x.Construct, jsii.String("ConfigurationSet"), jsii.String(p.SesConfigurationSet))
	} else {
		set := awsses.NewConfigurationSet(x.Construct, jsii.String("ConfigurationSet"), &awsses.ConfigurationSetProps{ReputationMetrics: jsii.Bool(true)})
		d.ConfigurationSet = set
		p.SesConfigurationSet = *set.ConfigurationSetName()
	}
}

// deliverability builds the rest, once the functions and the API exist.
func (x *Campaigns) deliverability(p CampaignsProps, fn functionMaker) {
	d := &x.Deliverability
	c := x.Construct
	removal := p.RemovalPolicy

	// Bounces and complaints: set → topic → function → suppression list.
	d.BounceTopicKey, d.BounceTopic = x.bounceTopic(removal)
	d.EventDestination = awsses.NewConfigurationSetEventDestination(c, jsii.String("BounceEvents"), &awsses.ConfigurationSetEventDestinationProps{
		ConfigurationSet: d.ConfigurationSet, Destination: awsses.EventDestination_SnsTopic(d.BounceTopic),
		Events: &[]awsses.EmailSendingEvent{awsses.EmailSendingEvent_BOUNCE, awsses.EmailSendingEvent_COMPLAINT},
	})
	// The bounce and unsubscribe functions write the suppression list's
	// partition only (SUPPRESSION_LIST; the LeadingKeys condition).
	list := map[string]string{campaignenv.SuppressionList: p.SuppressionListId}
	listPartition := []string{tk.SuppressPK(p.SuppressionListId)}
	d.Bounce = fn("Bounce", "lambdas/campaignbounce", "Adds hard-bounced and complaining addresses to the campaign suppression list", BounceTimeoutSec, list)
	// SNS retries a delivery to Lambda that fails, then drops it unless
	// the subscription has a dead-letter queue:
	// https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html
	dlqProps := resource.DeadLetterQueueProps(removal)
	d.BounceDeliveryDLQ = awssqs.NewQueue(c, jsii.String("BounceDeliveryDLQ"), &dlqProps)
	d.BounceTopic.AddSubscription(awssnssubscriptions.NewLambdaSubscription(d.Bounce.Function,
		&awssnssubscriptions.LambdaSubscriptionProps{DeadLetterQueue: d.BounceDeliveryDLQ}))
	nag.Suppress(d.BounceDeliveryDLQ, nag.Rule{ID: "AwsSolutions-SQS3",
		Reason: "This queue is the bounce topic subscription's dead-letter queue, alarmed when not empty; a DLQ of a DLQ adds nothing"})
	d.BounceDeliveryDLQAlarm = alarms.QueueNotEmpty(c, "BounceDeliveryDLQAlarm", d.BounceDeliveryDLQ,
		"SNS could not deliver SES bounce or complaint events to the campaign bounce function: those addresses are not suppressed. "+
			"Check the function, then send the messages of the queue to the function again.", p.AlarmTopic)
	grants.TablePartitions(x.Table, d.Bounce.Function, listPartition, "dynamodb:PutItem")
	cfg := asyncinvoke.Configure(c, "Bounce", d.Bounce.Function, asyncinvoke.Props{Name: "campaign bounce", MaxEventAgeSec: DefaultAsyncMaxEventAgeSec,
		RetryAttempts: DefaultAsyncRetryAttempts, AlarmTopic: p.AlarmTopic, RemovalPolicy: removal,
		Remedy: "Those bounces or complaints did not reach the suppression list: read the SES event in each record's requestPayload and " +
			"invoke the bounce function with it again (adding is idempotent)."})
	d.BounceAsync = AsyncFailures{Queue: cfg.Queue, FailureAlarm: cfg.FailureAlarm, DroppedAlarm: cfg.DroppedAlarm, DeliveryFailureAlarm: cfg.DeliveryFailureAlarm}

	// One-click unsubscribe: a generated secret, the public route.
	d.UnsubscribeSecret = awssecretsmanager.NewSecret(c, jsii.String("UnsubscribeSecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("Signs the campaign emails' one-click unsubscribe tokens (HMAC-SHA256)"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{PasswordLength: jsii.Number(UnsubscribeSecretLength),
			ExcludePunctuation: jsii.Bool(true), IncludeSpace: jsii.Bool(false)},
		RemovalPolicy: removal,
	})
	d.Unsubscribe = fn("Unsubscribe", "lambdas/campaignunsubscribe", "Public one-click unsubscribe of campaign emails (RFC 8058)", UnsubscribeTimeoutSec,
		map[string]string{campaignenv.UnsubscribeSecretArn: *d.UnsubscribeSecret.SecretArn()}, list)
	grants.TablePartitions(x.Table, d.Unsubscribe.Function, listPartition, "dynamodb:PutItem")
	x.unsubscribeApi(p)
	// The campaign API's /unsubscribe stays for the links of the emails
	// sent before the unsubscribe API: throttled per method (api()).
	publicRoute(x.RestApi, d.Unsubscribe)
	// Built from the API's id and the stage's name, not UrlForPath or the
	// stage's Ref: the unsubscribe stage waits for the campaign stage
	// (unsubscribeApi), whose deployment depends on the API function,
	// which depends (through provisioning's environment) on the send
	// function that needs this URL: a cycle.
	stack := awscdk.Stack_Of(c)
	d.UnsubscribeUrl = jsii.String(fmt.Sprintf("https://%s.execute-api.%s.%s/%s/%s", *d.UnsubscribeApi.RestApiId(), *stack.Region(), *stack.UrlSuffix(),
		apiStageName, UnsubscribePath))

	// Send: the suppression list, the link, the secret.
	x.Send.Function.AddEnvironment(jsii.String(campaignenv.SuppressionList), jsii.String(p.SuppressionListId), nil)
	x.Send.Function.AddEnvironment(jsii.String(campaignenv.UnsubscribeURL), d.UnsubscribeUrl, nil)
	x.Send.Function.AddEnvironment(jsii.String(campaignenv.UnsubscribeSecretArn), d.UnsubscribeSecret.SecretArn(), nil)
	for _, f := range []*gofn.Function{x.Send, d.Unsubscribe} {
		f.Function.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("secretsmanager:GetSecretValue"), Resources: jsii.Strings(*d.UnsubscribeSecret.SecretArn())}))
	}
	nag.Suppress(d.UnsubscribeSecret, nag.Rule{ID: "AwsSolutions-SMG4",
		Reason: "An HMAC key for unsubscribe links: rotating it would break the links of every email already sent"})

	// Authenticated mail: the domain identity with Easy DKIM.
	if p.SenderDomain != "" {
		identity := awsses.Identity_Domain(jsii.String(p.SenderDomain))
		if p.SenderHostedZone != nil {
			identity = awsses.Identity_PublicHostedZone(p.SenderHostedZone)
		}
		ip := &awsses.EmailIdentityProps{Identity: identity, ConfigurationSet: d.ConfigurationSet, DkimSigning: jsii.Bool(true),
			DkimIdentity: awsses.DkimIdentity_EasyDkim(awsses.EasyDkimSigningKeyLength_RSA_2048_BIT)}
		if p.MailFromDomain != "" {
			ip.MailFromDomain = jsii.String(p.MailFromDomain)
		}
		d.EmailIdentity = awsses.NewEmailIdentity(c, jsii.String("EmailIdentity"), ip)
	}

	// Alarms: the account's reputation, the new functions' errors.
	rate := func(name string) awscloudwatch.Metric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String("AWS/SES"), MetricName: jsii.String(name),
			Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Hours(jsii.Number(1))})
	}
	d.BounceRateAlarm = alarms.AtLeast(c, "BounceRateAlarm", fmt.Sprintf("The SES account's bounce rate reached %.0f%% (AWS reviews the account at %.0f%%). "+
		"Hard bounces are suppressed automatically; find the list that brought the invalid addresses.", BounceRateAlarmThreshold*100, SesReviewBounceRate*100),
		rate("Reputation.BounceRate"), BounceRateAlarmThreshold, p.AlarmTopic)
	d.ComplaintRateAlarm = alarms.AtLeast(c, "ComplaintRateAlarm", fmt.Sprintf("The SES account's complaint rate reached %.2f%% (AWS reviews the account at %.1f%%). "+
		"Complainers are suppressed automatically; check that recipients asked for this mail.", ComplaintRateAlarmThreshold*100, SesReviewComplaintRate*100),
		rate("Reputation.ComplaintRate"), ComplaintRateAlarmThreshold, p.AlarmTopic)
	sum := &awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5))}
	d.BounceErrorsAlarm = alarms.AtLeast(c, "BounceErrorsAlarm", "The campaign bounce function failed invocations (Lambda Errors): "+
		"bounces or complaints may be missing from the suppression list until the retries succeed. Check its logs.",
		d.Bounce.Function.MetricErrors(sum), 1, p.AlarmTopic)
	d.UnsubscribeErrorsAlarm = alarms.AtLeast(c, "UnsubscribeErrorsAlarm", "The campaign unsubscribe function failed invocations (Lambda Errors). Check its logs.",
		d.Unsubscribe.Function.MetricErrors(sum), 1, p.AlarmTopic)
	d.UnsubscribeApi5xxAlarm = alarms.AtLeast(c, "UnsubscribeApi5xxAlarm", "The campaign unsubscribe API answered 5xx: those unsubscribes "+
		"were not recorded (the suppression list refused the write, or the secret could not be read). Check the unsubscribe function's logs.",
		d.UnsubscribeApi.DeploymentStage().MetricServerError(sum), 1, p.AlarmTopic)
}

// bounceTopic is the topic SES publishes bounces and complaints to,
// encrypted with a customer-managed key that SES may use for this topic
// only: a service publishing to an encrypted topic needs
// kms:GenerateDataKey* and kms:Decrypt in the key's policy (an AWS
// managed key's policy cannot admit it), and SNS calls KMS with the
// encryption context aws:sns:topicArn, which the policy requires:
// https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
// https://docs.aws.amazon.com/ses/latest/dg/receiving-email-action-sns.html (the same rule for SES's other topics)
// The key cannot name the topic's Ref (the topic names the key: a
// cycle), so the topic has a fixed name built from the construct's path,
// and the policy builds its ARN, as the alarm topic's key does
// (docs/decisions/alarm-topic-key.md).
func (x *Campaigns) bounceTopic(removal awscdk.RemovalPolicy) (awskms.Key, awssns.Topic) {
	c := x.Construct
	stack := awscdk.Stack_Of(c)
	name := *awscdk.Names_UniqueResourceName(c, &awscdk.UniqueResourceNameOptions{MaxLength: jsii.Number(200), Separator: jsii.String("-")}) + "-bounces"
	arn := stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("sns"), Resource: jsii.String(name)})
	key := awskms.NewKey(c, jsii.String("BounceTopicKey"), &awskms.KeyProps{
		Description:       jsii.String("Encrypts the campaign bounce and complaint topic; SES may use it for that topic only"),
		EnableKeyRotation: jsii.Bool(true), RemovalPolicy: removal,
	})
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("SesPublishesToTheBounceTopic"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("ses.amazonaws.com"), nil)},
		Actions:    jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"),
		Resources:  jsii.Strings("*"), // in a key policy, "*" is this key
		Conditions: &map[string]any{"StringEquals": map[string]any{"kms:EncryptionContext:aws:sns:topicArn": arn}},
	}), nil)
	topic := awssns.NewTopic(c, jsii.String("BounceTopic"), &awssns.TopicProps{TopicName: jsii.String(name),
		DisplayName: jsii.String("Campaign email bounces and complaints"), EnforceSSL: jsii.Bool(true), MasterKey: key})
	topic.ApplyRemovalPolicy(removal)
	return key, topic
}

// unsubscribeApi builds the public unsubscribe API: GET and POST
// /unsubscribe, no authorizer, a stage of its own. API Gateway applies a
// stage's throttle to the stage's methods and a method's settings over
// them; every API of the account and region also shares the account's
// limit (10,000 requests per second by default):
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html
// Its own API means its own stage, limits and web ACL (none: a per-IP
// rule would refuse the mailbox providers that POST the one-clicks of
// many users from a few addresses). Its stage waits for the campaign
// stage, which waits for the account's API Gateway logging role
// (CloudWatchRole), which its ERROR logging needs too.
func (x *Campaigns) unsubscribeApi(p CampaignsProps) {
	d := &x.Deliverability
	logs := p.Logs.NewLogGroup(x.Construct, "UnsubscribeAccessLogs")
	stage := &awsapigateway.StageOptions{StageName: jsii.String(apiStageName),
		ThrottlingRateLimit: jsii.Number(p.UnsubscribeThrottlingRateLimit), ThrottlingBurstLimit: jsii.Number(p.UnsubscribeThrottlingBurstLimit),
		MetricsEnabled: jsii.Bool(true), LoggingLevel: awsapigateway.MethodLoggingLevel_ERROR,
	}
	restapi.AccessLogs(stage, logs)
	d.UnsubscribeApi = awsapigateway.NewRestApi(x.Construct, jsii.String("UnsubscribeApi"), &awsapigateway.RestApiProps{
		Description:    jsii.String("Public one-click unsubscribe of campaign emails (RFC 8058)"),
		CloudWatchRole: jsii.Bool(false),
		EndpointTypes:  &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		DeployOptions:  stage,
	})
	d.UnsubscribeApi.DeploymentStage().Node().AddDependency(x.RestApi.DeploymentStage())
	publicRoute(d.UnsubscribeApi, d.Unsubscribe)
	nag.Suppress(d.UnsubscribeApi,
		nag.Rule{ID: "AwsSolutions-APIG2", Reason: "The handler checks the one input, the signed token, and answers a 400 that names it"},
		nag.Rule{ID: "AwsSolutions-APIG3", Reason: "No web ACL: a per-IP rate rule would refuse mailbox providers, which POST the one-clicks of many " +
			"users from a few addresses; the stage is throttled on its own and every token is HMAC-checked"})
}

// publicRoute adds GET and POST /unsubscribe to api, without an
// authorizer, served by fn.
func publicRoute(api awsapigateway.RestApi, fn *gofn.Function) {
	route := api.Root().AddResource(jsii.String(UnsubscribePath), nil)
	integration := awsapigateway.NewLambdaIntegration(fn.Function, nil)
	public := &awsapigateway.MethodOptions{AuthorizationType: awsapigateway.AuthorizationType_NONE}
	why := "RFC 8058 one-click unsubscribe: mail clients POST without credentials; the HMAC-signed token in the URL is the authority"
	for _, m := range []string{"GET", "POST"} {
		nag.Suppress(route.AddMethod(jsii.String(m), integration, public),
			nag.Rule{ID: "AwsSolutions-APIG4", Reason: why}, nag.Rule{ID: "AwsSolutions-COG4", Reason: why})
	}
}

// alarms are the alarms above, in a fixed order.
func (d *Deliverability) alarms() []awscloudwatch.Alarm {
	a := d.BounceAsync
	return []awscloudwatch.Alarm{a.FailureAlarm, a.DroppedAlarm, a.DeliveryFailureAlarm, d.BounceDeliveryDLQAlarm,
		d.BounceRateAlarm, d.ComplaintRateAlarm, d.BounceErrorsAlarm, d.UnsubscribeErrorsAlarm, d.UnsubscribeApi5xxAlarm}
}
