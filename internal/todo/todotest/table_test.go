package todotest_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/todotest"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestCreateTaskTable(t *testing.T) {
	c := testenv.DynamoClient(t, testenv.StartDynalite(t))
	todotest.CreateTaskTable(t, c, "tasks")
	out, err := c.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String("tasks")})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"status", d.TableStatus, types.TableStatusActive},
		{"partition key", aws.ToString(d.KeySchema[0].AttributeName), tableschema.PartitionKey},
		{"sort key", aws.ToString(d.KeySchema[1].AttributeName), tableschema.SortKey},
		{"index count", len(d.GlobalSecondaryIndexes), 1},
		{"index name", aws.ToString(d.GlobalSecondaryIndexes[0].IndexName), tableschema.PendingIndex},
		{"index partition", aws.ToString(d.GlobalSecondaryIndexes[0].KeySchema[0].AttributeName), tableschema.PendingShardAttr},
		{"index sort", aws.ToString(d.GlobalSecondaryIndexes[0].KeySchema[1].AttributeName), tableschema.PendingSortAttr},
		{"projection", d.GlobalSecondaryIndexes[0].Projection.ProjectionType, types.ProjectionTypeAll},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Fatalf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}
