package bench

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// CampaignUsage is what a campaign makes AWS do, per send (totals over
// one campaign divided by its recipients): DynamoDB request units and
// invocations by operation and function, CreateSchedule calls (free; each
// schedule deletes itself after it fires), schedules fired, SES messages.
type CampaignUsage struct {
	Recipients                int
	DynamoWrites, DynamoReads map[string]float64
	ScheduleCreates           float64
	SchedulerInvocations      float64
	Invocations               map[string]float64
	Emails                    float64
}

// itemsPerReadUnit: a Query or Scan reads up to 4 KB per read unit, and
// a task item is under 1 KB.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
const itemsPerReadUnit = 4

// countingTasks counts the reads of the provisioner and the send
// function as the DynamoDB adapter (campaigntable.CampaignStore) makes
// them: Get and Campaign are one GetItem each, List and Open a Query of a
// page. Its writes are counted through the store's Fail hook (campaignWrites).
type countingTasks struct {
	*memory.CampaignStore
	reads map[string]float64
}

// campaignWrites names the store's conditional writes as the cost lines
// count them: Claim, TakeOver and SetStatus are an UpdateItem, Replace a
// PutItem.
var campaignWrites = map[string]string{"Claim": "task Claim", "TakeOver": "task TakeOver", "Replace": "task Replace",
	"SetStatus": "campaign SetStatus"}

func (c *countingTasks) Get(ctx context.Context, k campaign.Key) (campaign.SendTask, error) {
	c.reads["task Get"]++
	return c.CampaignStore.Get(ctx, k)
}

func (c *countingTasks) List(ctx context.Context, id string, from, limit int) ([]campaign.SendTask, error) {
	ts, err := c.CampaignStore.List(ctx, id, from, limit)
	c.reads["task List"] += math.Max(1, math.Ceil(float64(len(ts))/itemsPerReadUnit))
	return ts, err
}

func (c *countingTasks) Open(ctx context.Context, cursor string, limit int) ([]campaign.SendTask, string, error) {
	ts, next, err := c.CampaignStore.Open(ctx, cursor, limit)
	c.reads["task Open"] += math.Max(1, math.Ceil(float64(len(ts))/itemsPerReadUnit))
	return ts, next, err
}

func (c *countingTasks) Campaign(ctx context.Context, id string) (campaign.Campaign, error) {
	c.reads["campaign Get"]++
	return c.CampaignStore.Campaign(ctx, id)
}

// countingCheckpoints counts the provisioner's checkpoint writes (one
// item each in the campaign table).
type countingCheckpoints struct {
	provision.Checkpoints
	writes map[string]float64
}

func (c countingCheckpoints) Save(ctx context.Context, cp provision.Checkpoint) error {
	c.writes["checkpoint Save"]++
	return c.Checkpoints.Save(ctx, cp)
}

// countingSender counts the SES sender's calls as the adapter
// (internal/campaigns/adapters/ses) makes them: Send is a conditional PutItem of
// the idempotency record, SendEmail, and an UpdateItem with the receipt;
// Sent is one GetItem of that record.
type countingSender struct {
	*memory.CampaignSender
	writes, reads map[string]float64
	emails        float64
}

func (c *countingSender) Send(ctx context.Context, m campaign.Message) (campaign.Receipt, error) {
	c.writes["idempotency record"] += 2
	c.emails++
	return c.CampaignSender.Send(ctx, m)
}

func (c *countingSender) Sent(ctx context.Context, key string) (campaign.Receipt, error) {
	c.reads["idempotency record"]++
	return c.CampaignSender.Sent(ctx, key)
}

