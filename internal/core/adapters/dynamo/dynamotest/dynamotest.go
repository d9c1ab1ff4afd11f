// Package dynamotest creates DynamoDB tables for tests (dynalite's, or
// any endpoint): the core's, the adopters' and the tooling's fixtures
// create their tables through it.
package dynamotest

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CreateTable creates the table in and waits until it and its global
// indexes are ACTIVE (dynalite activates a table just after answering
// CreateTable), at most a minute.
func CreateTable(t testing.TB, client *dynamodb.Client, in *dynamodb.CreateTableInput) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := aws.ToString(in.TableName)
	if _, err := client.CreateTable(ctx, in); err != nil {
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
