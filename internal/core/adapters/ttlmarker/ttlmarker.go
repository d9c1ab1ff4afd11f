// Package ttlmarker is the DynamoDB TTL timer: a timer.Timer
// whose "schedule" of an item is a marker item in the same table
// (timerspec.MarkerKey) carrying the TTL attribute (epoch seconds, the due
// time rounded up) and the payload. DynamoDB deletes the marker some time
// after the due time (typically within 48 hours: timerspec.TTLPrecision);
// the deletion reaches the firing function through the table's stream,
// filtered to TTL deletions (timerspec.TTLFilterPattern), and
// PayloadsFromEvent reads the payload back for the firing core.
//
// Markers carry the schema's state attribute as timerspec.MarkerState, a
// state no schema arms, so the cancellation pipeline's stream filter
// (armed state) never sees them, and their time as the due attribute, so
// a state-keyed armed index holds them in one partition in time order.
//
// Arm puts the marker, Move overwrites it and Disarm deletes it: a
// user's delete, which the TTL filter drops from the stream. Get reads
// it (a strongly consistent GetItem); List, for the reconciler, Queries
// the markers' partition of the armed index (Config.Index), or scans the
// table without one.
package ttlmarker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// API is the part of the DynamoDB client the adapter uses.
type API interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// Config is the table, its TTL attribute and the schema.
type Config struct {
	Table string
	// TTLAttr is the table's TTL attribute. Default: timerspec.DefaultTTLAttr.
	TTLAttr string
	Schema  contract.Schema
	// Index is the table's state-keyed armed index, whose MarkerState
	// partition lists the markers. Default: "" (a Scan of the table).
	Index string
}

// ConfigFromEnv reads TABLE_NAME, TTL_ATTRIBUTE, the schema and the armed
// index (envvars.ArmedIndex: a state-keyed one lists the markers).
func ConfigFromEnv(e *lambdaenv.Env) Config {
	c := Config{Table: e.Require(envvars.Table), TTLAttr: e.Optional(envvars.TTLAttribute, timerspec.DefaultTTLAttr), Schema: e.Schema()}
	c.Index = MarkerIndex(e.Optional(envvars.ArmedIndex, ""), c.Schema)
	return c
}

// MarkerIndex is the index that lists the markers, from the armed index
// spec v (envvars.ArmedIndex): its name when it is state-keyed, else ""
// (a sharded index does not hold the markers; a spec that does not parse
// is the reconciler's to report).
func MarkerIndex(v string, s contract.Schema) string {
	x, ok, err := armedindex.Parse(v, s)
	if err != nil || !ok || !x.StateKeyed(s) {
		return ""
	}
	return x.Name
}

// Client is a timer.Timer of TTL markers.
type Client struct {
	api API
	cfg Config
}

var (
	_ timer.Timer  = (*Client)(nil)
	_ timer.Reader = (*Client)(nil)
)

// New checks cfg and returns a client.
func New(api API, cfg Config) (*Client, error) {
	if api == nil || cfg.Table == "" {
		return nil, errors.New("ttlmarker: New needs a DynamoDB client and a table name (TABLE_NAME)")
	}
	if cfg.Schema.PartitionKey == "" {
		return nil, errors.New("ttlmarker: config Schema is empty: set it to the item table's contract (" + envvars.ItemSchema + ")")
	}
	if cfg.TTLAttr == "" {
		cfg.TTLAttr = timerspec.DefaultTTLAttr
	}
	return &Client{api: api, cfg: cfg}, nil
}

func (c *Client) key(name string) map[string]types.AttributeValue {
	m := map[string]types.AttributeValue{}
	for k, v := range c.cfg.Schema.Attrs(timerspec.MarkerKey(c.cfg.Schema, name)) {
		m[k] = &types.AttributeValueMemberS{Value: v}
	}
	return m
}

