package campaigntable

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/ses"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/adapters/checkpoint"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

type mail struct{ n int }

func (m *mail) SendEmail(context.Context, *sesv2.SendEmailInput, ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error) {
	m.n++
	return &sesv2.SendEmailOutput{MessageId: aws.String("ses-1")}, nil
}

type noDispatch struct{}

func (noDispatch) Dispatch(context.Context, campaign.FireEvent) error { return nil }

// TestReconcilerRecoversStaleClaimsOnDynalite: two send attempts die after
// their claim, one after SES sent the email (its record says "sent"), one
// before. After the lease the reconciler, over the DynamoDB store and the
// SES sender's records, finishes the first with the recorded receipt and
// re-queues the second; nothing is sent again.
func TestReconcilerRecoversStaleClaimsOnDynalite(t *testing.T) {
	ctx := context.Background()
	st := newCampaignStore(t)
	tasks := seedActive(t, st, "c3", 2)
	clock := clock.NewFake(tasks[0].SendAt)
	m := &mail{}
	sender, err := ses.New(m, testenv.NewDynamoClient(endpoint), ses.Config{Table: st.table, From: "news@example.com"}, clock)
	if err != nil {
		t.Fatal(err)
	}
	for i, tsk := range tasks {
		if _, err := st.Claim(ctx, tsk.Key(), tsk.SendAt, clock.Now(), time.Minute); err != nil {
			t.Fatal(err)
		}
		if i == 0 { // died after SendEmail, before writing Finished
			if _, err := sender.Send(ctx, campaign.Message{IdempotencyKey: tsk.IdempotencyKey(), To: tsk.Email, Subject: "s", Body: "b"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	clock.Set(tasks[1].SendAt.Add(2 * time.Minute)) // both past their due time and lease
	rules := &campaign.Repair{}
	// The checkpoint lives in the campaign table, as the reconciler
	// function keeps it.
	cps, err := checkpoint.New(testenv.NewDynamoClient(endpoint), st.table, campaign.TaskSchema)
	if err != nil {
		t.Fatal(err)
	}
	r, err := campaign.NewReconciler(reconcile.Config{}, rules, campaign.ReconcilePorts{Tasks: st, Campaigns: st,
		Timer: inmem.NewScheduler(), Sender: sender, Owners: memory.NewCampaignSenders("owner-1"), Dispatcher: noDispatch{}, Clock: clock, Checkpoints: cps})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(ctx)
	if n := rules.Counts(); err != nil || n.Finished != 1 || n.Requeued != 1 || res.Errors != 0 {
		t.Fatalf("pass %+v %+v, %v: want one finished, one re-queued", res, n, err)
	}
	first, _ := st.Get(ctx, tasks[0].Key())
	second, _ := st.Get(ctx, tasks[1].Key())
	if first.State != campaign.Finished || first.MessageID != "ses-1" || second.State != campaign.Pending || m.n != 1 {
		t.Fatalf("first %s %q, second %s, %d emails", first.State, first.MessageID, second.State, m.n)
	}
}
