package campaigntable

import (
	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
)

// StreamSendTask reads a send task from a stream record's image (the
// campaign table's stream, NEW_IMAGE or NEW_AND_OLD_IMAGES) with the
// store's own decoding, so the live progress shows a task exactly as GET
// /campaigns/{id} does. An image that is not a task is an error.
func StreamSendTask(img map[string]events.DynamoDBAttributeValue) (campaign.SendTask, error) {
	m, err := dynamo.FromStreamImage(img)
	if err != nil {
		return campaign.SendTask{}, err
	}
	return unmarshalTask(m)
}
