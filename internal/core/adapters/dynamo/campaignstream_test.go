package dynamo

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
)

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
		return map[string]any{"M": streamImage(v.Value)}
	}
	panic("unknown attribute type")
}

func streamImage(m item) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = streamJSON(v)
	}
	return out
}

// asStream is m as the Lambda event decodes it.
func asStream(t *testing.T, m item) map[string]events.DynamoDBAttributeValue {
	t.Helper()
	b, err := json.Marshal(streamImage(m))
	if err != nil {
		t.Fatal(err)
	}
	var img map[string]events.DynamoDBAttributeValue
	if err := json.Unmarshal(b, &img); err != nil {
		t.Fatal(err)
	}
	return img
}

// TestStreamTaskReadsWhatTheStoreWrites: a task written by the store
// (marshalTask) comes back equal through its stream image, in every
// state and with every optional field.
func TestStreamTaskReadsWhatTheStoreWrites(t *testing.T) {
	at := time.Date(2026, 6, 1, 7, 0, 0, 123, time.UTC)
	base := campaign.SendTask{CampaignID: "c1", ID: campaign.TaskID("c1", 3), Index: 3, Email: "r@example.com", Subject: "Hi",
		SendAt: at, Local: "2026-06-01 09:00", TimeZone: "Europe/Berlin", State: campaign.Pending, SchedulerRequestToken: "tok"}
	running := base
	running.State, running.Attempt, running.ClaimedAt, running.LeaseUntil = campaign.Running, 1, at, at.Add(5*time.Minute)
	finished := running
	finished.State, finished.SentAt, finished.MessageID, finished.UpdatedAt = campaign.Finished, at.Add(time.Second), "m-1", at.Add(time.Second)
	failed := running
	failed.State, failed.Error, failed.Retimed = campaign.Failed, "SES refused", 2
	cancelled := base
	cancelled.State, cancelled.Reason = campaign.Cancelled, "campaign cancelled"
	for _, task := range []campaign.SendTask{base, running, finished, failed, cancelled} {
		t.Run(string(task.State), func(t *testing.T) {
			got, err := StreamSendTask(asStream(t, marshalTask(task)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, task) {
				t.Fatalf("StreamSendTask =\n %+v\nwant\n %+v", got, task)
			}
		})
	}
}

func TestStreamTaskRejects(t *testing.T) {
	task := campaign.SendTask{CampaignID: "c1", ID: "c1-00000", State: campaign.Pending}
	for _, tc := range []struct {
		name string
		edit func(item)
		want string
	}{
		{"no state", func(m item) { delete(m, attrState) }, "lacks campaignId, taskId or state"},
		{"damaged number", func(m item) { m[attrAttempt] = &types.AttributeValueMemberN{Value: "1.5"} }, "not a whole number"},
		{"damaged time", func(m item) { m["sendAt"] = avS("yesterday") }, "not RFC 3339"},
		{"a checkpoint", func(m item) { clear(m); m["next"] = avN(3) }, "lacks campaignId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := marshalTask(task)
			tc.edit(m)
			if _, err := StreamSendTask(asStream(t, m)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("StreamSendTask = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestFromStreamConvertsEveryType: every DynamoDB type of a stream image
// becomes the SDK's value, nested ones included.
func TestFromStreamConvertsEveryType(t *testing.T) {
	want := item{
		"s": avS("x"), "n": avN(7), "bool": &types.AttributeValueMemberBOOL{Value: true}, "null": &types.AttributeValueMemberNULL{Value: true},
		"b": &types.AttributeValueMemberB{Value: []byte{1, 2}}, "ss": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}}, "bs": &types.AttributeValueMemberBS{Value: [][]byte{{3}, {4}}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{avS("y"), &types.AttributeValueMemberM{Value: item{"k": avN(1)}}}},
		"m": &types.AttributeValueMemberM{Value: item{"inner": &types.AttributeValueMemberL{Value: []types.AttributeValue{avN(2)}}}},
	}
	got, err := fromStream(asStream(t, want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fromStream =\n %#v\nwant\n %#v", got, want)
	}
}
