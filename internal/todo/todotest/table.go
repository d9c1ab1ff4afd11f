package todotest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/todo/tableschema"
)

// TaskTableInput is the task table exactly as the CDK construct declares
// it: keys, the sparse pending index and the sparse local index of each
// user's Pending tasks from tableschema, on-demand
// billing, and a stream with old and new images. (dynalite accepts the
// stream specification but ignores it: stream decoding is tested on
// fixtures, not on a live stream.)
func TaskTableInput(name string) *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: strAttrs(tableschema.PartitionKey, tableschema.SortKey,
			tableschema.PendingShardAttr, tableschema.PendingSortAttr, tableschema.UserPendingAttr),
		KeySchema: keys(tableschema.PartitionKey, tableschema.SortKey),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String(tableschema.PendingIndex),
			KeySchema:  keys(tableschema.PendingShardAttr, tableschema.PendingSortAttr),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{{IndexName: aws.String(tableschema.UserPendingIndex),
			KeySchema:  keys(tableschema.PartitionKey, tableschema.UserPendingAttr),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}},
		BillingMode: types.BillingModePayPerRequest,
		StreamSpecification: &types.StreamSpecification{
			StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages,
		},
	}
}

// CreateTaskTable creates the task table (see TaskTableInput) through
// client (dynalite's, in tests) and waits until it and its pending index
// are ACTIVE.
func CreateTaskTable(t testing.TB, client *dynamodb.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.CreateTable(ctx, TaskTableInput(name)); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	for {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatalf("describe table %s: %v", name, err)
		}
		if active(out.Table) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("table %s not active: %v", name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// active: the table and its global indexes are ACTIVE (dynalite
// activates a table just after answering CreateTable).
func active(d *types.TableDescription) bool {
	if d.TableStatus != types.TableStatusActive {
		return false
	}
	for _, g := range d.GlobalSecondaryIndexes {
		if g.IndexStatus != types.IndexStatusActive {
			return false
		}
	}
	return true
}

func strAttrs(names ...string) []types.AttributeDefinition {
	var out []types.AttributeDefinition
	for _, n := range names {
		out = append(out, types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS})
	}
	return out
}

func keys(partition, sort string) []types.KeySchemaElement {
	return []types.KeySchemaElement{{AttributeName: aws.String(partition), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(sort), KeyType: types.KeyTypeRange}}
}
