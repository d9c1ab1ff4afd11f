package dynamo

import (
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/tableschema"
)

// DecodeStreamRecord turns a record of the task table's stream
// (NEW_AND_OLD_IMAGES) into a change. An image the record lacks is left
// nil, even where its kind implies one: the consumer decides what that
// means. An image that is present but malformed, an unknown event name or
// a missing event id is an error.
func DecodeStreamRecord(r events.DynamoDBEventRecord) (task.Change, error) {
	c := task.Change{EventID: r.EventID, Kind: task.ChangeKind(r.EventName)}
	switch c.Kind {
	case task.ChangeInsert, task.ChangeModify, task.ChangeRemove:
	default:
		return task.Change{}, fmt.Errorf("stream record %s: unknown event name %q", r.EventID, r.EventName)
	}
	if c.EventID == "" {
		return task.Change{}, errors.New("stream record lacks an eventID")
	}
	keys := r.Change.Keys
	if keys[tableschema.PartitionKey].DataType() != events.DataTypeString || keys[tableschema.SortKey].DataType() != events.DataTypeString {
		return task.Change{}, fmt.Errorf("stream record %s lacks its %s/%s keys", r.EventID, tableschema.PartitionKey, tableschema.SortKey)
	}
	c.UserID, c.TaskID = keys[tableschema.PartitionKey].String(), keys[tableschema.SortKey].String()
	var err error
	if c.Old, err = decodeImage(r.Change.OldImage); err != nil {
		return task.Change{}, fmt.Errorf("stream record %s old image: %w", r.EventID, err)
	}
	if c.New, err = decodeImage(r.Change.NewImage); err != nil {
		return task.Change{}, fmt.Errorf("stream record %s new image: %w", r.EventID, err)
	}
	return c, nil
}

// decodeImage reads the S attributes of an image (nil for no image); the
// task table holds no other types, and others are ignored.
func decodeImage(img map[string]events.DynamoDBAttributeValue) (*task.Task, error) {
	if len(img) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(img))
	for k, v := range img {
		if v.DataType() == events.DataTypeString {
			m[k] = v.String()
		}
	}
	t, err := tableschema.FromItem(m)
	if err != nil {
		return nil, err
	}
	return &t, nil
}
