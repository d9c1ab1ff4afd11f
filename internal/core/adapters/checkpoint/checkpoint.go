// Package checkpoint stores the reconciler's checkpoint as one item of the
// item table, under a reserved key that no item should have: the partition
// key "#reconciler" (the to-do app's partitions are Cognito subs, UUIDs),
// and the item has no state, so it never enters a sparse pending index.
//
// The item does appear on the table's stream; the stream processor skips
// it by key (IsReserved) before decoding.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// The reserved key of the checkpoint item: its partition key value, and
// its sort key value on a table that has one.
const (
	UserID = reconcile.CheckpointPartition
	TaskID = reconcile.CheckpointSort
)

// Attribute names of the checkpoint item.
const (
	AttrPhase  = "phase"
	AttrCursor = "cursor"
	AttrOffset = "offset"
)

// IsReserved reports whether a partition key value belongs to the
// reconciler, not to an item.
func IsReserved(userID string) bool { return userID == UserID }

// API is the part of the DynamoDB client the store uses.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// Store is a reconcile.Checkpoints on the item table.
type Store struct {
	api   API
	table string
	keyOf map[string]types.AttributeValue
}

var _ reconcile.Checkpoints = (*Store)(nil)

// New returns a Store on the named table, keyed by the schema's key
// attributes.
func New(api API, table string, s contract.Schema) (*Store, error) {
	if api == nil || table == "" || s.PartitionKey == "" {
		return nil, errors.New("checkpoint: a DynamoDB client, a table name and the table's schema are required")
	}
	k := map[string]types.AttributeValue{s.PartitionKey: &types.AttributeValueMemberS{Value: UserID}}
	if s.SortKey != "" {
		k[s.SortKey] = &types.AttributeValueMemberS{Value: TaskID}
	}
	return &Store{api: api, table: table, keyOf: k}, nil
}

// key is a fresh copy of the checkpoint's key (Save adds to it).
func (s *Store) key() map[string]types.AttributeValue { return maps.Clone(s.keyOf) }

// Load implements reconcile.Checkpoints (a consistent read; the zero
// Checkpoint when none was saved).
func (s *Store) Load(ctx context.Context) (reconcile.Checkpoint, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: s.key(),
		ConsistentRead: aws.Bool(true)})
	if err != nil {
		return reconcile.Checkpoint{}, fmt.Errorf("load checkpoint: %w", err)
	}
	cp := reconcile.Checkpoint{Phase: reconcile.Phase(str(out.Item, AttrPhase)), Cursor: str(out.Item, AttrCursor)}
	if o := str(out.Item, AttrOffset); o != "" {
		if cp.Offset, err = strconv.Atoi(o); err != nil || cp.Offset < 0 {
			// A damaged checkpoint costs a full pass, never a stuck job.
			return reconcile.Checkpoint{}, nil
		}
	}
	return cp, nil
}

// Save implements reconcile.Checkpoints.
func (s *Store) Save(ctx context.Context, cp reconcile.Checkpoint) error {
	item := s.key()
	item[AttrPhase] = &types.AttributeValueMemberS{Value: string(cp.Phase)}
	item[AttrCursor] = &types.AttributeValueMemberS{Value: cp.Cursor}
	item[AttrOffset] = &types.AttributeValueMemberS{Value: strconv.Itoa(cp.Offset)}
	if _, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	return nil
}

func str(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}
