package campaigns

import (
	"fmt"
	"math"
	"net/mail"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
)

// senderGroupName is a Cognito group name without the separators a REST
// API's authorizer flattens cognito:groups with (',', ' ', brackets).
var senderGroupName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// suppressionListID is a suppression list's id: a key part, so no '#'
// (the table's separator), and an address fits (a list keyed by a former
// From address).
var suppressionListID = regexp.MustCompile(`^[A-Za-z0-9._@+-]{1,128}$`)

func unresolved(s string) bool { return *awscdk.Token_IsUnresolved(jsii.String(s)) }

// validate panics with a message that names the prop, shows the bad value
// and says how to fix it. Tokens are not checked.
func validate(id string, p CampaignsProps) {
	if p.UserPool == nil {
		panic(fmt.Sprintf("%s: UserPool is required: pass the Cognito user pool whose users own campaigns (awscognito.IUserPool)", id))
	}
	validateTable(id, p)
	validateDeadLetter(id, p)
	validateDeliverability(id, p) // before SenderIdentity, which defaults to SenderDomain
	if !unresolved(p.SenderAddress) {
		if a, err := mail.ParseAddress(p.SenderAddress); err != nil || a.Address != p.SenderAddress {
			panic(fmt.Sprintf("%s: SenderAddress must be a plain email address of a verified SES identity, such as news@example.com (given %q)", id, p.SenderAddress))
		}
		domain := p.SenderAddress[strings.LastIndex(p.SenderAddress, "@")+1:]
		if !unresolved(p.SenderIdentity) && p.SenderIdentity != p.SenderAddress && !strings.EqualFold(p.SenderIdentity, domain) {
			panic(fmt.Sprintf("%s: SenderIdentity %q does not cover SenderAddress %q: set it to the address itself or to its domain %q",
				id, p.SenderIdentity, p.SenderAddress, domain))
		}
	}
	for _, d := range p.SenderEmailDomains {
		if unresolved(d) {
			continue
		}
		if d == "" || strings.ContainsAny(d, "@ ,") || !strings.Contains(d, ".") || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") {
			panic(fmt.Sprintf("%s: SenderEmailDomains holds %q, which is not a domain: list bare domains such as \"example.com\" (the sign-up allow-list)", id, d))
		}
	}
	if !unresolved(p.SenderGroup) && !senderGroupName.MatchString(p.SenderGroup) {
		panic(fmt.Sprintf("%s: SenderGroup %q is not a group name this app reads: use 1 to 128 letters, digits, '.', '_' or '-', such as \"campaign-senders\"", id, p.SenderGroup))
	}
	propcheck.CheckSeconds(id, "ProvisionTimeout", p.ProvisionTimeout, 60, 900, "Lambda allows at most 15 minutes; a run needs a minute at least")
	propcheck.CheckSeconds(id, "ProvisionMargin", p.ProvisionMargin, 10, 600, "the time a run keeps to save its checkpoint and re-invoke itself")
	if !*p.ProvisionTimeout.IsUnresolved() && !*p.ProvisionMargin.IsUnresolved() &&
		*p.ProvisionMargin.ToSeconds(nil)+30 > *p.ProvisionTimeout.ToSeconds(nil) {
		panic(fmt.Sprintf("%s: ProvisionMargin (%s) leaves less than 30 s of work in ProvisionTimeout (%s): lower the margin or raise the timeout",
			id, *p.ProvisionMargin.ToHumanString(), *p.ProvisionTimeout.ToHumanString()))
	}
	propcheck.CheckSeconds(id, "ReconcileEvery", p.ReconcileEvery, 300, 86400, "a whole number of minutes from 5 minutes to 1 day")
	if !*p.ReconcileEvery.IsUnresolved() && int(*p.ReconcileEvery.ToSeconds(nil))%60 != 0 {
		panic(fmt.Sprintf("%s: ReconcileEvery must be whole minutes (given %s): a rule's rate is in minutes", id, *p.ReconcileEvery.ToHumanString()))
	}
	if !*awscdk.Token_IsUnresolved(p.SchedulerCallsPerSecond) && (p.SchedulerCallsPerSecond < 1 || p.SchedulerCallsPerSecond > 10000) {
		panic(fmt.Sprintf("%s: SchedulerCallsPerSecond must be between 1 and 10000 (given %v): set it to your account's CreateSchedule rate quota", id, p.SchedulerCallsPerSecond))
	}
	propcheck.CheckWhole(id, "ThrottlingRateLimit", p.ThrottlingRateLimit, 1, 10000, "requests per second of the API stage")
	propcheck.CheckWhole(id, "ThrottlingBurstLimit", p.ThrottlingBurstLimit, 1, 5000, "burst of the API stage")
	propcheck.CheckWhole(id, "UnsubscribeThrottlingRateLimit", p.UnsubscribeThrottlingRateLimit, 1, 10000, "requests per second of the unsubscribe API")
	propcheck.CheckWhole(id, "UnsubscribeThrottlingBurstLimit", p.UnsubscribeThrottlingBurstLimit, 1, 5000, "burst of the unsubscribe API")
	if !unresolved(p.SuppressionListId) && !suppressionListID.MatchString(p.SuppressionListId) {
		panic(fmt.Sprintf("%s: SuppressionListId %q is not a list id: use 1 to 128 letters, digits, '.', '_', '-', '@' or '+', such as \"newsletter\" "+
			"(or your former SenderAddress, to keep the entries of a table deployed before this prop)", id, p.SuppressionListId))
	}
	validateLimits(id, p)
	for _, o := range p.AllowedOrigins {
		if !unresolved(o) && !strings.HasPrefix(o, "https://") && !strings.HasPrefix(o, "http://localhost") && !strings.HasPrefix(o, "http://127.0.0.1") {
			panic(fmt.Sprintf("%s: AllowedOrigins entry %q must start with https:// (or http://localhost for development)", id, o))
		}
	}
}

