package tasktable

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
)

// FuzzDecodeStreamRecord decodes arbitrary JSON as a stream record: never
// a panic, and a decoded change always has a known kind and its event id.
func FuzzDecodeStreamRecord(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"eventID":"e","eventName":"REMOVE","dynamodb":{"Keys":{"userId":{"S":"u"},"taskId":{"S":"t"}},"OldImage":{"status":{"N":"1"}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r events.DynamoDBEventRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return
		}
		c, err := dynamo.DecodeStreamRecord(tableschema.Todo(), r)
		if err != nil {
			return
		}
		if c.EventID == "" || c.EventID != r.EventID {
			t.Fatalf("decoded a change without its event id: %+v", c)
		}
		switch c.Kind {
		case changefeed.Insert, changefeed.Modify, changefeed.Remove:
		default:
			t.Fatalf("decoded an unknown kind %q", c.Kind)
		}
	})
}
