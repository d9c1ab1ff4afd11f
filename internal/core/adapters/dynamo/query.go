package dynamo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

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

// ErrBadCursor: a cursor that EncodeKeyCursor did not make (such as a
// List cursor of ArmedItems that it did not return).
var ErrBadCursor = errors.New("dynamo: bad cursor")

// EncodeKeyCursor writes a key to go on from (a LastEvaluatedKey) as a
// page cursor: the base64url of its string attributes as JSON ("" for
// no key, the last page). Every key attribute of the tables here is a
// string.
func EncodeKeyCursor(k Item) string {
	if len(k) == 0 {
		return ""
	}
	b, _ := json.Marshal(FromAttrs(k)) // a map of strings always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeKeyCursor reads a cursor of EncodeKeyCursor back into the key's
// string attributes (ToAttrs makes it an ExclusiveStartKey). Anything
// else is an error wrapping ErrBadCursor; what the key must hold (its
// attributes, a partition the caller may read) is the caller's to check.
func DecodeKeyCursor(c string) (map[string]string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCursor, err)
	}
	var key map[string]string
	if err := json.Unmarshal(b, &key); err != nil || len(key) == 0 {
		return nil, fmt.Errorf("%w: not a key", ErrBadCursor)
	}
	return key, nil
}
