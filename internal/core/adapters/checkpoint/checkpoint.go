// Package checkpoint stores the reconciler's checkpoint as one item of the
// task table, under a reserved key that no task can have: the partition
// key "#reconciler" is never a Cognito sub (subs are UUIDs), and the item
// has no status, so it never enters the sparse pending index.
//
// The item does appear on the table's stream; the stream processor skips
// it by key (IsReserved) before decoding.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/tableschema"
)

// The reserved key of the checkpoint item.
const (
	UserID = tableschema.CheckpointUserID
	TaskID = tableschema.CheckpointTaskID
)

// Attribute names of the checkpoint item.
const (
	AttrPhase  = "phase"
	AttrCursor = "cursor"
	AttrOffset = "offset"
)

// IsReserved reports whether a table key belongs to the reconciler, not
// to a task.
func IsReserved(userID string) bool { return userID == UserID }

// API is the part of the DynamoDB client the store uses.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// Store is a reconcile.Checkpoints on the task table.
type Store struct {
	api   API
	table string
}

var _ reconcile.Checkpoints = (*Store)(nil)

// New returns a Store on the named table.
func New(api API, table string) (*Store, error) {
	if api == nil || table == "" {
		return nil, errors.New("checkpoint: a DynamoDB client and a table name are required")
	}
	return &Store{api: api, table: table}, nil
}

func key() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tableschema.PartitionKey: &types.AttributeValueMemberS{Value: UserID},
		tableschema.SortKey:      &types.AttributeValueMemberS{Value: TaskID},
	}
}

// Load implements reconcile.Checkpoints (a consistent read; the zero
// Checkpoint when none was saved).
func (s *Store) Load(ctx context.Context) (reconcile.Checkpoint, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(),
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
	item := key()
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
