package dynamo

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire/firetest"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// The contract's conditional writes, as rendered, against a real
// DynamoDB-compatible server: the to-do app's schema and a consumer's.
func TestItemStoreFireStoreContract(t *testing.T) {
	firetest.FireStoreContract(t, func(t *testing.T, s contract.Schema) firetest.FireBackend {
		c := testenv.DynamoClient(t, endpoint)
		name := "items-" + strconv.FormatInt(tables.Add(1), 10)
		testenv.CreateItemTable(t, c, name, s)
		store, err := NewItemStore(c, name, s)
		if err != nil {
			t.Fatal(err)
		}
		return firetest.FireBackend{
			Store: store,
			Put: func(t *testing.T, attrs map[string]string) {
				if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(name), Item: ToAttrs(attrs)}); err != nil {
					t.Fatal(err)
				}
			},
			Attrs: func(t *testing.T, k contract.Key) map[string]string {
				out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(name),
					Key: ToAttrs(s.Attrs(k)), ConsistentRead: aws.Bool(true)})
				if err != nil {
					t.Fatal(err)
				}
				if len(out.Item) == 0 {
					return nil
				}
				return FromAttrs(out.Item)
			},
		}
	})
}

// The Go predicates (Claimable, TakeOverable, RemindClaimable) say what
// DynamoDB's conditions say, string for string, for every writer's
// spelling of the due time and the reminder time, tried with the
// canonical spelling, the stored one, and a mix: the memory store, which
// evaluates the predicates, is never more lenient than DynamoDB.
func TestPredicatesAgreeWithDynamoDB(t *testing.T) {
	ctx := context.Background()
	s := firetest.ConsumerSchema()
	s.RemindAttr = "remindBy"
	s = s.WithDefaults()
	c := testenv.DynamoClient(t, endpoint)
	name := "items-" + strconv.FormatInt(tables.Add(1), 10)
	testenv.CreateItemTable(t, c, name, s)
	due := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	rem, now, lease := due.Add(-15*time.Minute), due.Add(30*time.Second), time.Minute
	k := contract.Key{Partition: "acme", Sort: "job-1"}
	rems := contract.WriterSpellings(rem)
	agreed := 0
	for i, v := range contract.WriterSpellings(due) {
		rv := rems[(i+3)%len(rems)]
		for _, state := range []string{"Queued", s.FiredState} {
			attrs := s.Attrs(k)
			attrs[s.StateAttr], attrs[s.DueAttr], attrs[s.RemindAttr] = state, v, rv
			it, err := s.ItemFrom(attrs)
			if err != nil {
				t.Fatal(err)
			}
			for _, tried := range []contract.Spelling{contract.Canonical(due, rem), {Due: v, Remind: rv}, {Due: v, Remind: contract.FormatTime(rem)}} {
				for _, op := range []struct {
					name string
					u    contract.Update
					want bool
				}{
					{"claim", s.Claim(k, tried.Due, now, contract.ClaimOptions{}), s.Claimable(it, tried.Due)},
					{"take over", s.TakeOver(k, tried.Due, now, lease), s.TakeOverable(it, tried.Due, now, lease)},
					{"remind claim", s.RemindClaim(k, tried, now, lease), s.RemindClaimable(it, tried, now, lease)},
				} {
					if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: ToAttrs(attrs)}); err != nil {
						t.Fatal(err)
					}
					_, err := c.UpdateItem(ctx, UpdateInput(name, op.u, types.ReturnValueNone))
					if err != nil && !IsConditionFailed(err) {
						t.Fatalf("%s: %v", op.name, err)
					}
					if got := err == nil; got != op.want {
						t.Errorf("%s of %s item %s=%q %s=%q tried %+v: DynamoDB says %v, the Go predicate %v",
							op.name, state, s.DueAttr, v, s.RemindAttr, rv, tried, got, op.want)
					}
					agreed++
				}
			}
		}
	}
	t.Logf("%d cases agree", agreed)
}
