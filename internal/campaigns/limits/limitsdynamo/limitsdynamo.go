// Package limitsdynamo keeps the campaign senders' daily counters
// (limits.Counters) in the campaign table: one item per sender and UTC
// day, pk L#<sender>, sk D#<YYYY-MM-DD>, one number attribute per
// counter and the TTL attribute limits.ExpiresAttr. Each admission is one
// UpdateItem: ADD of every counter under a condition that each stays
// within its limit, so concurrent requests cannot both pass.
package limitsdynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/campaigns/limits"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
)

// Key prefixes of a counter item (the other items of the table are C#
// and K#: see tablekeys).
const (
	SenderPrefix = "L#"
	DayPrefix    = "D#"
)

// API is what the counters call of DynamoDB.
type API interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// Counters implements limits.Counters on a table.
type Counters struct {
	api   API
	table string
}

var _ limits.Counters = (*Counters)(nil)

// New returns counters in the named table.
func New(api API, table string) (*Counters, error) {
	if api == nil || table == "" {
		return nil, errors.New("limitsdynamo: a DynamoDB client and a table name are required")
	}
	return &Counters{api: api, table: table}, nil
}

func key(k limits.Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tk.PartitionKey: &types.AttributeValueMemberS{Value: SenderPrefix + k.Sender},
		tk.SortKey:      &types.AttributeValueMemberS{Value: DayPrefix + k.Day},
	}
}

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// Add implements limits.Counters. A condition expression has no
// arithmetic (its operands are paths and values), so each counter's
// bound Max-By is computed here and compared as one value:
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html
// ADD makes a missing counter (and item) start from 0:
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html
func (c *Counters) Add(ctx context.Context, k limits.Key, expires time.Time, adds []limits.Add) (map[string]int64, bool, error) {
	names := map[string]string{"#exp": limits.ExpiresAttr}
	values := map[string]types.AttributeValue{":exp": num(expires.Unix())}
	update, cond := "", ""
	for i, a := range adds {
		if a.By > a.Max {
			// attribute_not_exists would let it through on a new day.
			cur, err := c.read(ctx, k)
			return cur, false, err
		}
		n, by, lim := fmt.Sprintf("#c%d", i), fmt.Sprintf(":b%d", i), fmt.Sprintf(":l%d", i)
		names[n], values[by], values[lim] = a.Counter, num(a.By), num(a.Max-a.By)
		if i > 0 {
			update, cond = update+", ", cond+" AND "
		}
		update += n + " " + by
		cond += fmt.Sprintf("(attribute_not_exists(%s) OR %s <= %s)", n, n, lim)
	}
	_, err := c.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(c.table), Key: key(k),
		UpdateExpression:          aws.String("SET #exp = :exp ADD " + update),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		// The refusal was atomic; this read only says by how much.
		cur, err := c.read(ctx, k)
		return cur, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("add to counters %s/%s: %w", k.Sender, k.Day, err)
	}
	return nil, true, nil
}

// read is a consistent read of k's counters.
func (c *Counters) read(ctx context.Context, k limits.Key) (map[string]int64, error) {
	out, err := c.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(c.table), Key: key(k), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read counters %s/%s: %w", k.Sender, k.Day, err)
	}
	cur := map[string]int64{}
	for name, v := range out.Item {
		if name == tk.PartitionKey || name == tk.SortKey || name == limits.ExpiresAttr {
			continue
		}
		if n, ok := v.(*types.AttributeValueMemberN); ok {
			i, err := strconv.ParseInt(n.Value, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("counter %s of %s/%s = %q is not a whole number: %w", name, k.Sender, k.Day, n.Value, err)
			}
			cur[name] = i
		}
	}
	return cur, nil
}
