package ttlmarker

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// ErrBadCursor: a List cursor that List did not write (or of another
// table's key).
var ErrBadCursor = errors.New("ttlmarker: bad list cursor")

// Get implements timer.Reader: the marker of the schedule called name, by
// a strongly consistent GetItem (a marker written a moment ago is seen).
// At is the time the payload was armed for (its reminder time, for a
// reminder's marker), whole seconds, as Create was given it; at is
// ignored (one marker per name). timer.ErrNotFound when there is none:
// it was cancelled, or DynamoDB's TTL deleted it (which fired it).
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_GetItem.html
func (c *Client) Get(ctx context.Context, name string, _ time.Time) (timer.Schedule, error) {
	out, err := c.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(c.cfg.Table), Key: c.key(name), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#p"),
		ExpressionAttributeNames: map[string]string{"#p": timerspec.MarkerPayloadAttr},
	})
	if err != nil {
		return timer.Schedule{}, fmt.Errorf("ttlmarker: get marker %s: %w", name, err)
	}
	p, ok := out.Item[timerspec.MarkerPayloadAttr].(*types.AttributeValueMemberS)
	if !ok {
		// No item, or an item of that key that is no marker.
		return timer.Schedule{}, fmt.Errorf("ttlmarker: get marker %s: %w", name, timer.ErrNotFound)
	}
	return c.schedule(name, p.Value)
}

// schedule is the schedule of the marker of name with that payload.
func (c *Client) schedule(name, payload string) (timer.Schedule, error) {
	p, err := c.cfg.Schema.DecodePayload([]byte(payload))
	if err != nil {
		return timer.Schedule{}, fmt.Errorf("ttlmarker: marker %s: %w", name, err)
	}
	at := p.Due
	if p.IsReminder() {
		at = p.Remind
	}
	return timer.Schedule{Name: name, At: at, Payload: p}, nil
}

// List implements timer.Reader: one page of the markers, each with its
// name, time and payload. With Config.Index, a Query of the markers'
// partition of the armed index (timerspec.MarkerState), in time order:
// it reads the markers only. Without one, a Scan of the table for
// markers (the partition key begins with timerspec.MarkerKeyPrefix): it
// reads the whole table, the adopter's items too, and its Limit counts
// the items it evaluates before the filter, so a page may hold fewer
// markers than the limit, or none, and still have a cursor; only an
// empty cursor ends the listing. Both are eventually consistent: a marker
// written or deleted a moment ago may be listed as it was (Get reads it
// consistently). A marker whose payload does not decode is listed by
// name only. The cursor is the LastEvaluatedKey, opaque (base64 of its
// JSON); one List did not write is an error wrapping ErrBadCursor.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Scan.html
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html
func (c *Client) List(ctx context.Context, page timer.PageRequest) (timer.Page, error) {
	limit := page.Limit
	if limit <= 0 {
		limit = timer.DefaultLimit
	}
	start, err := c.decodeCursor(page.Cursor)
	if err != nil {
		return timer.Page{}, err
	}
	var items []map[string]types.AttributeValue
	var last map[string]types.AttributeValue
	if c.cfg.Index != "" {
		out, err := c.api.Query(ctx, MarkerQuery(c.cfg, time.Time{}, start, min(limit, maxScanLimit)))
		if err != nil {
			return timer.Page{}, fmt.Errorf("ttlmarker: query index %s for markers: %w", c.cfg.Index, err)
		}
		items, last = out.Items, out.LastEvaluatedKey
	} else {
		out, err := c.api.Scan(ctx, &dynamodb.ScanInput{
			TableName:                 aws.String(c.cfg.Table),
			FilterExpression:          aws.String("begins_with(#pk, :prefix)"),
			ProjectionExpression:      aws.String("#pk, #p"),
			ExpressionAttributeNames:  map[string]string{"#pk": c.cfg.Schema.PartitionKey, "#p": timerspec.MarkerPayloadAttr},
			ExpressionAttributeValues: map[string]types.AttributeValue{":prefix": &types.AttributeValueMemberS{Value: timerspec.MarkerKeyPrefix}},
			Limit:                     aws.Int32(int32(min(limit, maxScanLimit))),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return timer.Page{}, fmt.Errorf("ttlmarker: scan for markers: %w", err)
		}
		items, last = out.Items, out.LastEvaluatedKey
	}
	var p timer.Page
	if p.Cursor, err = c.encodeCursor(last); err != nil {
		return timer.Page{}, err
	}
	for _, it := range items {
		pk, ok := it[c.cfg.Schema.PartitionKey].(*types.AttributeValueMemberS)
		if !ok || !strings.HasPrefix(pk.Value, timerspec.MarkerKeyPrefix) {
			continue
		}
		name := strings.TrimPrefix(pk.Value, timerspec.MarkerKeyPrefix)
		s := timer.Schedule{Name: name}
		if v, ok := it[timerspec.MarkerPayloadAttr].(*types.AttributeValueMemberS); ok {
			if full, err := c.schedule(name, v.Value); err == nil {
				s = full
			}
		}
		p.Schedules = append(p.Schedules, s)
	}
	return p, nil
}

// MarkerQuery is the Query of the markers' partition of the armed index
// cfg.Index, after start, up to the markers due by dueBy when it is
// set (the TTL watch reads only the expired ones). Markers store their
// time in FormatTime's spelling, so the string order is the time order.
func MarkerQuery(cfg Config, dueBy time.Time, start map[string]types.AttributeValue, limit int) *dynamodb.QueryInput {
	names := map[string]string{"#s": cfg.Schema.StateAttr}
	vals := map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: timerspec.MarkerState}}
	cond := "#s = :m"
	if !dueBy.IsZero() {
		names["#d"] = cfg.Schema.DueAttr
		vals[":by"] = &types.AttributeValueMemberS{Value: contract.FormatTime(dueBy)}
		cond += " AND #d <= :by"
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(cfg.Table), IndexName: aws.String(cfg.Index), KeyConditionExpression: aws.String(cond),
		ExpressionAttributeNames: names, ExpressionAttributeValues: vals, ExclusiveStartKey: start,
	}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	return in
}

