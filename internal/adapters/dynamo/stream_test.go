package dynamo

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/testfixture"
)

func loadRecord(t *testing.T, name string) events.DynamoDBEventRecord {
	return testfixture.Load[events.DynamoDBEventRecord](t, name)
}

func TestDecodeStreamRecord(t *testing.T) {
	ts := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	pending := task.Task{
		UserID: "user-1", TaskID: "01JD00000000000000000000AA", Title: "Buy milk", Status: task.StatusPending,
		DueAt: ts("2030-01-02T03:04:05Z"), CreatedAt: ts("2030-01-01T00:00:00Z"), UpdatedAt: ts("2030-01-01T00:00:00Z"),
		ScheduleToken: "tok",
	}
	done := pending
	done.Status, done.Description = task.StatusDone, "semi-skimmed"
	done.UpdatedAt, done.CompletedAt = ts("2030-01-01T12:00:00Z"), ts("2030-01-01T12:00:00Z")
	repair := pending
	repair.ScheduleRepair = true
	expired := pending
	expired.Status, expired.UpdatedAt, expired.ExpiredAt = task.StatusExpired, ts("2030-01-02T03:04:06Z"), ts("2030-01-02T03:04:06Z")
	p := func(t task.Task) *task.Task { return &t }

	for _, tc := range []struct {
		name    string
		fixture string
		want    task.Change
		wantErr bool
	}{
		{"insert", "insert.json", task.Change{EventID: "ev-insert-1", UserID: "user-1", TaskID: "01JD00000000000000000000AA", Kind: task.ChangeInsert, New: p(pending)}, false},
		{"modify ignores non-string attributes", "modify.json",
			task.Change{EventID: "ev-modify-1", UserID: "user-1", TaskID: "01JD00000000000000000000AA", Kind: task.ChangeModify, Old: p(pending), New: p(done)}, false},
		{"remove", "remove.json", task.Change{EventID: "ev-remove-1", UserID: "user-1", TaskID: "01JD00000000000000000000AA", Kind: task.ChangeRemove, Old: p(repair)}, false},
		{"missing old image is left nil", "modify_missing_old.json",
			task.Change{EventID: "ev-modify-2", UserID: "user-1", TaskID: "01JD00000000000000000000AA", Kind: task.ChangeModify, New: p(expired)}, false},
		{"missing event id", "missing_event_id.json", task.Change{}, true},
		{"malformed status", "malformed_status.json", task.Change{}, true},
		{"unknown event name", "unknown_event.json", task.Change{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeStreamRecord(loadRecord(t, tc.fixture))
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
			got, err := DecodeStreamRecord(events.DynamoDBEventRecord{EventID: "e1", EventName: kind,
				Change: events.DynamoDBStreamRecord{Keys: keys}})
			if err != nil {
				t.Fatal(err)
			}
			if got.Old != nil || got.New != nil || got.Kind != task.ChangeKind(kind) || got.EventID != "e1" ||
				got.UserID != "u1" || got.TaskID != "01JD00000000000000000000AA" {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestDecodeStreamRecordNeedsKeys(t *testing.T) {
	if _, err := DecodeStreamRecord(events.DynamoDBEventRecord{EventID: "e1", EventName: "REMOVE"}); err == nil {
		t.Fatal("a record without keys must be an error: nothing can be cancelled without a task id")
	}
}
