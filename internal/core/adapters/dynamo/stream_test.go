package dynamo

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
	"github.com/unschedule/unschedule/internal/tooling/testfixture"
)

// consumer is an adopter's schema: other keys, due attribute and states.
func consumer() contract.Schema {
	return contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt",
		ArmedStates: []string{"Queued"}, FiredState: "Done", ScheduleNamePrefix: "job-"}.WithDefaults()
}

// An adopter's table: its own keys, due attribute and states (the to-do
// app's task table is tested with its adapter, internal/todo/adapters/tasktable).
func TestDecodeStreamRecord(t *testing.T) {
	got, err := DecodeStreamRecord(consumer(), testfixture.Load[events.DynamoDBEventRecord](t, "consumer_insert.json"))
	if err != nil {
		t.Fatal(err)
	}
	key := contract.Key{Partition: "t1", Sort: "j1"}
	want := changefeed.Change{EventID: "ev-consumer-1", Key: key, Kind: changefeed.Insert,
		New: &contract.Item{Key: key, State: "Queued", Due: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("change:\n got %+v\nwant %+v", got, want)
	}
}

// TestFromStreamImageConvertsEveryType: every DynamoDB type of a stream image
// becomes the SDK's value, nested ones included.
func TestFromStreamImageConvertsEveryType(t *testing.T) {
	want := Item{
		"s": S("x"), "n": N(7), "bool": &types.AttributeValueMemberBOOL{Value: true}, "null": &types.AttributeValueMemberNULL{Value: true},
		"b": &types.AttributeValueMemberB{Value: []byte{1, 2}}, "ss": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}}, "bs": &types.AttributeValueMemberBS{Value: [][]byte{{3}, {4}}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{S("y"), &types.AttributeValueMemberM{Value: Item{"k": N(1)}}}},
		"m": &types.AttributeValueMemberM{Value: Item{"inner": &types.AttributeValueMemberL{Value: []types.AttributeValue{N(2)}}}},
	}
	got, err := FromStreamImage(testenv.StreamImage(t, want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("FromStreamImage =\n %#v\nwant\n %#v", got, want)
	}
}
