package bench

import (
	"fmt"
	"math"
)

// Price is one list price.
type Price struct {
	// USD per Per units.
	USD  float64
	Per  float64
	Unit string
	// Source is where the price was read; Confirmed is false when only the
	// official page's address is known and the figure could not be checked
	// against it here.
	Source    string
	Confirmed bool
}

// Each returns the price of one unit.
func (p Price) Each() float64 { return p.USD / p.Per }

// Prices are the list prices the cost model uses (US East, N. Virginia;
// free tiers ignored: at a million lifecycles they are small or used up by
// other workloads).
type Prices struct {
	Date                              string
	LambdaRequest                     Price
	LambdaGBSecondArm, LambdaGBSecX86 Price
	APIGatewayREST                    Price
	DynamoWrite, DynamoRead           Price
	SchedulerInvocation               Price
	SQSFIFORequest                    Price
	SNSPublish, SNSEmail              Price
	LogsIngestGB                      Price
}

// ListPrices are the prices checked on PricesDate. The official pages are
// not reachable from the build machine; figures were checked against
// recent third-party copies of them (Confirmed) where the search tool had
// one.
var ListPrices = Prices{
	Date:              "2026-11-30",
	LambdaRequest:     Price{0.20, 1e6, "request", "https://aws.amazon.com/lambda/pricing/", true},
	LambdaGBSecondArm: Price{0.0000133334, 1, "GB-s (arm64, first 7.5 billion GB-s/month)", "https://aws.amazon.com/lambda/pricing/", true},
	LambdaGBSecX86:    Price{0.0000166667, 1, "GB-s (x86_64, first 6 billion GB-s/month)", "https://aws.amazon.com/lambda/pricing/", true},
	APIGatewayREST:    Price{3.50, 1e6, "REST API request (first 333 million/month)", "https://aws.amazon.com/api-gateway/pricing/", false},
	DynamoWrite:       Price{0.625, 1e6, "on-demand write request unit", "https://aws.amazon.com/dynamodb/pricing/on-demand/", true},
	DynamoRead:        Price{0.125, 1e6, "on-demand read request unit", "https://aws.amazon.com/dynamodb/pricing/on-demand/", true},
	SchedulerInvocation: Price{1.00, 1e6, "EventBridge Scheduler invocation (after 14 million free/month)",
		"https://aws.amazon.com/eventbridge/pricing/", true},
	SQSFIFORequest: Price{0.50, 1e6, "SQS FIFO request (64 KB chunk)", "https://aws.amazon.com/sqs/pricing/", true},
	SNSPublish:     Price{0.50, 1e6, "SNS standard topic publish (64 KB chunk)", "https://aws.amazon.com/sns/pricing/", true},
	SNSEmail:       Price{2.00, 1e5, "SNS email delivery", "https://aws.amazon.com/sns/pricing/", true},
	LogsIngestGB:   Price{0.50, 1, "CloudWatch Logs standard ingestion, GB", "https://aws.amazon.com/cloudwatch/pricing/", false},
}

// Function is how one function is billed in a design.
type Function struct {
	MemoryMiB float64
	Arm       bool
	// DurationMs is the billed duration of one warm invocation (assumed:
	// see the doc).
	DurationMs float64
	// InitMs is the billed init duration of a cold start in AWS.
	InitMs float64
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
func (c Cost) Total() float64 {
	t := 0.0
	for _, v := range c.Lines {
		t += v
	}
	return t
}

// Price prices one lifecycle's usage u in design d.
func (p Prices) Price(u Usage, d Design) (Cost, error) {
	c := Cost{Lines: map[string]float64{}}
	invocations := 0
	for _, name := range Keys(u.Invocations) {
		n := u.Invocations[name]
		if n == 0 {
			continue
		}
		f, ok := d.Functions[name]
		if !ok {
			return c, fmt.Errorf("design %s: no billing profile for function %q", d.Name, name)
		}
		invocations += n
		gbs := p.LambdaGBSecX86
		if f.Arm {
			gbs = p.LambdaGBSecondArm
		}
		seconds := (math.Ceil(f.DurationMs) + d.ColdFraction*math.Ceil(f.InitMs)) / 1000
		c.Lines["Lambda requests"] += float64(n) * p.LambdaRequest.Each()
		c.Lines["Lambda duration"] += float64(n) * f.MemoryMiB / 1024 * seconds * gbs.Each()
	}
	c.Lines["API Gateway"] = float64(u.APIRequests) * p.APIGatewayREST.Each()
	c.Lines["DynamoDB"] = float64(Total(u.DynamoWrites))*p.DynamoWrite.Each() + float64(Total(u.DynamoReads))*p.DynamoRead.Each()
	c.Lines["Scheduler"] = float64(u.SchedulerInvocations) * p.SchedulerInvocation.Each()
	c.Lines["SQS FIFO"] = float64(u.SQSRequests) * p.SQSFIFORequest.Each()
	c.Lines["SNS + email"] = float64(u.SNSPublishes)*p.SNSPublish.Each() + float64(u.EmailDeliveries)*p.SNSEmail.Each()
	logBytes := float64(u.AppLogBytes) + float64(invocations)*d.PlatformLogBytes + float64(u.APIRequests)*d.AccessLogBytes
	c.Lines["CloudWatch Logs"] = logBytes / 1e9 * p.LogsIngestGB.Each()
	return c, nil
}

// CostLines lists the cost lines in report order.
var CostLines = []string{"API Gateway", "Lambda requests", "Lambda duration", "DynamoDB", "Scheduler",
	"SQS FIFO", "SNS + email", "CloudWatch Logs"}
