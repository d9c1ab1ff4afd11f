package dynamo

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
)

// StreamSendTask reads a send task from a stream record's image (the
// campaign table's stream, NEW_IMAGE or NEW_AND_OLD_IMAGES) with the
// store's own decoding, so the live progress shows a task exactly as GET
// /campaigns/{id} does. An image that is not a task is an error.
func StreamSendTask(img map[string]events.DynamoDBAttributeValue) (campaign.SendTask, error) {
	m, err := fromStream(img)
	if err != nil {
		return campaign.SendTask{}, err
	}
	return unmarshalTask(m)
}

// fromStream converts an image of the Lambda event (aws-lambda-go's
// types) into the SDK's attribute values.
func fromStream(img map[string]events.DynamoDBAttributeValue) (item, error) {
	m := make(item, len(img))
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
		m, err := fromStream(v.Map())
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unknown DynamoDB data type %d", v.DataType())
}