// validateLimits checks the sender limits and the web ACL's rate limits.
func validateLimits(id string, p CampaignsProps) {
	c := limits.Ceilings()
	checkWhole(id, "MaxCampaignsPerDay", *p.MaxCampaignsPerDay, 1, c.CampaignsPerDay, "campaigns one sender may create per UTC day")
	checkWhole(id, "MaxSendsPerDay", *p.MaxSendsPerDay, 1, c.SendsPerDay, "sends one sender's campaigns may schedule per UTC day")
	checkWhole(id, "MaxRecipientsPerCampaign", *p.MaxRecipientsPerCampaign, 1, c.RecipientsPerCampaign,
		fmt.Sprintf("recipients of one campaign; the API never takes more than %d", c.RecipientsPerCampaign))
	if !*awscdk.Token_IsUnresolved(*p.MaxRecipientsPerCampaign) && !*awscdk.Token_IsUnresolved(*p.MaxSendsPerDay) && *p.MaxRecipientsPerCampaign > *p.MaxSendsPerDay {
		panic(fmt.Sprintf("%s: MaxRecipientsPerCampaign (%v) is over MaxSendsPerDay (%v): no day could hold such a campaign; lower MaxRecipientsPerCampaign or raise MaxSendsPerDay",
			id, int(*p.MaxRecipientsPerCampaign), int(*p.MaxSendsPerDay)))
	}
	// WAF's bounds for a rate-based rule's limit.
	checkWhole(id, "WafRateLimitPerIp", p.WafRateLimitPerIp, 10, 2_000_000_000, "requests per 5 minutes, WAF's limits")
	checkWhole(id, "WafRateLimitPerToken", p.WafRateLimitPerToken, 10, 2_000_000_000, "requests per 5 minutes, WAF's limits")
}

// checkWhole is propcheck.CheckWhole with the bounds written out in full
// (10000000, not 1e+07).
func checkWhole(id, name string, v float64, lo, hi int, unit string) {
	if *awscdk.Token_IsUnresolved(v) {
		return
	}
	if v < float64(lo) || v > float64(hi) || v != math.Trunc(v) {
		panic(fmt.Sprintf("%s: %s must be a whole number between %d and %d inclusive (given %s): set it in range (%s)",
			id, name, lo, hi, strconv.FormatFloat(v, 'f', -1, 64), unit))
	}
}
