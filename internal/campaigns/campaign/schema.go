package campaign

import (
	"fmt"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
)

// Attribute names of a send task item that the public contract reads and
// writes (TaskSchema). The stores write the rest of the task beside them.
const (
	AttrState     = "state"
	AttrSendAt    = "sendAt"
	AttrToken     = "schedulerRequestToken"
	AttrClaimedAt = "claimedAt"
	AttrSentAt    = "sentAt"
	AttrFiredAt   = "firedAt"
	// AttrInline is never written: campaign schedules are made by
	// provisioning, not by the stream path (the contract needs a name).
	AttrInline = "scheduleInline"
)

// TaskSchema is a send task as an item under the public contract
// (contract.Schema): due time sendAt, state "state" armed while Pending,
// Running as the fired (claimed) state, claimedAt the start of the
// claim's lease, sentAt the delivery mark. So the contract's conditional
// writes claim a task (Pending at its send time → Running) and take a
// stale claim over, in DynamoDB and in memory alike.
//
// The campaign-visible states stay the task's own: a delivered task moves
// Running → Finished with sentAt (the delivery mark) in the same write,
// and Failed, Cancelled and Suppressed are outcomes beside the contract's
// states (an item in none of the contract's states is done, for the
// contract as for a writer's completion).
var TaskSchema = contract.Schema{
	PartitionKey: tk.PartitionKey, SortKey: tk.SortKey,
	DueAttr: AttrSendAt, StateAttr: AttrState,
	ArmedStates: []string{string(Pending)}, FiredState: string(Running),
	TokenAttr: AttrToken, InlineAttr: AttrInline,
	FiredAtAttr: AttrFiredAt, ClaimAtAttr: AttrClaimedAt, DeliveredAtAttr: AttrSentAt,
	ScheduleNamePrefix: ScheduleNamePrefix,
}

// ItemKey is the contract key of a task: its item's pk and sk.
func ItemKey(k Key) contract.Key {
	return contract.Key{Partition: tk.CampaignPK(k.CampaignID), Sort: tk.TaskSK(k.TaskID)}
}

// CampaignItemKey is the contract key of a campaign's own item (its pk
// and META): the key its campaign-wide log lines carry (logfield.Key).
func CampaignItemKey(campaignID string) contract.Key {
	return contract.Key{Partition: tk.CampaignPK(campaignID), Sort: tk.MetaSK}
}

// KeyOf is the task key of a contract key (ItemKey's inverse).
func KeyOf(k contract.Key) (Key, error) {
	c, ok1 := strings.CutPrefix(k.Partition, tk.CampaignPrefix)
	t, ok2 := strings.CutPrefix(k.Sort, tk.TaskPrefix)
	if !ok1 || !ok2 || c == "" || t == "" {
		return Key{}, fmt.Errorf("key %s is not a send task's", k)
	}
	return Key{CampaignID: c, TaskID: t}, nil
}

// Item is the contract's view of the task.
func (t SendTask) Item() contract.Item {
	return contract.Item{
		Key: ItemKey(t.Key()), State: string(t.State), Due: t.SendAt.UTC().Truncate(time.Second),
		Token: t.SchedulerRequestToken, Delivered: !t.SentAt.IsZero(), ClaimAt: t.ClaimedAt,
	}
}

// Payload is the contract payload of a task's firing at its send time.
func (t SendTask) Payload() contract.Payload {
	return contract.Payload{Key: ItemKey(t.Key()), Due: t.SendAt.UTC().Truncate(time.Second)}
}

// Claim moves a task that is Pending at send time due to Running for
// one attempt (the contract's claim, TaskSchema.Claimable), leased until
// now+lease: claimedAt = now at whole seconds, as the contract writes it.
func Claim(t SendTask, due, now time.Time, lease time.Duration) (SendTask, error) {
	if !TaskSchema.Claimable(t.Item(), contract.FormatTime(due)) {
		return t, refuse(t, Running)
	}
	now = now.UTC().Truncate(time.Second)
	t.State, t.Attempt, t.ClaimedAt, t.LeaseUntil, t.UpdatedAt = Running, t.Attempt+1, now, now.Add(lease), now
	return t, nil
}

// TakeOver gives a Running task whose claim for send time due is at
// least lease old, and that is not sent, to a new attempt (the contract's
// take-over, TaskSchema.TakeOverable): a new claim, counted as one.
func TakeOver(t SendTask, due, now time.Time, lease time.Duration) (SendTask, error) {
	if !TaskSchema.TakeOverable(t.Item(), contract.FormatTime(due), now, lease) {
		return t, refuse(t, Running)
	}
	now = now.UTC().Truncate(time.Second)
	t.Attempt, t.ClaimedAt, t.LeaseUntil, t.UpdatedAt = t.Attempt+1, now, now.Add(lease), now
	return t, nil
}