// maxScanLimit bounds a page: the Scan reads at most 1 MB anyway.
const maxScanLimit = 1000

// keyAttrs are the names of the key attributes of a listing's last
// item: the table's, and the index's when List reads one.
func (c *Client) keyAttrs() []string {
	k := []string{c.cfg.Schema.PartitionKey}
	if !c.cfg.Schema.NoSortKey {
		k = append(k, c.cfg.Schema.SortKey)
	}
	if c.cfg.Index != "" {
		k = append(k, c.cfg.Schema.StateAttr, c.cfg.Schema.DueAttr)
	}
	return k
}

// encodeCursor renders a LastEvaluatedKey ("" for none): the base64 of
// the JSON of its string attributes.
func (c *Client) encodeCursor(k map[string]types.AttributeValue) (string, error) {
	if len(k) == 0 {
		return "", nil
	}
	m := make(map[string]string, len(k))
	for name, v := range k {
		s, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("ttlmarker: scan: key attribute %s of the last item read is not a string: the schema's keys are strings", name)
		}
		m[name] = s.Value
	}
	b, _ := json.Marshal(m) // a map of strings always marshals
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// decodeCursor reads a cursor encodeCursor wrote (nil for ""): the
// table's key attributes, each a non-empty string, and nothing else.
func (c *Client) decodeCursor(cur string) (map[string]types.AttributeValue, error) {
	if cur == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cur)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCursor, err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCursor, err)
	}
	want := c.keyAttrs()
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		return nil, fmt.Errorf("%w: it names %v, the table's key is %v", ErrBadCursor, got, want)
	}
	k := make(map[string]types.AttributeValue, len(m))
	for name, v := range m {
		if v == "" {
			return nil, fmt.Errorf("%w: key attribute %s is empty", ErrBadCursor, name)
		}
		k[name] = &types.AttributeValueMemberS{Value: v}
	}
	return k, nil
}
