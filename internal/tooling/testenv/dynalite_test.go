package testenv

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
)

func TestCreateArmedItemTable(t *testing.T) {
	c := DynamoClient(t, StartDynalite(t))
	s := contract.Default()
	x := armedindex.Spec{}.WithDefaults(s)
	CreateArmedItemTable(t, c, "items", s, armedindex.Spec{})
	out, err := c.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String("items")})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"status", d.TableStatus, types.TableStatusActive},
		{"partition key", aws.ToString(d.KeySchema[0].AttributeName), s.PartitionKey},
		{"sort key", aws.ToString(d.KeySchema[1].AttributeName), s.SortKey},
		{"index count", len(d.GlobalSecondaryIndexes), 1},
		{"index name", aws.ToString(d.GlobalSecondaryIndexes[0].IndexName), x.Name},
		{"index partition", aws.ToString(d.GlobalSecondaryIndexes[0].KeySchema[0].AttributeName), x.PartitionAttr},
		{"index sort", aws.ToString(d.GlobalSecondaryIndexes[0].KeySchema[1].AttributeName), s.DueAttr},
		{"projection", d.GlobalSecondaryIndexes[0].Projection.ProjectionType, types.ProjectionTypeInclude},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Fatalf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

func TestRepoRootHasGoMod(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if root == "" || root == "/" {
		t.Fatalf("RepoRoot() = %q", root)
	}
}
