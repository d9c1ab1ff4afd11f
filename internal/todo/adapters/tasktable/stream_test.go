package tasktable

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/testfixture"
)

func loadRecord(t *testing.T, name string) events.DynamoDBEventRecord {
	return testfixture.Load[events.DynamoDBEventRecord](t, name)
}

// The task table's stream records decode with the core's decoder and the
// to-do app's schema (tableschema.Todo).
func TestDecodeStreamRecord(t *testing.T) {
	ts := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	key := task.Key("user-1", "01JD00000000000000000000AA")
	pending := contract.Item{Key: key, State: "Pending", Due: ts("2030-01-02T03:04:05Z"), Token: "tok"}
	done := pending
	done.State = "Done"
	expired := pending
	expired.State = "Expired"
	other := pending
	other.State = "Sleeping"
	p := func(it contract.Item) *contract.Item { return &it }

	for _, tc := range []struct {
		name    string
		schema  contract.Schema
		fixture string
		want    changefeed.Change
		wantErr bool
	}{
		{"insert", tableschema.Todo(), "insert.json", changefeed.Change{EventID: "ev-insert-1", Key: key, Kind: changefeed.Insert, New: p(pending)}, false},
		{"modify ignores non-string attributes", tableschema.Todo(), "modify.json",
			changefeed.Change{EventID: "ev-modify-1", Key: key, Kind: changefeed.Modify, Old: p(pending), New: p(done)}, false},
		{"remove", tableschema.Todo(), "remove.json", changefeed.Change{EventID: "ev-remove-1", Key: key, Kind: changefeed.Remove, Old: p(pending)}, false},
		{"missing old image is left nil", tableschema.Todo(), "modify_missing_old.json",
			changefeed.Change{EventID: "ev-modify-2", Key: key, Kind: changefeed.Modify, New: p(expired)}, false},
		{"a state outside the schema's is just not armed", tableschema.Todo(), "other_state.json",
			changefeed.Change{EventID: "ev-modify-3", Key: key, Kind: changefeed.Modify, Old: p(pending), New: p(other)}, false},
		{"a record of another table's keys", tableschema.Todo(), "consumer_insert.json", changefeed.Change{}, true},
		{"image without its key", tableschema.Todo(), "image_without_key.json", changefeed.Change{}, true},
		{"missing event id", tableschema.Todo(), "missing_event_id.json", changefeed.Change{}, true},
		{"unknown event name", tableschema.Todo(), "unknown_event.json", changefeed.Change{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dynamo.DecodeStreamRecord(tc.schema, loadRecord(t, tc.fixture))
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("change:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeStreamRecordKeepsNilImages(t *testing.T) {
	for _, kind := range []string{"INSERT", "MODIFY", "REMOVE"} {
		t.Run(kind, func(t *testing.T) {
			keys := map[string]events.DynamoDBAttributeValue{
				"userId": events.NewStringAttribute("u1"), "taskId": events.NewStringAttribute("01JD00000000000000000000AA"),
			}
			got, err := dynamo.DecodeStreamRecord(tableschema.Todo(), events.DynamoDBEventRecord{EventID: "e1", EventName: kind,
				Change: events.DynamoDBStreamRecord{Keys: keys}})
			if err != nil {
				t.Fatal(err)
			}
			if got.Old != nil || got.New != nil || got.Kind != changefeed.Kind(kind) || got.EventID != "e1" ||
				got.Key != task.Key("u1", "01JD00000000000000000000AA") {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestDecodeStreamRecordNeedsKeys(t *testing.T) {
	if _, err := dynamo.DecodeStreamRecord(tableschema.Todo(), events.DynamoDBEventRecord{EventID: "e1", EventName: "REMOVE"}); err == nil {
		t.Fatal("a record without keys must be an error: nothing can be cancelled without its key")
	}
}
