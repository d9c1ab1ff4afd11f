package dynamo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// QueryAPI is the part of the DynamoDB client IndexedItems uses.
type QueryAPI interface {
	ItemAPI
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// IndexedItems is the reconciler's view of a table of any schema through
// its armed index (armedindex.Spec): a Query of each listed partition of
// the index, so a pass reads the index entries of the items it owes work
// and not the table. Like ArmedItems it keeps the armed items and the
// fired ones whose delivery is not recorded, as read. A GSI is
// eventually consistent (a write reaches it a moment later), so a page
// may list an item as it was; every repair re-reads or is conditional.
// A Query reads what its key condition selects, at 4 KB per read unit
// (half of one, eventually consistent):
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Reading
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-indexes-general-sparse-indexes.html
type IndexedItems struct {
	api    QueryAPI
	table  string
	schema contract.Schema
	spec   armedindex.Spec
	store  *ItemStore
	now    func() time.Time
}

// markingItems is an IndexedItems whose spec records confirmations.
type markingItems struct{ *IndexedItems }

var (
	_ reconcile.Items   = (*IndexedItems)(nil)
	_ reconcile.Counter = (*IndexedItems)(nil)
	_ reconcile.Marks   = markingItems{}
)

// NewIndexedItems returns the view of the named table through the index
// spec (defaults filled for s); a reconcile.Marks too when the spec names
// the marks' attributes. now is the clock of a state-keyed index's fired
// window (nil: the wall clock).
func NewIndexedItems(api QueryAPI, table string, s contract.Schema, spec armedindex.Spec, now func() time.Time) (reconcile.Items, error) {
	store, err := NewItemStore(api, table, s)
	if err != nil {
		return nil, err
	}
	spec = spec.WithDefaults(s)
	if err := spec.Validate(s); err != nil {
		return nil, fmt.Errorf("dynamo: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	v := &IndexedItems{api: api, table: table, schema: s, spec: spec, store: store, now: now}
	if spec.Marks() {
		return markingItems{v}, nil
	}
	return v, nil
}

// indexCursor is where List stopped: a listed partition (by position)
// and the key to go on after within it (nil: its start).
type indexCursor struct {
	P   int               `json:"p"`
	Key map[string]string `json:"k,omitempty"`
}

func (v *IndexedItems) decodeCursor(c string, n int) (indexCursor, error) {
	if c == "" {
		return indexCursor{}, nil
	}
	var ic indexCursor
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || string(b) == "null" || json.Unmarshal(b, &ic) != nil || ic.P < 0 || ic.P >= n {
		return indexCursor{}, fmt.Errorf("%w: not an index cursor", ErrBadCursor)
	}
	allowed := map[string]bool{v.schema.PartitionKey: true, v.spec.PartitionAttr: true, v.schema.DueAttr: true}
	if !v.schema.NoSortKey {
		allowed[v.schema.SortKey] = true
	}
	for k := range ic.Key {
		if !allowed[k] {
			return indexCursor{}, fmt.Errorf("%w: not an index key", ErrBadCursor)
		}
	}
	return ic, nil
}

func encodeIndexCursor(c indexCursor) string {
	b, _ := json.Marshal(c) // an int and strings always marshal
	return base64.RawURLEncoding.EncodeToString(b)
}

// query reads partition p of the index after start, up to dueBy when set.
// The key condition compares the due attribute as stored, as a string: a
// writer's spelling with an offset is reached that much earlier or later
// (the reconciler checks each item's instant itself).
func (v *IndexedItems) query(p armedindex.Partition, start map[string]string, dueBy time.Time) *dynamodb.QueryInput {
	e := NewExpr()
	cond := e.Name(v.spec.PartitionAttr) + " = " + e.Value(p.Value)
	due := func() string { return e.Name(v.schema.DueAttr) } // named only when used: DynamoDB refuses unused names
	switch {
	case !p.Since.IsZero() && !dueBy.IsZero():
		cond += " AND " + due() + " BETWEEN " + e.Value(contract.FormatTime(p.Since)) + " AND " + e.Value(contract.FormatTime(dueBy))
	case !p.Since.IsZero():
		cond += " AND " + due() + " >= " + e.Value(contract.FormatTime(p.Since))
	case !dueBy.IsZero():
		cond += " AND " + due() + " <= " + e.Value(contract.FormatTime(dueBy))
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(v.table), IndexName: aws.String(v.spec.Name),
		KeyConditionExpression: aws.String(cond), ExpressionAttributeNames: e.Names, ExpressionAttributeValues: e.AttrValues(),
	}
	if len(start) > 0 {
		in.ExclusiveStartKey = ToAttrs(start)
	}
	return in
}

// List implements reconcile.Items: the listed partitions one after the
// other, each in due-time order.
func (v *IndexedItems) List(ctx context.Context, req reconcile.ListRequest) (reconcile.ItemPage, error) {
	parts := v.spec.Listed(v.schema, v.now())
	c, err := v.decodeCursor(req.Cursor, len(parts))
	if err != nil {
		return reconcile.ItemPage{}, err
	}
	limit := req.Limit
	if limit <= 0 {
		limit = reconcile.DefaultPageSize
	}
	var page reconcile.ItemPage
	read := 0
	for c.P < len(parts) && read < limit {
		in := v.query(parts[c.P], c.Key, req.DueBy)
		in.Limit = aws.Int32(int32(limit - read))
		out, err := v.api.Query(ctx, in)
		if err != nil {
			return reconcile.ItemPage{}, fmt.Errorf("query index %s of %s: %w", v.spec.Name, v.table, err)
		}
		read += len(out.Items)
		for _, raw := range out.Items {
			if it, ok := v.item(FromAttrs(raw), req.DueBy); ok {
				page.Items = append(page.Items, it)
			}
		}
		if out.LastEvaluatedKey != nil {
			c.Key = FromAttrs(out.LastEvaluatedKey)
		} else {
			c = indexCursor{P: c.P + 1}
		}
	}
	if c.P < len(parts) {
		page.Cursor = encodeIndexCursor(c)
	}
	return page, nil
}

// item reads an index entry: the armed items (due by dueBy, as an
// instant) and the fired ones not delivered; ok is false for the rest.
func (v *IndexedItems) item(attrs map[string]string, dueBy time.Time) (reconcile.Item, bool) {
	it, err := v.schema.ItemFrom(attrs)
	if err != nil {
		return reconcile.Item{}, false // not an item of the schema
	}
	armed := v.schema.Armed(it)
	if armed && !dueBy.IsZero() && it.Due.After(dueBy) {
		return reconcile.Item{}, false
	}
	if !armed && (it.State != v.schema.FiredState || it.Delivered) {
		return reconcile.Item{}, false
	}
	return v.reconcileItem(it, attrs), true
}

func (v *IndexedItems) reconcileItem(it contract.Item, attrs map[string]string) reconcile.Item {
	out := reconcile.Item{Item: it}
	out.FiredAt, _ = contract.ParseTime(attrs[v.schema.FiredAtAttr])
	if v.spec.Marks() {
		out.ScheduledFor, _ = contract.ParseTime(attrs[v.spec.ConfirmedAttr])
		out.Updated, _ = contract.ParseTime(attrs[v.spec.UpdatedAttr])
		out.Repair = attrs[v.spec.RepairAttr] == "true"
	}
	return out
}

// Count implements reconcile.Counter: the same Queries with Select COUNT
// (they read what List reads, and return no item).
func (v *IndexedItems) Count(ctx context.Context, req reconcile.ListRequest) (int, error) {
	parts := v.spec.Listed(v.schema, v.now())
	c, err := v.decodeCursor(req.Cursor, len(parts))
	if err != nil {
		return 0, err
	}
	n := 0
	for c.P < len(parts) {
		in := v.query(parts[c.P], c.Key, req.DueBy)
		in.Select = types.SelectCount
		out, err := v.api.Query(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("count index %s of %s: %w", v.spec.Name, v.table, err)
		}
		n += int(out.Count)
		if out.LastEvaluatedKey != nil {
			c.Key = FromAttrs(out.LastEvaluatedKey)
		} else {
			c = indexCursor{P: c.P + 1}
		}
	}
	return n, nil
}

// Get implements reconcile.Items with a consistent read of the table.
func (v *IndexedItems) Get(ctx context.Context, k contract.Key) (reconcile.Item, error) {
	out, err := v.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(v.table), Key: ToAttrs(v.schema.Attrs(k)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return reconcile.Item{}, fmt.Errorf("get %s: %w", k, err)
	}
	if len(out.Item) == 0 {
		return reconcile.Item{}, fmt.Errorf("get %s: %w", k, reconcile.ErrItemNotFound)
	}
	attrs := FromAttrs(out.Item)
	it, err := v.schema.ItemFrom(attrs)
	if err != nil {
		return reconcile.Item{}, fmt.Errorf("get %s: %w", k, err)
	}
	return v.reconcileItem(it, attrs), nil
}

// MarkScheduled implements reconcile.Marks: one conditional UpdateItem
// (still armed, same due time compared as stored) that records due as
// confirmed and clears the repair mark.
func (m markingItems) MarkScheduled(ctx context.Context, k contract.Key, due time.Time) error {
	err := contract.AsStored(due, time.Time{}, func(sp contract.Spelling) error {
		e := NewExpr()
		cond := e.Name(m.schema.StateAttr) + " IN (" + m.armedValues(e) + ") AND " + e.Name(m.schema.DueAttr) + " = " + e.Value(sp.Due)
		e.Set(m.spec.ConfirmedAttr, contract.FormatTime(due))
		e.Remove(m.spec.RepairAttr)
		return m.update(ctx, e, k, cond)
	}, func(err error) bool { return errors.Is(err, fire.ErrConditionFailed) },
		func() (contract.Item, bool, error) { return m.store.Get(ctx, k) })
	if err != nil {
		return fmt.Errorf("mark %s scheduled: %w", k, err)
	}
	return nil
}

// SetScheduleRepair implements reconcile.Marks (only on an item that
// exists).
func (m markingItems) SetScheduleRepair(ctx context.Context, k contract.Key, repair bool) error {
	e := NewExpr()
	cond := "attribute_exists(" + e.Name(m.schema.PartitionKey) + ")"
	if repair {
		e.Set(m.spec.RepairAttr, "true")
	} else {
		e.Remove(m.spec.RepairAttr)
	}
	if err := m.update(ctx, e, k, cond); err != nil {
		return fmt.Errorf("set schedule repair of %s: %w", k, err)
	}
	return nil
}

func (m markingItems) armedValues(e *Expr) string {
	vals := make([]string, len(m.schema.ArmedStates))
	for i, a := range m.schema.ArmedStates {
		vals[i] = e.Value(a)
	}
	return joinComma(vals)
}

func (m markingItems) update(ctx context.Context, e *Expr, k contract.Key, cond string) error {
	in := e.Update(m.table, ToAttrs(m.schema.Attrs(k)), cond)
	in.ReturnValues = types.ReturnValueNone
	_, err := m.api.UpdateItem(ctx, in)
	return ConditionAs(err, fire.ErrConditionFailed)
}