// CountCampaignSends runs one campaign of n recipients through the real
// provisioner and send function on the in-memory adapters (every schedule
// fires once, at its time) and returns its usage per send.
func CountCampaignSends(ctx context.Context, n int) (CampaignUsage, error) {
	u := CampaignUsage{Recipients: n, DynamoWrites: map[string]float64{}, DynamoReads: map[string]float64{},
		Invocations: map[string]float64{}}
	t0 := time.Date(2030, 6, 3, 8, 0, 0, 0, time.UTC)
	rules := plan.Rules{SendsPerDay: 1440, Weekdays: []time.Weekday{0, 1, 2, 3, 4, 5, 6},
		Windows: []plan.Window{{Start: 0, End: 1440}}, TimeZone: "UTC", Start: plan.Date{Year: 2030, Month: 6, Day: 4}}
	c := campaign.Campaign{ID: "c1", OwnerID: "u1", Subject: "Hello", Status: campaign.Draft, Total: n, Rules: rules}
	sends, err := plan.Plan(n, rules)
	if err != nil {
		return u, err
	}
	rs := make([]campaign.Recipient, n)
	for i := range rs {
		rs[i] = campaign.Recipient{Email: fmt.Sprintf("r%d@example.com", i)}
	}
	i := 0
	tasks, err := campaign.NewTasks(c, rs, sends, func() string { i++; return "tok-" + strconv.Itoa(i) }, t0)
	if err != nil {
		return u, err
	}
	st := memory.NewCampaignStore()
	st.PutCampaign(c)
	st.PutTasks(tasks...)
	// The campaign API writes the campaign and its tasks (BatchWriteItem
	// is billed per item).
	u.DynamoWrites["API: campaign and tasks"] = float64(1 + n)
	u.Invocations["campaignapi"] = 1

	clk := clock.NewFake(t0)
	st.Fail = func(op string) error {
		u.DynamoWrites[campaignWrites[op]]++
		return nil
	}
	store := &countingTasks{CampaignStore: st, reads: u.DynamoReads}
	sched := inmem.NewRemote(inmem.NewScheduler(), nil)
	cps := countingCheckpoints{Checkpoints: memory.NewCampaignCheckpoints(), writes: u.DynamoWrites}
	prov, err := provision.New(provision.Config{Seed: 1, CallsPerSecond: 1e6}, store, store, memory.NewCampaignSenders(c.OwnerID), sched, cps, clk)
	if err != nil {
		return u, err
	}
	for run := 0; ; run++ {
		if run > 100 {
			return u, fmt.Errorf("provisioning %d tasks did not finish in %d runs", n, run)
		}
		u.Invocations["campaignprovision"]++
		res, err := prov.Run(ctx, c.ID, clk.Now().Add(15*time.Minute))
		if err != nil {
			return u, fmt.Errorf("provision: %w", err)
		}
		if !res.Continue {
			break
		}
	}
	u.ScheduleCreates = float64(sched.Stats().Creates)
	if got := len(sched.All()); got != n {
		return u, fmt.Errorf("provisioned %d schedules for %d tasks", got, n)
	}

	sender := &countingSender{CampaignSender: memory.NewCampaignSender(clk), writes: u.DynamoWrites, reads: u.DynamoReads}
	w, err := send.New(store, store, sender, memory.NewCampaignSenders(c.OwnerID), clk, 0)
	if err != nil {
		return u, err
	}
	for _, t := range tasks {
		clk.Set(t.SendAt)
		u.SchedulerInvocations++
		u.Invocations["campaignsend"]++
		out, err := w.Handle(ctx, campaign.FireEvent{CampaignID: t.CampaignID, TaskID: t.ID})
		if err != nil || out != send.Sent {
			return u, fmt.Errorf("send %s: %s %v", t.ID, out, err)
		}
	}
	if len(sender.Outbox) != n {
		return u, fmt.Errorf("%d emails sent for %d tasks", len(sender.Outbox), n)
	}
	u.Emails = sender.emails
	// The task writes reach the progress function through the table's
	// stream: at most one invocation each.
	for k, v := range u.DynamoWrites {
		if k == "task Claim" || k == "task Replace" {
			u.Invocations["campaignprogress"] += v
		}
	}
	for _, m := range []map[string]float64{u.DynamoWrites, u.DynamoReads, u.Invocations} {
		for k := range m {
			m[k] /= float64(n)
		}
	}
	for _, v := range []*float64{&u.ScheduleCreates, &u.SchedulerInvocations, &u.Emails} {
		*v /= float64(n)
	}
	return u, nil
}
