package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
)

// Errors of the ports. Adapters wrap them (errors.Is).
var (
	// ErrNotFound: no such task or campaign.
	ErrNotFound = errors.New("not found")
	// ErrConditionFailed: a conditional write found the item changed;
	// nothing was written.
	ErrConditionFailed = errors.New("condition failed")
	// ErrNotSent: the sender has no record of the idempotency key.
	ErrNotSent = errors.New("not sent")
	// ErrBadCursor: a page cursor that no page returned.
	ErrBadCursor = errors.New("bad cursor")
	// ErrRetryable marks a send error that may succeed later (a throttle,
	// a timeout): the task goes back to Pending instead of Failed.
	ErrRetryable = errors.New("retryable send error")
)

// Clock reads and waits on time (clock.Clock): clock.System in a Lambda,
// clock.Fake in tests and the simulation.
type Clock = clock.Clock

// Tasks keeps send tasks.
type Tasks interface {
	// Get reads a task; ErrNotFound if missing.
	Get(ctx context.Context, k Key) (SendTask, error)
	// Claim moves the task Pending at send time due → Running (the Claim
	// rule: the contract's claim, TaskSchema) in one conditional write
	// and returns it; ErrConditionFailed when it is not Pending at due
	// (missing included).
	Claim(ctx context.Context, k Key, due, now time.Time, lease time.Duration) (SendTask, error)
	// TakeOver gives a Running, unsent task claimed for due at least
	// lease ago to a new attempt (the TakeOver rule: the contract's
	// take-over) in one conditional write and returns it;
	// ErrConditionFailed otherwise.
	TakeOver(ctx context.Context, k Key, due, now time.Time, lease time.Duration) (SendTask, error)
	// Replace writes next only if the stored task still has prev's State
	// and Attempt; ErrConditionFailed otherwise.
	Replace(ctx context.Context, prev, next SendTask) error
	// List reads a campaign's tasks in index order, from index from, at
	// most limit of them.
	List(ctx context.Context, campaignID string, from, limit int) ([]SendTask, error)
	// Open reads one page of the tasks that are Pending or Running, of
	// every campaign (a sparse index); cursor "" starts, a returned ""
	// ends.
	Open(ctx context.Context, cursor string, limit int) ([]SendTask, string, error)
}

// Campaigns keeps campaign items.
type Campaigns interface {
	// Campaign reads a campaign; ErrNotFound if missing.
	Campaign(ctx context.Context, id string) (Campaign, error)
	// SetStatus moves the campaign to status only if it is in from;
	// ErrConditionFailed otherwise.
	SetStatus(ctx context.Context, id string, from []Status, to Status, reason string, now time.Time) error
}

const (
	// ScheduleNamePrefix starts every campaign schedule's name
	// (TaskSchema.ScheduleNamePrefix).
	ScheduleNamePrefix = "camp-"
	// ScheduleRetries is how often the campaign schedule group's
	// schedules retry their invoke of the send function (constructs/campaigns).
	ScheduleRetries = 2
)

// ScheduleName is the name of a task's schedule on the core's timer:
// TaskSchema's name of the task's item key. One task, one schedule.
func ScheduleName(k Key) string { return TaskSchema.ScheduleName(ItemKey(k)) }

// FireEvent is one firing of a send task: the task, and the send time
// the firing was armed for. A timer hands the send function
// TaskSchema.EncodePayload of the task's payload (every core timer:
// EventBridge Scheduler, Step Functions, TTL); the reconciler's dispatch,
// and schedules made before campaigns ran on the core's timers, hand it
// {"campaignId","taskId"}, which names no send time (Due zero: the
// task's own).
type FireEvent struct {
	CampaignID string    `json:"campaignId"`
	TaskID     string    `json:"taskId"`
	Due        time.Time `json:"-"`
}

// Message is one email.
type Message struct {
	// IdempotencyKey: the sender sends at most once per key.
	IdempotencyKey string
	To             string
	Subject        string
	Body           string
	// UnsubscribeURL is the message's one-click unsubscribe URL (RFC 8058):
	// the sender puts it in the List-Unsubscribe headers; the body
	// already links it. Empty: no unsubscribe headers.
	UnsubscribeURL string
}

// Receipt is what a send returns and records.
type Receipt struct {
	MessageID string
	SentAt    time.Time
}

// Sender sends email (SES SendEmail behind an idempotency record; the dev
// server's outbox locally).
type Sender interface {
	// Send sends m once per IdempotencyKey: a key already sent returns
	// the first receipt and sends nothing. Errors wrapping ErrRetryable
	// may succeed later.
	Send(ctx context.Context, m Message) (Receipt, error)
	// Sent returns the receipt recorded for key; ErrNotSent if none.
	Sent(ctx context.Context, key string) (Receipt, error)
}

// DecodeFire reads what a send task's firing hands the send function:
// the core timers' payload (TaskSchema.EncodePayload: the item's key
// attributes and sendAt), or the older {"campaignId","taskId"}.
func DecodeFire(b []byte) (FireEvent, error) {
	var e FireEvent
	if err := json.Unmarshal(b, &e); err != nil {
		return FireEvent{}, fmt.Errorf("decode fire event: %w", err)
	}
	if e.CampaignID != "" || e.TaskID != "" {
		if e.CampaignID == "" || e.TaskID == "" {
			return FireEvent{}, errors.New("fire event needs campaignId and taskId")
		}
		return e, nil
	}
	p, err := TaskSchema.DecodePayload(b)
	if err != nil {
		return FireEvent{}, fmt.Errorf("fire event is neither a task payload nor {campaignId, taskId}: %w", err)
	}
	k, err := KeyOf(p.Key)
	if err != nil {
		return FireEvent{}, fmt.Errorf("fire event: %w", err)
	}
	return FireEvent{CampaignID: k.CampaignID, TaskID: k.TaskID, Due: p.Due}, nil
}
