package limitsdynamo

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/campaign/limits"
	"github.com/unschedule/unschedule/internal/testenv"
)

var dynalite string

func TestMain(m *testing.M) { os.Exit(testenv.RunWithDynalite(m, &dynalite)) }

// newCounters makes a fresh campaign table (as the construct declares it)
// and counters in it.
func newCounters(t *testing.T) (*Counters, *dynamodb.Client, string) {
	t.Helper()
	client := testenv.NewDynamoClient(dynalite)
	name := fmt.Sprintf("campaigns-%d", time.Now().UnixNano())
	testenv.CreateTable(t, client, dynamo.CampaignTableInput(name))
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

// TestSameAsMemory runs the same adds on DynamoDB (dynalite) and on
// Memory: each must admit and refuse alike, with the same counts, so
// Memory is never more lenient than the table.
func TestSameAsMemory(t *testing.T) {
	cases := []struct {
		name  string
		steps [][]limits.Add
	}{
		{"campaigns up to the limit", [][]limits.Add{adds(1, 1), adds(1, 1), adds(1, 1), adds(1, 1)}},
		{"sends up to the limit, exactly", [][]limits.Add{adds(1, 60), adds(1, 50), adds(1, 40), adds(1, 1)}},
		{"over the limit alone, first of the day", [][]limits.Add{adds(1, 101), adds(1, 100), adds(1, 0)}},
		{"a lowered limit under the count", [][]limits.Add{adds(1, 90), {{Counter: limits.CounterSends, By: 0, Max: 50}}}},
		{"one counter alone", [][]limits.Add{{{Counter: limits.CounterSends, By: 100, Max: 100}}, adds(1, 0), adds(1, 1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dyn, _, _ := newCounters(t)
			mem := limits.NewMemory()
			ctx := context.Background()
			for i, step := range tc.steps {
				dc, dok, derr := dyn.Add(ctx, day, expires, step)
				mc, mok, merr := mem.Add(ctx, day, expires, step)
				if derr != nil || merr != nil {
					t.Fatalf("step %d: errors %v / %v", i, derr, merr)
				}
				if dok != mok || !sameCounts(dc, mc) {
					t.Fatalf("step %d %+v: DynamoDB ok=%v %v, Memory ok=%v %v", i, step, dok, dc, mok, mc)
				}
			}
			got, err := dyn.read(ctx, day)
			if err != nil {
				t.Fatal(err)
			}
			if want := mem.Counts(day); !sameCounts(got, want) {
				t.Fatalf("final counts: DynamoDB %v, Memory %v", got, want)
			}
		})
	}
}

// sameCounts compares counts, a missing counter being 0.
func sameCounts(a, b map[string]int64) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// TestConcurrentAddsOnTheTable: of many concurrent adds, exactly as many
// as the limit allows pass (one conditional update each, no read first).
func TestConcurrentAddsOnTheTable(t *testing.T) {
	dyn, _, _ := newCounters(t)
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, admitted, err := dyn.Add(context.Background(), day, expires, adds(1, 10))
			if err != nil {
				t.Error(err)
			}
			if admitted {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := ok.Load(); n != 3 {
		t.Fatalf("%d adds passed, want exactly 3 (campaigns per day)", n)
	}
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

// TestLimiterOnTheTable: the limiter's refusal on DynamoDB names the
// limit and the sender's use, as on Memory.
func TestLimiterOnTheTable(t *testing.T) {
	dyn, _, _ := newCounters(t)
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	lim, err := limits.New(limits.Limits{CampaignsPerDay: 5, SendsPerDay: 100, RecipientsPerCampaign: 100}, dyn, fixed(now))
	if err != nil {
		t.Fatal(err)
	}
	if err := lim.Admit(context.Background(), "sub-a", 70); err != nil {
		t.Fatal(err)
	}
	err = lim.Admit(context.Background(), "sub-a", 31)
	want := &limits.Exceeded{Limit: limits.SendsPerDay, Max: 100, Used: 70, Requested: 31, RetryAfter: 12 * time.Hour}
	if e, ok := err.(*limits.Exceeded); !ok || *e != *want {
		t.Fatalf("err = %v, want %+v", err, want)
	}
}

type fixed time.Time

func (f fixed) Now() time.Time { return time.Time(f) }
