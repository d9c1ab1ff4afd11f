// Package dynamo is the core's DynamoDB adapter, for a table of any
// schema: the item store of a contract.Schema (fire.Store), the armed
// items the reconciler reads (reconcile.Items) and the decoder of the
// table's stream records (changefeed.Change). An adopter's store of its
// own table (internal/todo/adapters/tasktable,
// internal/campaigns/adapters/campaigntable) is built on the helpers
// here: one client interface (API), the attribute helpers, the mapping
// of a refused condition, the expression builder, Query paging, the key
// cursor and the conversion of stream images.
package dynamo

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The attribute helpers of every table: string items (the task
// table's, the contract's) through ToAttrs and FromAttrs, and typed
// attributes (the campaign table's) through S, N, Put* and Get*.

// Item is an item of a table, or a key, as the SDK carries it.
type Item = map[string]types.AttributeValue

// S is v as a DynamoDB string (S) value.
func S(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// N is v as a DynamoDB number (N) value.
func N(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }

// PutS, PutN and PutTime set attribute k of m, leaving out empty values
// (a smaller item, and absent means zero on the way back).

// PutS sets the string attribute k of m unless v is "".
func PutS(m Item, k, v string) {
	if v != "" {
		m[k] = S(v)
	}
}

// PutN sets the number attribute k of m unless v is 0.
func PutN(m Item, k string, v int) {
	if v != 0 {
		m[k] = N(v)
	}
}

// PutTime sets the attribute k of m to t as an RFC 3339 string in UTC,
// unless t is zero.
func PutTime(m Item, k string, t time.Time) {
	if !t.IsZero() {
		m[k] = S(t.UTC().Format(time.RFC3339Nano))
	}
}

// GetS reads the string attribute k of m ("" when it is absent or not
// a string).
func GetS(m Item, k string) string {
	if v, ok := m[k].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// GetN and GetTime report a damaged value instead of reading it as zero.

// GetN reads the number attribute k of m (0 when it is absent).
func GetN(m Item, k string) (int, error) {
	v, ok := m[k].(*types.AttributeValueMemberN)
	if !ok {
		return 0, nil
	}
	i, err := strconv.Atoi(v.Value)
	if err != nil {
		return 0, fmt.Errorf("attribute %s = %q is not a whole number: %w", k, v.Value, err)
	}
	return i, nil
}

// GetTime reads the time attribute k of m as PutTime writes it (the zero
// time when it is absent).
func GetTime(m Item, k string) (time.Time, error) {
	v := GetS(m, k)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("attribute %s = %q is not RFC 3339: %w", k, v, err)
	}
	return t, nil
}

// Reader reads the attributes of Item with GetN and GetTime, keeping the
// first decode error in Err.
type Reader struct {
	Item Item
	Err  error
}

// N reads a number attribute (GetN).
func (r *Reader) N(k string) int {
	v, err := GetN(r.Item, k)
	if r.Err == nil {
		r.Err = err
	}
	return v
}

// Time reads a time attribute (GetTime).
func (r *Reader) Time(k string) time.Time {
	v, err := GetTime(r.Item, k)
	if r.Err == nil {
		r.Err = err
	}
	return v
}

// ToAttrs renders string attributes (a string item, or a key) as
// DynamoDB S values.
func ToAttrs(m map[string]string) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		out[k] = S(v)
	}
	return out
}

// FromAttrs keeps the S attributes of an item: the task table has no
// others, the contract reads strings only, and anything else is not ours
// to read.
func FromAttrs(item map[string]types.AttributeValue) map[string]string {
	out := make(map[string]string, len(item))
	for k, v := range item {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			out[k] = s.Value
		}
	}
	return out
}

// IsConditionFailed reports whether err is DynamoDB's refusal of a
// condition (ConditionalCheckFailedException).
func IsConditionFailed(err error) bool {
	var cf *types.ConditionalCheckFailedException
	return errors.As(err, &cf)
}

// ConditionAs maps a refused condition to the caller's sentinel (such as
// campaign.ErrConditionFailed), keeping the SDK's error wrapped too;
// other errors pass unchanged.
func ConditionAs(err, sentinel error) error {
	if IsConditionFailed(err) {
		return fmt.Errorf("%w (%w)", sentinel, err)
	}
	return err
}

// DecodeAll decodes the items of a page with decode, stopping at the
// first error.
func DecodeAll[T any](items []Item, decode func(Item) (T, error)) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, m := range items {
		v, err := decode(m)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
