package limitsdynamo

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntest"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo/dynamotest"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

var dynalite string

func TestMain(m *testing.M) { os.Exit(testenv.RunWithDynalite(m, &dynalite)) }

// newCounters makes a fresh campaign table (as the construct declares it)
// and counters in it.
func newCounters(t *testing.T) (*Counters, *dynamodb.Client, string) {
	t.Helper()
	client := testenv.NewDynamoClient(dynalite)
	name := fmt.Sprintf("campaigns-%d", time.Now().UnixNano())
	dynamotest.CreateTable(t, client, campaigntable.CampaignTableInput(name))
	c, err := New(client, name)
	if err != nil {
		t.Fatal(err)
	}
	return c, client, name
}

var (
	day     = limits.Key{Sender: "sub-a", Day: "2026-12-02"}
	expires = time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
)

func adds(campaigns, sends int64) []limits.Add {
	return []limits.Add{{Counter: limits.CounterCampaigns, By: campaigns, Max: 3}, {Counter: limits.CounterSends, By: sends, Max: 100}}
}

// TestLimitsContract: the DynamoDB counters answer as
// memory.SenderLimits does (so the in-memory counters are never more
// lenient than the table), admit exactly the limit under concurrent adds
// (one conditional update each, no read first), and the limiter's
// refusal on them names the limit and the use.
func TestLimitsContract(t *testing.T) {
	newLimits := func() campaigntest.LimitsReference { return memory.NewSenderLimits() }
	campaigntest.LimitsContract(t, newLimits, func(t *testing.T) campaigntest.LimitsBackend {
		dyn, _, _ := newCounters(t)
		return campaigntest.LimitsBackend{Counters: dyn, Counts: dyn.read}
	})
}

// TestItemLayout: one item per sender and day, keyed apart from the
// campaign items, with its TTL.
func TestItemLayout(t *testing.T) {
	dyn, client, table := newCounters(t)
	if _, ok, err := dyn.Add(context.Background(), day, expires, adds(1, 7)); !ok || err != nil {
		t.Fatalf("add: %v %v", ok, err)
	}
	out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key(day)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "L#sub-a"}, "sk": &types.AttributeValueMemberS{Value: "D#2026-12-02"},
		limits.CounterCampaigns: &types.AttributeValueMemberN{Value: "1"}, limits.CounterSends: &types.AttributeValueMemberN{Value: "7"},
		limits.ExpiresAttr: &types.AttributeValueMemberN{Value: fmt.Sprint(expires.Unix())},
	}
	if !reflect.DeepEqual(out.Item, want) {
		t.Fatalf("item %#v, want %#v", out.Item, want)
	}
}
