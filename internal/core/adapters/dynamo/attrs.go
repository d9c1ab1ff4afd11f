package dynamo

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The attribute helpers of every table here: string items (the task
// table's, the contract's) through toAttrs and fromAttrs, and the
// campaign table's typed attributes through avS, avN, put* and get*.

// item is an item of a table, or a key, as the SDK carries it.
type item = map[string]types.AttributeValue

func avS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func avN(v int) types.AttributeValue    { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }

// putS, putN and putT leave out empty values (a smaller item, and absent
// means zero on the way back).
func putS(m item, k, v string) {
	if v != "" {
		m[k] = avS(v)
	}
}
func putN(m item, k string, v int) {
	if v != 0 {
		m[k] = avN(v)
	}
}
func putT(m item, k string, t time.Time) {
	if !t.IsZero() {
		m[k] = avS(t.UTC().Format(time.RFC3339Nano))
	}
}

func getS(m item, k string) string {
	if v, ok := m[k].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// getN and getT report a damaged value instead of reading it as zero.
func getN(m item, k string) (int, error) {
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
func getT(m item, k string) (time.Time, error) {
	v := getS(m, k)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("attribute %s = %q is not RFC 3339: %w", k, v, err)
	}
	return t, nil
}

// attrReader collects the first decode error.
type attrReader struct {
	m   item
	err error
}

func (r *attrReader) n(k string) int {
	v, err := getN(r.m, k)
	if r.err == nil {
		r.err = err
	}
	return v
}
func (r *attrReader) t(k string) time.Time {
	v, err := getT(r.m, k)
	if r.err == nil {
		r.err = err
	}
	return v
}

// toAttrs renders string attributes as DynamoDB S values.
func toAttrs(m map[string]string) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		out[k] = avS(v)
	}
	return out
}

// fromAttrs keeps the S attributes of an item; the task table has no
// others, and anything else is not ours to read.
func fromAttrs(item map[string]types.AttributeValue) map[string]string {
	out := make(map[string]string, len(item))
	for k, v := range item {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			out[k] = s.Value
		}
	}
	return out
}

func isConditionFailed(err error) bool {
	var cf *types.ConditionalCheckFailedException
	return errors.As(err, &cf)
}

// conditionAs maps a refused condition to the caller's sentinel (such as
// campaign.ErrConditionFailed), keeping the SDK's error wrapped too;
// other errors pass unchanged.
func conditionAs(err, sentinel error) error {
	if isConditionFailed(err) {
		return fmt.Errorf("%w (%w)", sentinel, err)
	}
	return err
}

// decodeAll decodes the items of a page with decode, stopping at the
// first error.
func decodeAll[T any](items []item, decode func(item) (T, error)) ([]T, error) {
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
