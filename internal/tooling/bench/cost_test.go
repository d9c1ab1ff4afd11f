package bench

import (
	"math"
	"strings"
	"testing"
)

func TestPrice(t *testing.T) {
	p := Prices{
		LambdaRequest:     Price{USD: 0.20, Per: 1e6},
		LambdaGBSecondArm: Price{USD: 1, Per: 1}, LambdaGBSecX86: Price{USD: 2, Per: 1},
		APIGatewayREST: Price{USD: 3.5, Per: 1e6},
		DynamoWrite:    Price{USD: 1, Per: 1e6}, DynamoRead: Price{USD: 0.5, Per: 1e6},
		SchedulerInvocation: Price{USD: 1, Per: 1e6}, SQSFIFORequest: Price{USD: 0.5, Per: 1e6},
		SNSPublish: Price{USD: 0.5, Per: 1e6}, SNSEmail: Price{USD: 2, Per: 1e5},
		LogsIngestGB: Price{USD: 0.5, Per: 1},
	}
	u := Usage{APIRequests: 1, Invocations: map[string]int{"api": 1, "expiry": 2},
		DynamoWrites: map[string]int{"Create": 2}, DynamoReads: map[string]int{"Get": 1},
		SchedulerInvocations: 1, SQSRequests: 3, SNSPublishes: 1, EmailDeliveries: 1, AppLogBytes: 1000}
	d := Design{Name: "d", ColdFraction: 0.5, PlatformLogBytes: 100, AccessLogBytes: 200, Functions: map[string]Function{
		"api":    {MemoryMiB: 1024, Arm: true, DurationMs: 9.5, InitMs: 20},
		"expiry": {MemoryMiB: 512, Arm: false, DurationMs: 10, InitMs: 0},
	}}
	c, err := p.Price(u, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line string
		want float64
	}{
		{"Lambda requests", 3 * 0.2e-6},
		// api: 1 GB × (10 ms billed + 0.5 × 20 ms init) × $1; expiry: 2 × 0.5 GB × 10 ms × $2.
		{"Lambda duration", 1*0.020*1 + 2*0.5*0.010*2},
		{"API Gateway", 3.5e-6},
		{"DynamoDB", 2e-6 + 0.5e-6},
		{"Scheduler", 1e-6},
		{"SQS FIFO", 1.5e-6},
		{"SNS + email", 0.5e-6 + 2e-5},
		{"CloudWatch Logs", (1000 + 3*100 + 200) / 1e9 * 0.5},
	} {
		if got := c.Lines[tc.line]; math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: got %g, want %g", tc.line, got, tc.want)
		}
	}
	d.Functions = map[string]Function{}
	if _, err := p.Price(u, d); err == nil || !strings.Contains(err.Error(), "no billing profile") {
		t.Errorf("missing profile: got %v", err)
	}
}
