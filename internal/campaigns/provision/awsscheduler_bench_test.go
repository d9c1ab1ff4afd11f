package provision_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/core/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// limited is the SDK interface of a scheduler that allows rate calls a
// second (a token bucket, burst 10) and answers a call over it with the
// SDK's *types.ThrottlingException, after latency; a create of a taken
// name with another token is a ConflictException.
type limited struct {
	awsscheduler.API // only CreateSchedule is called
	bucket           *inmem.Bucket
	clock            campaign.Clock
	latency          time.Duration
	mu               sync.Mutex
	tokens           map[string]string
}

func (l *limited) CreateSchedule(ctx context.Context, in *scheduler.CreateScheduleInput, _ ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error) {
	if err := l.clock.Sleep(ctx, l.latency); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.bucket.Take() {
		return nil, &types.ThrottlingException{Message: aws.String("Rate exceeded")}
	}
	name, tok := aws.ToString(in.Name), aws.ToString(in.ClientToken)
	if old, ok := l.tokens[name]; ok && old != tok {
		return nil, &types.ConflictException{Message: aws.String("exists")}
	}
	l.tokens[name] = tok
	return &scheduler.CreateScheduleOutput{}, nil
}

// BenchmarkProvision10000ThroughTheAdapter provisions 10,000 campaign
// sends through the core's adapter (Client, on campaign.TaskSchema)
// against an SDK fake that allows 50 calls/s and throttles with the SDK's
// exception (so the mapping to timer.ErrThrottled is what makes the
// provisioner back off), 20 ms a call, time ×20 (CAMPAIGN_BENCH_SPEED).
// Paced at the limit, and at twice it (the back-off does the work).
//
//	go test -run '^$' -bench ThroughTheAdapter -benchtime 1x ./internal/campaigns/provision/
func BenchmarkProvision10000ThroughTheAdapter(b *testing.B) {
	const n, limit = 10_000, 50.0
	speed := 20.0 // CAMPAIGN_BENCH_SPEED, as the core's benchmark: lower is slower and less sensitive to a loaded machine
	if v, err := strconv.ParseFloat(os.Getenv("CAMPAIGN_BENCH_SPEED"), 64); err == nil && v > 0 {
		speed = v
	}
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, pace := range []float64{0, 2 * limit} {
		b.Run(fmt.Sprintf("pace=%v", pace), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				st := memory.NewCampaignStore()
				rules := plan.Rules{SendsPerDay: 1440, Weekdays: []time.Weekday{0, 1, 2, 3, 4, 5, 6}, Windows: []plan.Window{{Start: 0, End: 1440}},
					TimeZone: "Europe/Berlin", Start: plan.Date{Year: 2026, Month: 6, Day: 2}}
				rs := make([]campaign.Recipient, n)
				for i := range rs {
					rs[i] = campaign.Recipient{Email: fmt.Sprintf("r%d@example.com", i)}
				}
				c, tasks, err := campaign.Build("c1", "u1", campaign.Request{Subject: "s", Body: "b", Rules: rules, Recipients: rs}, t0, nil)
				if err != nil {
					b.Fatal(err)
				}
				st.PutCampaign(c)
				st.PutTasks(tasks...)
				clock := inmem.NewScaledClock(t0, speed)
				api := &limited{bucket: inmem.NewBucket(clock, limit, 10), clock: clock, latency: 20 * time.Millisecond, tokens: map[string]string{}}
				client, err := awsscheduler.New(api, awsscheduler.Config{GroupName: "campaigns", TargetArn: "arn:aws:lambda:us-east-1:123456789012:function:send",
					RoleArn: "arn:aws:iam::123456789012:role/sched", DeadLetterArn: "arn:aws:sqs:us-east-1:123456789012:dlq", Schema: campaign.TaskSchema})
				if err != nil {
					b.Fatal(err)
				}
				p, err := provision.New(provision.Config{CallsPerSecond: pace, Seed: 1}, st, st, memory.NewCampaignSenders("u1"), client, memory.NewCampaignCheckpoints(), clock)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := clock.Now()
				res, err := p.Run(context.Background(), "c1", start.Add(24*time.Hour))
				elapsed := clock.Now().Sub(start)
				b.StopTimer()
				if err != nil || !res.Done {
					b.Fatalf("run: %+v %v", res, err)
				}
				lost := 0
				for _, t := range tasks {
					if _, ok := api.tokens[campaign.ScheduleName(t.Key())]; !ok {
						lost++
					}
				}
				rate := float64(len(api.tokens)) / elapsed.Seconds()
				b.ReportMetric(rate, "created/s")
				b.ReportMetric(100*rate/limit, "%_of_limit")
				b.ReportMetric(float64(res.Throttles), "throttled")
				b.ReportMetric(float64(lost), "lost")
				b.StartTimer()
			}
		})
	}
}
