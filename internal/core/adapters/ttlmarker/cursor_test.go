package ttlmarker

import (
	"encoding/base64"
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
)

func newCursorClient(t *testing.T, noSortKey bool) *Client {
	t.Helper()
	s := contract.Default()
	if noSortKey {
		s.SortKey, s.NoSortKey = "", true
	}
	c, err := New(&dynamodb.Client{}, Config{Table: "items", Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A LastEvaluatedKey round-trips through the cursor, whatever it holds
// (it may be an adopter's item: the Scan's Limit counts items before the
// filter).
func TestCursorRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name      string
		noSortKey bool
		key       map[string]types.AttributeValue
	}{
		{"none", false, nil},
		{"a marker", false, map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "unschedule#ttl#item-1"},
			"sk": &types.AttributeValueMemberS{Value: "marker"}}},
		{"an adopter's item with odd characters", false, map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "t/1 \"é\"\n"}, "sk": &types.AttributeValueMemberS{Value: "{}+="}}},
		{"a table without a sort key", true, map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "p"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCursorClient(t, tc.noSortKey)
			cur, err := c.encodeCursor(tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if (cur == "") != (tc.key == nil) {
				t.Fatalf("cursor %q for key %v", cur, tc.key)
			}
			got, err := c.decodeCursor(cur)
			if err != nil || !reflect.DeepEqual(got, tc.key) {
				t.Fatalf("decode(%q) = %v, %v; want %v", cur, got, err, tc.key)
			}
		})
	}
}

// A cursor List did not write is an error wrapping ErrBadCursor, never a
// panic nor a Scan from somewhere else.
func TestBadCursorIsAnError(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct{ name, cursor string }{
		{"not base64", "!!!"},
		{"padded base64", base64.URLEncoding.EncodeToString([]byte(`{"pk":"a","sk":"b"}`))},
		{"not JSON", b64("pk=a")},
		{"JSON null", b64("null")},
		{"JSON array", b64(`["a"]`)},
		{"a number value", b64(`{"pk":1,"sk":"b"}`)},
		{"missing the sort key", b64(`{"pk":"a"}`)},
		{"another table's key", b64(`{"id":"a","sk":"b"}`)},
		{"an extra attribute", b64(`{"pk":"a","sk":"b","x":"c"}`)},
		{"an empty value", b64(`{"pk":"","sk":"b"}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := newCursorClient(t, false).decodeCursor(tc.cursor)
			if !errors.Is(err, ErrBadCursor) || k != nil {
				t.Fatalf("decode(%q) = %v, %v; want ErrBadCursor", tc.cursor, k, err)
			}
		})
	}
	k, err := newCursorClient(t, true).decodeCursor(b64(`{"pk":"a","sk":"b"}`))
	if !errors.Is(err, ErrBadCursor) {
		t.Fatalf("a sort key on a table without one: %v, %v; want ErrBadCursor", k, err)
	}
}

func TestCursorOfANonStringKeyIsAnError(t *testing.T) {
	_, err := newCursorClient(t, false).encodeCursor(map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberN{Value: "1"}, "sk": &types.AttributeValueMemberS{Value: "b"}})
	if err == nil {
		t.Fatal("a number key encoded; want an error")
	}
}
