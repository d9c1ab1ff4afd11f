package todotest

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/core/adapters/dynamo/dynamotest"
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
	dynamotest.CreateTable(t, client, TaskTableInput(name))
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