func (c *Client) put(ctx context.Context, s contract.Schedule, cond string, vals map[string]types.AttributeValue) error {
	item := c.key(s.Name)
	item[c.cfg.TTLAttr] = &types.AttributeValueMemberN{Value: timerspec.TTLValue(s.At)}
	item[timerspec.MarkerPayloadAttr] = &types.AttributeValueMemberS{Value: c.cfg.Schema.EncodePayload(s.Payload)}
	item[c.cfg.Schema.StateAttr] = &types.AttributeValueMemberS{Value: timerspec.MarkerState}
	item[c.cfg.Schema.DueAttr] = &types.AttributeValueMemberS{Value: contract.FormatTime(s.At)}
	_, err := c.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(c.cfg.Table), Item: item, ConditionExpression: aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#pk": c.cfg.Schema.PartitionKey, "#p": timerspec.MarkerPayloadAttr},
		ExpressionAttributeValues: vals,
	})
	return err
}

// Arm implements timer.Timer: put the marker unless one with another
// payload exists (timer.ErrExists); the same payload again is a success.
func (c *Client) Arm(ctx context.Context, s contract.Schedule) error {
	err := c.put(ctx, s, "attribute_not_exists(#pk) OR #p = :p",
		map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: c.cfg.Schema.EncodePayload(s.Payload)}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return timer.ErrExists
	}
	if err != nil {
		return fmt.Errorf("ttlmarker: put marker %s: %w", s.Name, err)
	}
	return nil
}

// Move implements timer.Timer: overwrite the existing marker;
// timer.ErrNotFound when there is none (it fired, or was cancelled).
func (c *Client) Move(ctx context.Context, s contract.Schedule, _ time.Time) error {
	err := c.put(ctx, s, "attribute_exists(#pk) AND attribute_exists(#p)", nil)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return timer.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("ttlmarker: move marker %s: %w", s.Name, err)
	}
	return nil
}

// Disarm implements timer.Timer: delete the marker (a cancel); none is
// timer.ErrNotFound.
func (c *Client) Disarm(ctx context.Context, name string, _ time.Time) error {
	_, err := c.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(c.cfg.Table), Key: c.key(name),
		ConditionExpression:      aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": c.cfg.Schema.PartitionKey},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return timer.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("ttlmarker: delete marker %s: %w", name, err)
	}
	return nil
}

// IsTTLDeletion reports whether a stream record is a deletion by DynamoDB's
// TTL process (the same test as the event source mapping's filter, kept
// in the function too: a mapping edited by hand must not turn a user's
// cancel into a firing).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html
func IsTTLDeletion(r events.DynamoDBEventRecord) bool {
	return r.EventName == "REMOVE" && r.UserIdentity != nil &&
		r.UserIdentity.Type == timerspec.TTLIdentityType && r.UserIdentity.PrincipalID == timerspec.TTLIdentityPrincipal
}

// Dispatch is one TTL deletion to fire.
type Dispatch struct {
	// SequenceNumber names the record in batch item failures (for a
	// stream, Lambda reads the itemIdentifier as the sequence number:
	// https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html).
	SequenceNumber string
	// Payload is the marker's payload, as EncodePayload wrote it.
	Payload []byte
}

// PayloadsFromEvent returns the payloads of the TTL deletions of markers
// in a stream batch; other records are skipped.
func PayloadsFromEvent(ev events.DynamoDBEvent) []Dispatch {
	var out []Dispatch
	for _, r := range ev.Records {
		if !IsTTLDeletion(r) {
			continue
		}
		p, ok := r.Change.OldImage[timerspec.MarkerPayloadAttr]
		if !ok || p.DataType() != events.DataTypeString {
			continue
		}
		out = append(out, Dispatch{SequenceNumber: r.Change.SequenceNumber, Payload: []byte(p.String())})
	}
	return out
}

// streamEvent decodes a DynamoDB stream batch; ok is false for anything
// else (a schedule's or an execution's payload).
func streamEvent(raw json.RawMessage) (events.DynamoDBEvent, bool) {
	var probe struct {
		Records []struct {
			EventSource string `json:"eventSource"`
		} `json:"Records"`
	}
	if json.Unmarshal(raw, &probe) != nil || len(probe.Records) == 0 || probe.Records[0].EventSource != "aws:dynamodb" {
		return events.DynamoDBEvent{}, false
	}
	var ev events.DynamoDBEvent
	if json.Unmarshal(raw, &ev) != nil {
		return events.DynamoDBEvent{}, false
	}
	return ev, true
}
