package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
)

// ItemAPI is the part of the DynamoDB client the item store uses.
type ItemAPI interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// ItemStore is a fire.Store on a table of any contract.Schema: the
// contract's conditional writes (Claim, TakeOver, MarkDelivered) sent as
// they are rendered, and a consistent GetItem. It reads and writes only
// the contract's attributes; the rest of the item is the writer's.
type ItemStore struct {
	api    ItemAPI
	table  string
	schema contract.Schema
}

var (
	_ fire.Store         = (*ItemStore)(nil)
	_ fire.ReminderStore = (*ItemStore)(nil)
)

// NewItemStore returns an item store on the named table.
func NewItemStore(api ItemAPI, table string, s contract.Schema) (*ItemStore, error) {
	if api == nil || table == "" {
		return nil, errors.New("dynamo: NewItemStore needs a client and a table name")
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("dynamo: %w", err)
	}
	return &ItemStore{api: api, table: table, schema: s}, nil
}

func (s *ItemStore) update(ctx context.Context, what string, k contract.Key, u contract.Update) error {
	_, err := s.api.UpdateItem(ctx, UpdateInput(s.table, u, types.ReturnValueNone))
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, k, ConditionAs(err, fire.ErrConditionFailed))
	}
	return nil
}

// Claim implements fire.Store with contract.Schema.Claim, comparing the
// due attribute as stored (contract.AsStored).
func (s *ItemStore) Claim(ctx context.Context, p contract.Payload, now time.Time) error {
	return s.asStored(ctx, p, func(sp contract.Spelling) error {
		return s.update(ctx, "claim", p.Key, s.schema.Claim(p.Key, sp.Due, now, contract.ClaimOptions{}))
	})
}

// TakeOver implements fire.Store with contract.Schema.TakeOver, comparing
// the due attribute as stored (contract.AsStored).
func (s *ItemStore) TakeOver(ctx context.Context, p contract.Payload, now time.Time, lease time.Duration) error {
	return s.asStored(ctx, p, func(sp contract.Spelling) error {
		return s.update(ctx, "take over", p.Key, s.schema.TakeOver(p.Key, sp.Due, now, lease))
	})
}

// asStored runs write with the spelling of p's times that the item
// stores (contract.AsStored), reading it again with Get.
func (s *ItemStore) asStored(ctx context.Context, p contract.Payload, write func(contract.Spelling) error) error {
	return contract.AsStored(p.Due, p.Remind, write, func(err error) bool { return errors.Is(err, fire.ErrConditionFailed) },
		func() (contract.Item, bool, error) { return s.Get(ctx, p.Key) })
}

// MarkDelivered implements fire.Store with contract.Schema.MarkDelivered.
func (s *ItemStore) MarkDelivered(ctx context.Context, k contract.Key, at time.Time) error {
	return s.update(ctx, "mark delivered", k, s.schema.MarkDelivered(k, at, contract.ClaimOptions{}))
}

// RemindClaim implements fire.ReminderStore with contract.Schema.RemindClaim,
// comparing both times as stored (contract.AsStored).
func (s *ItemStore) RemindClaim(ctx context.Context, p contract.Payload, now time.Time, lease time.Duration) error {
	return s.asStored(ctx, p, func(sp contract.Spelling) error {
		return s.update(ctx, "claim reminder", p.Key, s.schema.RemindClaim(p.Key, sp, now, lease))
	})
}

// MarkReminded implements fire.ReminderStore with contract.Schema.MarkReminded.
func (s *ItemStore) MarkReminded(ctx context.Context, p contract.Payload) error {
	return s.update(ctx, "mark reminded", p.Key, s.schema.MarkReminded(p.Key, p.Remind))
}

// Get implements fire.Store with a consistent read.
func (s *ItemStore) Get(ctx context.Context, k contract.Key) (contract.Item, bool, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: ToAttrs(s.schema.Attrs(k)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return contract.Item{}, false, fmt.Errorf("get %s: %w", k, err)
	}
	if len(out.Item) == 0 {
		return contract.Item{}, false, nil
	}
	it, err := s.schema.ItemFrom(FromAttrs(out.Item))
	if err != nil {
		return contract.Item{}, false, fmt.Errorf("get %s: %w", k, err)
	}
	return it, true, nil
}

// UpdateInput renders one of the contract's conditional writes as an
// UpdateItem: every key and value a string (S).
func UpdateInput(table string, u contract.Update, ret types.ReturnValue) *dynamodb.UpdateItemInput {
	in := &dynamodb.UpdateItemInput{
		TableName:                aws.String(table),
		Key:                      ToAttrs(u.Key),
		UpdateExpression:         aws.String(u.UpdateExpression),
		ConditionExpression:      aws.String(u.ConditionExpression),
		ExpressionAttributeNames: u.Names,
		ReturnValues:             ret,
	}
	in.ExpressionAttributeValues = exprValues(u.Values, u.Numbers)
	return in
}
