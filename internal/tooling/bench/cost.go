package bench

import (
	"fmt"
	"math"
)

// Price is one list price: USD per Per units, read at Source on the date
// Checked; Confirmed is false when the figure could not be checked
// against a copy of the page here.
type Price struct {
	USD, Per  float64
	Unit      string
	Source    string
	Confirmed bool
	Checked   string
}

// Each returns the price of one unit.
func (p Price) Each() float64 { return p.USD / p.Per }

// Prices are the list prices the cost model uses (US East, N. Virginia,
// us-east-1; free tiers ignored: at a million lifecycles they are small or
// used up by other workloads).
type Prices struct {
	Region                            string
	LambdaRequest                     Price
	LambdaGBSecondArm, LambdaGBSecX86 Price
	APIGatewayREST                    Price
	DynamoWrite, DynamoRead           Price
	SchedulerInvocation               Price
	SFNTransition                     Price
	SQSFIFORequest                    Price
	SNSPublish, SNSEmail              Price
	SESMessage                        Price
	LogsIngestGB                      Price
}

// All lists the prices in table order.
func (p Prices) All() []Price {
	return []Price{p.LambdaRequest, p.LambdaGBSecondArm, p.LambdaGBSecX86, p.APIGatewayREST, p.DynamoWrite,
		p.DynamoRead, p.SchedulerInvocation, p.SFNTransition, p.SQSFIFORequest, p.SNSPublish, p.SNSEmail, p.SESMessage,
		p.LogsIngestGB}
}

// ListPrices are the prices the doc uses.
var ListPrices = Prices{
	Region: "US East (N. Virginia), us-east-1",
	LambdaRequest: Price{USD: 0.20, Per: 1e6, Unit: "Lambda request", Source: "https://aws.amazon.com/lambda/pricing/",
		Confirmed: true, Checked: "2026-11-30"},
	LambdaGBSecondArm: Price{USD: 0.0000133334, Per: 1, Unit: "Lambda GB-s (arm64, first 7.5 billion GB-s/month)",
		Source: "https://aws.amazon.com/lambda/pricing/", Confirmed: true, Checked: "2026-11-30"},
	LambdaGBSecX86: Price{USD: 0.0000166667, Per: 1, Unit: "Lambda GB-s (x86_64, first 6 billion GB-s/month)",
		Source: "https://aws.amazon.com/lambda/pricing/", Confirmed: true, Checked: "2026-11-30"},
	APIGatewayREST: Price{USD: 3.50, Per: 1e6, Unit: "REST API request (first 333 million/month)",
		Source: "https://aws.amazon.com/api-gateway/pricing/", Checked: "2026-11-30"},
	DynamoWrite: Price{USD: 0.625, Per: 1e6, Unit: "DynamoDB on-demand write request unit",
		Source: "https://aws.amazon.com/dynamodb/pricing/on-demand/", Confirmed: true, Checked: "2026-11-30"},
	DynamoRead: Price{USD: 0.125, Per: 1e6, Unit: "DynamoDB on-demand read request unit",
		Source: "https://aws.amazon.com/dynamodb/pricing/on-demand/", Confirmed: true, Checked: "2026-11-30"},
	SchedulerInvocation: Price{USD: 1.00, Per: 1e6, Unit: "EventBridge Scheduler invocation (after 14 million free/month)",
		Source: "https://aws.amazon.com/eventbridge/pricing/", Confirmed: true, Checked: "2026-11-30"},
	SFNTransition: Price{USD: 0.025, Per: 1e3, Unit: "Step Functions Standard state transition (after 4,000 free/month)",
		Source: "https://aws.amazon.com/step-functions/pricing/", Confirmed: true, Checked: "2026-12-02"},
	SQSFIFORequest: Price{USD: 0.50, Per: 1e6, Unit: "SQS FIFO request (64 KB chunk)", Source: "https://aws.amazon.com/sqs/pricing/",
		Confirmed: true, Checked: "2026-11-30"},
	SNSPublish: Price{USD: 0.50, Per: 1e6, Unit: "SNS standard topic publish (64 KB chunk)", Source: "https://aws.amazon.com/sns/pricing/",
		Confirmed: true, Checked: "2026-11-30"},
	SNSEmail: Price{USD: 2.00, Per: 1e5, Unit: "SNS email delivery", Source: "https://aws.amazon.com/sns/pricing/",
		Confirmed: true, Checked: "2026-11-30"},
	SESMessage: Price{USD: 0.10, Per: 1e3, Unit: "SES outbound email message (attachments and dedicated IPs extra)",
		Source: "https://aws.amazon.com/ses/pricing/", Checked: "2026-12-02"},
	LogsIngestGB: Price{USD: 0.50, Per: 1, Unit: "CloudWatch Logs standard ingestion, GB", Source: "https://aws.amazon.com/cloudwatch/pricing/",
		Checked: "2026-11-30"},
}

