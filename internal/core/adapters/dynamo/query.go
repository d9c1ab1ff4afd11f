package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// API is the part of the DynamoDB client that a store of an adopter's
// table uses (the task table's Store and the campaign table's
// CampaignStore).
type API interface {
	ItemAPI
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// QueryPages runs the Query in page after page (each reads up to 1 MB),
// handing each to page, until the last one or until page returns false;
// page may change in (its Limit) for the next.
func QueryPages(ctx context.Context, api API, in *dynamodb.QueryInput, page func(*dynamodb.QueryOutput) (bool, error)) error {
	for {
		out, err := api.Query(ctx, in)
		if err != nil {
			return err
		}
		more, err := page(out)
		if err != nil || !more || out.LastEvaluatedKey == nil {
			return err
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
