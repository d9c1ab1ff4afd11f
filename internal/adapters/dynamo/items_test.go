package dynamo

import (
	"context"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/testenv"
)

// The contract's conditional writes, as rendered, against a real
// DynamoDB-compatible server: the to-do app's schema and a consumer's.
func TestItemStoreFireStoreContract(t *testing.T) {
	testenv.FireStoreContract(t, func(t *testing.T, s contract.Schema) testenv.FireBackend {
		c := testenv.DynamoClient(t, endpoint)
		name := "items-" + strconv.FormatInt(tables.Add(1), 10)
		testenv.CreateItemTable(t, c, name, s)
		store, err := NewItemStore(c, name, s)
		if err != nil {
			t.Fatal(err)
		}
		return testenv.FireBackend{
			Store: store,
			Put: func(t *testing.T, attrs map[string]string) {
				if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(name), Item: toAttrs(attrs)}); err != nil {
					t.Fatal(err)
				}
			},
			Attrs: func(t *testing.T, k contract.Key) map[string]string {
				out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(name),
					Key: toAttrs(s.Attrs(k)), ConsistentRead: aws.Bool(true)})
				if err != nil {
					t.Fatal(err)
				}
				if len(out.Item) == 0 {
					return nil
				}
				return fromAttrs(out.Item)
			},
		}
	})
}
