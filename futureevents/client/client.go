// Package client is the future-events client an app's function uses:
// Schedule and Cancel write and delete the event's item in the
// construct's table (a conditional PutItem, a conditional DeleteItem);
// the scheduling core then arms or cancels the event's Step Functions
// execution. Package futureevents/futureevent holds the SDK-free rules it
// applies (the item, names, horizon).
package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/futureevents/futureevent"
)

// API is the part of the DynamoDB client that Client uses.
type API interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// The conditions Client writes with. A write whose condition is false
// fails with ConditionalCheckFailedException and changes nothing
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html;
// TestClientAgainstDynalite pins it). Attribute names go through
// placeholders: "name" and "status" are DynamoDB reserved words
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ReservedWords.html).
const (
	// CreateCondition: Schedule creates an event, never overwrites one.
	CreateCondition = "attribute_not_exists(#name)"
	// CancelCondition: Cancel deletes an event only while it waits; the
	// core's claim at the moment is conditional on the same state, so
	// exactly one of the two wins.
	CancelCondition = "#status = :scheduled"
)

// Client schedules and cancels future events in one table.
type Client struct {
	api   API
	table string
	now   func() time.Time
}

var _ futureevent.Reader = (*Client)(nil)

// New returns a client of the table (the construct's Table).
func New(api API, table string) (*Client, error) {
	if api == nil {
		return nil, errors.New("futureevents: the DynamoDB client is nil")
	}
	if table == "" {
		return nil, fmt.Errorf("futureevents: the table name is empty: set %s (the construct's ConfigureClient does)", futureevent.EnvTableName)
	}
	return &Client{api: api, table: table, now: time.Now}, nil
}

// FromEnv is New with the table name from futureevent.EnvTableName.
func FromEnv(api API) (*Client, error) { return New(api, os.Getenv(futureevent.EnvTableName)) }

// WithClock returns a copy of c that reads the time from now (tests).
func (c *Client) WithClock(now func() time.Time) *Client {
	cp := *c
	cp.now = now
	return &cp
}

// Schedule creates event name: at at, invoke target (a function
// registered with the construct) with payload (JSON; empty is {}).
// Calling it again with the same arguments is no duplicate; the same
// name with other arguments is
// futureevent.ErrNameConflict. A bad argument, or a moment beyond
// futureevent.MaxHorizon, is futureevent.ErrInvalid. After Cancel the
// name is free again.
func (c *Client) Schedule(ctx context.Context, name string, at time.Time, target string, payload []byte) error {
	e, err := futureevent.New(c.now(), name, at, target, payload)
	if err != nil {
		return err
	}
	item := map[string]types.AttributeValue{}
	for k, v := range e.Item() {
		item[k] = &types.AttributeValueMemberS{Value: v}
	}
	// Twice at most: a Cancel may delete the existing event between the
	// failed put and the read.
	for range 2 {
		_, err := c.api.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(c.table), Item: item, ConditionExpression: aws.String(CreateCondition),
			ExpressionAttributeNames: map[string]string{"#name": futureevent.NameAttr},
		})
		var exists *types.ConditionalCheckFailedException
		if !errors.As(err, &exists) {
			if err != nil {
				return fmt.Errorf("futureevents: schedule %s: %w", name, err)
			}
			return nil
		}
		old, status, err := c.Get(ctx, name)
		switch {
		case errors.Is(err, futureevent.ErrNotFound):
			continue
		case err != nil:
			return fmt.Errorf("futureevents: event %s exists; read it: %w", name, err)
		case !old.Same(e):
			return fmt.Errorf("%w: %s (%s, at %s): pick another name, or Cancel it first", futureevent.ErrNameConflict, name, status, old.At.Format(time.RFC3339))
		}
		return nil
	}
	return fmt.Errorf("futureevents: schedule %s: it was created and deleted again while this call ran; try again", name)
}

// Cancel deletes event name while it waits for its moment, so it never
// fires. An event that does not exist (never scheduled, or cancelled
// already) is success; so is one that already fired (the core claimed it
// first): its item stays, with the core's firedAt and deliveredAt.
func (c *Client) Cancel(ctx context.Context, name string) error {
	if !futureevent.ValidName(name) {
		return fmt.Errorf("%w: name %q", futureevent.ErrInvalid, name)
	}
	_, err := c.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(c.table), Key: key(name), ConditionExpression: aws.String(CancelCondition),
		ExpressionAttributeNames:  map[string]string{"#status": futureevent.StatusAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":scheduled": &types.AttributeValueMemberS{Value: futureevent.Scheduled}},
	})
	var gone *types.ConditionalCheckFailedException
	if err == nil || errors.As(err, &gone) {
		return nil
	}
	return fmt.Errorf("futureevents: cancel %s: %w", name, err)
}

// Get reads event name (a consistent read) and its state
// (futureevent.Scheduled or Fired); futureevent.ErrNotFound when there is
// none.
func (c *Client) Get(ctx context.Context, name string) (futureevent.Event, string, error) {
	out, err := c.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(c.table), Key: key(name), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return futureevent.Event{}, "", fmt.Errorf("futureevents: get %s: %w", name, err)
	}
	if len(out.Item) == 0 {
		return futureevent.Event{}, "", fmt.Errorf("%w: %s", futureevent.ErrNotFound, name)
	}
	attrs := map[string]string{}
	for k, v := range out.Item {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			attrs[k] = s.Value
		}
	}
	return futureevent.FromItem(attrs)
}

func key(name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{futureevent.NameAttr: &types.AttributeValueMemberS{Value: name}}
}
