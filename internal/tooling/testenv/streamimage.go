package testenv

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// StreamImage is the item m (the SDK's attribute values) as a Lambda
// event of a table's stream decodes it: what a stream consumer reads of
// an item that a store wrote.
func StreamImage(t testing.TB, m map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	t.Helper()
	b, err := json.Marshal(streamJSONImage(m))
	if err != nil {
		t.Fatal(err)
	}
	var img map[string]events.DynamoDBAttributeValue
	if err := json.Unmarshal(b, &img); err != nil {
		t.Fatal(err)
	}
	return img
}

// streamJSONImage writes the attributes of an item as a stream record
// carries them.
func streamJSONImage(m map[string]types.AttributeValue) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = streamJSON(v)
	}
	return out
}

// streamJSON writes an SDK attribute value as a stream record carries it.
func streamJSON(av types.AttributeValue) any {
	b64 := base64.StdEncoding.EncodeToString
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": b64(v.Value)}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberBS:
		var l []string
		for _, b := range v.Value {
			l = append(l, b64(b))
		}
		return map[string]any{"BS": l}
	case *types.AttributeValueMemberL:
		var l []any
		for _, e := range v.Value {
			l = append(l, streamJSON(e))
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": streamJSONImage(v.Value)}
	}
	panic("unknown attribute type")
}
