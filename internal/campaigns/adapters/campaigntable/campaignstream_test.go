package campaigntable

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

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
			got, err := StreamSendTask(testenv.StreamImage(t, marshalTask(task)))
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
		edit func(dynamo.Item)
		want string
	}{
		{"no state", func(m dynamo.Item) { delete(m, attrState) }, "lacks campaignId, taskId or state"},
		{"damaged number", func(m dynamo.Item) { m[attrAttempt] = &types.AttributeValueMemberN{Value: "1.5"} }, "not a whole number"},
		{"damaged time", func(m dynamo.Item) { m["sendAt"] = dynamo.S("yesterday") }, "not RFC 3339"},
		{"a checkpoint", func(m dynamo.Item) { clear(m); m["next"] = dynamo.N(3) }, "lacks campaignId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := marshalTask(task)
			tc.edit(m)
			if _, err := StreamSendTask(testenv.StreamImage(t, m)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("StreamSendTask = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
