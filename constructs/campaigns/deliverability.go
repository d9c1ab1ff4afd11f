package campaigns

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
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
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
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
	// UnsubscribePath is the public one-click unsubscribe route of the
	// REST API (no authorizer: RFC 8058 requires none).
	UnsubscribePath = "unsubscribe"
	// UnsubscribeSecretLength is the generated secret's length (letters
	// and digits), above unsubscribe.MinSecretBytes.
	UnsubscribeSecretLength = 64
	BounceTimeoutSec        = 30
	// apiStageName is API Gateway's default stage, which api() keeps.
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
	Bounce           *gofn.Function
	BounceAsync      AsyncFailures
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
	UnsubscribeUrl    *string
	// EmailIdentity is the SenderDomain identity with Easy DKIM (nil
	// without SenderDomain).
	EmailIdentity awsses.EmailIdentity
	// The alarms: the account's reputation, and the new functions' errors.
	BounceRateAlarm, ComplaintRateAlarm       awscloudwatch.Alarm
	BounceErrorsAlarm, UnsubscribeErrorsAlarm awscloudwatch.Alarm
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
	d.BounceTopic = awssns.NewTopic(c, jsii.String("BounceTopic"), &awssns.TopicProps{
		DisplayName: jsii.String("Campaign email bounces and complaints"), EnforceSSL: jsii.Bool(true)})
	d.BounceTopic.ApplyRemovalPolicy(removal)
	d.EventDestination = awsses.NewConfigurationSetEventDestination(c, jsii.String("BounceEvents"), &awsses.ConfigurationSetEventDestinationProps{
		ConfigurationSet: d.ConfigurationSet, Destination: awsses.EventDestination_SnsTopic(d.BounceTopic),
		Events: &[]awsses.EmailSendingEvent{awsses.EmailSendingEvent_BOUNCE, awsses.EmailSendingEvent_COMPLAINT},
	})
	d.Bounce = fn("Bounce", "lambdas/campaignbounce", "Adds hard-bounced and complaining addresses to the campaign suppression list", BounceTimeoutSec)
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
	grants.Table(x.Table, d.Bounce.Function, "dynamodb:PutItem")
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
		map[string]string{campaignenv.UnsubscribeSecretArn: *d.UnsubscribeSecret.SecretArn()})
	grants.Table(x.Table, d.Unsubscribe.Function, "dynamodb:PutItem")
	route := x.RestApi.Root().AddResource(jsii.String(UnsubscribePath), nil)
	integration := awsapigateway.NewLambdaIntegration(d.Unsubscribe.Function, nil)
	public := &awsapigateway.MethodOptions{AuthorizationType: awsapigateway.AuthorizationType_NONE}
	why := "RFC 8058 one-click unsubscribe: mail clients POST without credentials; the HMAC-signed token in the URL is the authority"
	for _, m := range []string{"GET", "POST"} {
		nag.Suppress(route.AddMethod(jsii.String(m), integration, public),
			nag.Rule{ID: "AwsSolutions-APIG4", Reason: why}, nag.Rule{ID: "AwsSolutions-COG4", Reason: why})
	}
	// Built from the API's id and the stage's name, not RestApi.Url() or
	// the stage's Ref: the stage's deployment depends on the API function,
	// which depends (through provisioning's environment) on the send
	// function that needs this URL: a cycle. api() keeps the default stage.
	stack := awscdk.Stack_Of(c)
	d.UnsubscribeUrl = jsii.String(fmt.Sprintf("https://%s.execute-api.%s.%s/%s/%s", *x.RestApi.RestApiId(), *stack.Region(), *stack.UrlSuffix(),
		apiStageName, UnsubscribePath))

	// Send: the suppression list, the link, the secret.
	x.Send.Function.AddEnvironment(jsii.String(campaignenv.UnsubscribeURL), d.UnsubscribeUrl, nil)
	x.Send.Function.AddEnvironment(jsii.String(campaignenv.UnsubscribeSecretArn), d.UnsubscribeSecret.SecretArn(), nil)
	for _, f := range []*gofn.Function{x.Send, d.Unsubscribe} {
		f.Function.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("secretsmanager:GetSecretValue"), Resources: jsii.Strings(*d.UnsubscribeSecret.SecretArn())}))
	}
	nag.Suppress(d.UnsubscribeSecret, nag.Rule{ID: "AwsSolutions-SMG4",
		Reason: "An HMAC key for unsubscribe links: rotating it would break the links of every email already sent"})
	nag.Suppress(d.BounceTopic, nag.Rule{ID: "AwsSolutions-SNS2",
		Reason: "SES publishes to this topic: SSE would need a customer managed key whose policy admits SES; the events hold addresses SES already has"})

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
}

// alarms are the alarms above, in a fixed order.
func (d *Deliverability) alarms() []awscloudwatch.Alarm {
	a := d.BounceAsync
	return []awscloudwatch.Alarm{a.FailureAlarm, a.DroppedAlarm, a.DeliveryFailureAlarm, d.BounceDeliveryDLQAlarm,
		d.BounceRateAlarm, d.ComplaintRateAlarm, d.BounceErrorsAlarm, d.UnsubscribeErrorsAlarm}
}
