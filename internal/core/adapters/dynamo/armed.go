package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// ScanAPI is the part of the DynamoDB client ArmedItems uses.
type ScanAPI interface {
	ItemAPI
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// ArmedItems is the reconciler's view of a table of any schema
// (reconcile.Items): a Scan that keeps the armed items and the fired ones
// whose delivery is not recorded. A pass reads the whole table, so its
// cost grows with the table, not with the armed items: a table whose
// armed items are a small part of it is better served by an index (the
// to-do app's store, task.NewReconcileView). A Scan's Limit counts the
// items read before the filter, so a page may hold fewer items than
// asked, or none, with a cursor to go on.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html
type ArmedItems struct {
	api    ScanAPI
	table  string
	schema contract.Schema
	store  *ItemStore
}

var _ reconcile.Items = (*ArmedItems)(nil)

// NewArmedItems returns the view of the named table.
func NewArmedItems(api ScanAPI, table string, s contract.Schema) (*ArmedItems, error) {
	store, err := NewItemStore(api, table, s)
	if err != nil {
		return nil, err
	}
	return &ArmedItems{api: api, table: table, schema: s, store: store}, nil
}

// List implements reconcile.Items. DueBy is applied after reading, to the
// due time as an instant (a writer's spelling sorts differently as a
// string); the fired items are kept whatever their due time.
func (a *ArmedItems) List(ctx context.Context, req reconcile.ListRequest) (reconcile.ItemPage, error) {
	e := NewExpr()
	state := e.Name(a.schema.StateAttr)
	var armed []string
	for _, st := range a.schema.ArmedStates {
		armed = append(armed, e.Value(st))
	}
	filter := fmt.Sprintf("%s IN (%s) OR (%s = %s AND attribute_not_exists(%s))", state, joinComma(armed),
		state, e.Value(a.schema.FiredState), e.Name(a.schema.DeliveredAtAttr))
	in := &dynamodb.ScanInput{TableName: aws.String(a.table), FilterExpression: aws.String(filter),
		ExpressionAttributeNames: e.Names, ExpressionAttributeValues: e.AttrValues()}
	if req.Limit > 0 {
		in.Limit = aws.Int32(int32(req.Limit))
	}
	if req.Cursor != "" {
		start, err := DecodeKeyCursor(req.Cursor)
		if err != nil {
			return reconcile.ItemPage{}, err
		}
		in.ExclusiveStartKey = ToAttrs(start)
	}
	out, err := a.api.Scan(ctx, in)
	if err != nil {
		return reconcile.ItemPage{}, fmt.Errorf("scan %s: %w", a.table, err)
	}
	var page reconcile.ItemPage
	for _, raw := range out.Items {
		it, err := a.schema.ItemFrom(FromAttrs(raw))
		if err != nil {
			continue // not an item of the schema (no key as a string)
		}
		if a.schema.Armed(it) && !req.DueBy.IsZero() && it.Due.After(req.DueBy) {
			continue
		}
		if a.schema.Armed(it) || (it.State == a.schema.FiredState && !it.Delivered) {
			page.Items = append(page.Items, reconcile.Item{Item: it})
		}
	}
	page.Cursor = EncodeKeyCursor(out.LastEvaluatedKey)
	return page, nil
}

// Get implements reconcile.Items with a consistent read.
func (a *ArmedItems) Get(ctx context.Context, k contract.Key) (reconcile.Item, error) {
	it, found, err := a.store.Get(ctx, k)
	if err != nil {
		return reconcile.Item{}, err
	}
	if !found {
		return reconcile.Item{}, fmt.Errorf("get %s: %w", k, reconcile.ErrItemNotFound)
	}
	return reconcile.Item{Item: it}, nil
}

func joinComma(v []string) string { return strings.Join(v, ", ") }
