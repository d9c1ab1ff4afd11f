package ses

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntest"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo/dynamotest"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// TestSuppressionsOnDynalite runs the suppression list's contract on
// dynalite (one list, normalized, a duplicate keeps the first entry),
// and checks that two lists of one table are apart and that a list's id
// is case-blind.
func TestSuppressionsOnDynalite(t *testing.T) {
	ctx := context.Background()
	client := testenv.NewDynamoClient(dynalite)
	name := fmt.Sprintf("campaigns-%d", time.Now().UnixNano())
	dynamotest.CreateTable(t, client, campaigntable.CampaignTableInput(name))
	s, err := NewSuppressions(client, name, "News")
	if err != nil {
		t.Fatal(err)
	}
	campaigntest.SuppressionContract(t, s)
	same, _ := NewSuppressions(client, name, "news")
	other, _ := NewSuppressions(client, name, "other")
	if _, ok, err := same.Get(ctx, "bob@y.io"); err != nil || !ok {
		t.Errorf("list news: Get = %v, %v; want the entry of list News", ok, err)
	}
	if _, ok, err := other.Get(ctx, "bob@y.io"); err != nil || ok {
		t.Errorf("list other: Get = %v, %v; want nothing (another list)", ok, err)
	}
	if _, err := NewSuppressions(client, name, ""); err == nil {
		t.Error("NewSuppressions without a list id succeeded")
	}
}

// TestUnsubscribeHeaders: a message with an unsubscribe URL carries
// both RFC 8058 headers in the Simple content; one without carries none.
func TestUnsubscribeHeaders(t *testing.T) {
	ctx := context.Background()
	m := &mail{}
	s := newSender(t, m)
	with := msg
	with.UnsubscribeURL = "https://u.example.com/unsubscribe?token=abc.def"
	if _, err := s.Send(ctx, with); err != nil {
		t.Fatal(err)
	}
	without := msg
	without.IdempotencyKey = "send-c1-00001"
	if _, err := s.Send(ctx, without); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, h := range m.calls[0].Content.Simple.Headers {
		got[aws.ToString(h.Name)] = aws.ToString(h.Value)
	}
	want := map[string]string{"List-Unsubscribe": "<https://u.example.com/unsubscribe?token=abc.def>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("headers %v, want %v", got, want)
	}
	if h := m.calls[1].Content.Simple.Headers; len(h) != 0 {
		t.Errorf("a message without an unsubscribe URL has headers %v", h)
	}
	var _ campaign.Sender = s
}
