package dynamo

import (
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
)

// DecodeStreamRecord turns a record of an item table's stream
// (NEW_AND_OLD_IMAGES) into a change, reading the key and the images with
// the schema's names. An image the record lacks is left nil, even where
// its kind implies one: the consumer decides what that means. A record
// without its key (as the schema names it), an image that lacks it, an
// unknown event name or a missing event id is an error.
func DecodeStreamRecord(s contract.Schema, r events.DynamoDBEventRecord) (changefeed.Change, error) {
	c := changefeed.Change{EventID: r.EventID, Kind: changefeed.Kind(r.EventName)}
	switch c.Kind {
	case changefeed.Insert, changefeed.Modify, changefeed.Remove:
	default:
		return changefeed.Change{}, fmt.Errorf("stream record %s: unknown event name %q", r.EventID, r.EventName)
	}
	if c.EventID == "" {
		return changefeed.Change{}, errors.New("stream record lacks an eventID")
	}
	keys, err := s.ItemFrom(streamStrings(r.Change.Keys))
	if err != nil {
		return changefeed.Change{}, fmt.Errorf("stream record %s keys: %w", r.EventID, err)
	}
	c.Key = keys.Key
	if c.Old, err = decodeImage(s, r.Change.OldImage); err != nil {
		return changefeed.Change{}, fmt.Errorf("stream record %s old image: %w", r.EventID, err)
	}
	if c.New, err = decodeImage(s, r.Change.NewImage); err != nil {
		return changefeed.Change{}, fmt.Errorf("stream record %s new image: %w", r.EventID, err)
	}
	return c, nil
}

// StreamKey reads the item key of a record as the schema names it (the
// zero key when the record lacks it).
func StreamKey(s contract.Schema, r events.DynamoDBEventRecord) contract.Key {
	it, _ := s.ItemFrom(streamStrings(r.Change.Keys))
	return it.Key
}

// decodeImage reads an image with the schema (nil for no image).
func decodeImage(s contract.Schema, img map[string]events.DynamoDBAttributeValue) (*contract.Item, error) {
	if len(img) == 0 {
		return nil, nil
	}
	it, err := s.ItemFrom(streamStrings(img))
	if err != nil {
		return nil, err
	}
	return &it, nil
}

// streamStrings keeps the S attributes of an image: the contract reads
// strings only, and others are the writer's own.
func streamStrings(img map[string]events.DynamoDBAttributeValue) map[string]string {
	m := make(map[string]string, len(img))
	for k, v := range img {
		if v.DataType() == events.DataTypeString {
			m[k] = v.String()
		}
	}
	return m
}

// FromStreamImage converts an image of a stream record as the Lambda
// event carries it (aws-lambda-go's types) into the SDK's attribute
// values, every type and nested ones included, so an adapter decodes a
// stream image with the code that decodes its reads.
func FromStreamImage(img map[string]events.DynamoDBAttributeValue) (Item, error) {
	m := make(Item, len(img))
	for k, v := range img {
		av, err := streamValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		m[k] = av
	}
	return m, nil
}

func streamValue(v events.DynamoDBAttributeValue) (types.AttributeValue, error) {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		var l []types.AttributeValue
		for i, e := range v.List() {
			av, err := streamValue(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			l = append(l, av)
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case events.DataTypeMap:
		m, err := FromStreamImage(v.Map())
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unknown DynamoDB data type %d", v.DataType())
}