// StreamReadsFreeURL: a Lambda trigger's stream reads are free.
const StreamReadsFreeURL = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CostOptimization_StreamsUsage.html"

// TTLDeletesFreeURL: a TTL deletion consumes no write units.
const TTLDeletesFreeURL = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html"

// Function is how one function is billed in a design: the billed
// duration of a warm invocation and the init of a cold start in AWS.
type Function struct {
	MemoryMiB          float64
	Arm                bool
	DurationMs, InitMs float64
}

// Design is a way to run the app whose lifecycles are priced.
type Design struct {
	Name      string
	Functions map[string]Function
	// ColdFraction of invocations that start cold (and pay InitMs).
	ColdFraction float64
	// PlatformLogBytes per invocation (START and REPORT lines, JSON) and
	// AccessLogBytes per API request (API Gateway access log).
	PlatformLogBytes, AccessLogBytes float64
}

// Cost is the price of one lifecycle, by line.
type Cost struct {
	Lines map[string]float64
}

// Total is the sum of the lines.
func (c Cost) Total() float64 { return Total(c.Lines) }

// bill is a usage as the quantities the list prices apply to.
type bill struct {
	invocations                                           map[string]float64
	api, writes, reads, schedulerInvocations, transitions float64
	sqs, publishes, snsEmails, sesEmails, appLogBytes     float64
}

// Price prices one lifecycle's usage u in design d.
func (p Prices) Price(u Usage, d Design) (Cost, error) {
	inv := map[string]float64{}
	for k, n := range u.Invocations {
		if n > 0 {
			inv[k] = float64(n)
		}
	}
	return p.price(bill{invocations: inv, api: float64(u.APIRequests), writes: float64(Total(u.DynamoWrites)),
		reads: float64(Total(u.DynamoReads)), schedulerInvocations: float64(u.SchedulerInvocations),
		transitions: float64(u.StateTransitions), sqs: float64(u.SQSRequests), publishes: float64(u.SNSPublishes),
		snsEmails: float64(u.EmailDeliveries), appLogBytes: float64(u.AppLogBytes)}, d)
}

// PriceCampaign prices one campaign send's usage u in design d.
func (p Prices) PriceCampaign(u CampaignUsage, d Design) (Cost, error) {
	return p.price(bill{invocations: u.Invocations, writes: Total(u.DynamoWrites), reads: Total(u.DynamoReads),
		schedulerInvocations: u.SchedulerInvocations, sesEmails: u.Emails}, d)
}

// price prices b in design d, a line per service (CostLines,
// CampaignCostLines).
func (p Prices) price(b bill, d Design) (Cost, error) {
	c := Cost{Lines: map[string]float64{}}
	invocations := 0.0
	for _, name := range Keys(b.invocations) {
		f, ok := d.Functions[name]
		if !ok {
			return c, fmt.Errorf("design %s: no billing profile for function %q", d.Name, name)
		}
		n := b.invocations[name]
		invocations += n
		gbs := p.LambdaGBSecX86
		if f.Arm {
			gbs = p.LambdaGBSecondArm
		}
		seconds := (math.Ceil(f.DurationMs) + d.ColdFraction*math.Ceil(f.InitMs)) / 1000
		c.Lines["Lambda requests"] += n * p.LambdaRequest.Each()
		c.Lines["Lambda duration"] += n * f.MemoryMiB / 1024 * seconds * gbs.Each()
	}
	c.Lines["API Gateway"] = b.api * p.APIGatewayREST.Each()
	c.Lines["DynamoDB"] = b.writes*p.DynamoWrite.Each() + b.reads*p.DynamoRead.Each()
	c.Lines["Scheduler"] = b.schedulerInvocations * p.SchedulerInvocation.Each()
	c.Lines["Step Functions"] = b.transitions * p.SFNTransition.Each()
	c.Lines["SQS FIFO"] = b.sqs * p.SQSFIFORequest.Each()
	c.Lines["SNS + email"] = b.publishes*p.SNSPublish.Each() + b.snsEmails*p.SNSEmail.Each()
	c.Lines["SES"] = b.sesEmails * p.SESMessage.Each()
	logBytes := b.appLogBytes + invocations*d.PlatformLogBytes + b.api*d.AccessLogBytes
	c.Lines["CloudWatch Logs"] = logBytes / 1e9 * p.LogsIngestGB.Each()
	return c, nil
}

// CostLines lists the cost lines of a task lifecycle in report order.
var CostLines = []string{"API Gateway", "Lambda requests", "Lambda duration", "DynamoDB", "Scheduler",
	"Step Functions", "SQS FIFO", "SNS + email", "CloudWatch Logs"}

// CampaignCostLines lists the campaign cost lines in report order.
var CampaignCostLines = []string{"Lambda requests", "Lambda duration", "DynamoDB", "Scheduler", "SES", "CloudWatch Logs"}
