package ses

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
)

// SuppressionTable is the part of the DynamoDB client the suppression
// list uses.
type SuppressionTable interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// Suppressions is one suppression list in the campaign table: item
// S#<list id> / A#<address> (tablekeys), put once with a condition, so a
// duplicate SES event or a second unsubscribe keeps the first entry.
type Suppressions struct {
	db          SuppressionTable
	table, list string
}

var _ suppress.Store = (*Suppressions)(nil)

// NewSuppressions returns the list called list (the construct's
// SUPPRESSION_LIST) kept in table.
func NewSuppressions(db SuppressionTable, table, list string) (*Suppressions, error) {
	if db == nil || table == "" || list == "" {
		return nil, errors.New("ses: the suppression list needs a DynamoDB client, the table and the list's id")
	}
	return &Suppressions{db: db, table: table, list: list}, nil
}

func (s *Suppressions) key(address string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{
		tk.PartitionKey: sv(tk.SuppressPK(s.list)),
		tk.SortKey:      sv(tk.SuppressSK(suppress.Normalize(address))),
	}
}

// Add implements suppress.Store.
func (s *Suppressions) Add(ctx context.Context, e suppress.Entry) (bool, error) {
	e.Sender, e.Address = suppress.Normalize(e.Sender), suppress.Normalize(e.Address)
	if e.Sender == "" || e.Address == "" || e.Reason == "" {
		return false, errors.New("suppress: an entry needs a sender, an address and a reason")
	}
	item := s.key(e.Address)
	item["sender"], item["address"], item["reason"], item["source"] = sv(e.Sender), sv(e.Address), sv(string(e.Reason)), sv(e.Source)
	if !e.At.IsZero() {
		item["at"] = sv(e.At.UTC().Format(time.RFC3339Nano))
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item,
		ConditionExpression: aws.String("attribute_not_exists(pk)")})
	var cf *ddbtypes.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return false, nil // already suppressed: the first entry stays
	}
	if err != nil {
		return false, fmt.Errorf("suppress %s: %w", e.Reason, err)
	}
	return true, nil
}

// Get implements suppress.Store (a strongly consistent read: an address
// suppressed a moment ago is not mailed).
func (s *Suppressions) Get(ctx context.Context, address string) (suppress.Entry, bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: s.key(address), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return suppress.Entry{}, false, fmt.Errorf("read the suppression list: %w", err)
	}
	if len(out.Item) == 0 {
		return suppress.Entry{}, false, nil
	}
	e := suppress.Entry{Sender: str(out.Item, "sender"), Address: str(out.Item, "address"), Reason: suppress.Reason(str(out.Item, "reason")), Source: str(out.Item, "source")}
	if at := str(out.Item, "at"); at != "" {
		e.At, _ = time.Parse(time.RFC3339Nano, at) // written by Add
	}
	return e, true, nil
}
