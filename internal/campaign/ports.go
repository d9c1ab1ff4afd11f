package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/internal/clock"
)

// Errors of the ports. Adapters wrap them (errors.Is).
var (
	// ErrNotFound: no such task or campaign.
	ErrNotFound = errors.New("not found")
	// ErrConditionFailed: a conditional write found the item changed;
	// nothing was written.
	ErrConditionFailed = errors.New("condition failed")
	// ErrThrottled: the scheduler refused a call for rate; retry later.
	ErrThrottled = errors.New("scheduler throttled")
	// ErrScheduleNotFound: no schedule of that name.
	ErrScheduleNotFound = errors.New("schedule not found")
	// ErrScheduleExists: a schedule of that name exists (created by an
	// earlier call whose answer was lost): the task has its schedule.
	ErrScheduleExists = errors.New("schedule exists")
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

// Target is where every campaign schedule delivers: the send function,
// the role the scheduler assumes, and the dead-letter queue.
type Target struct {
	GroupName     string
	FunctionArn   string
	RoleArn       string
	DeadLetterArn string
}

// ScheduleRequest is one CreateSchedule call, every field of which the
// adapter passes as is.
type ScheduleRequest struct {
	Name      string
	GroupName string
	// Expression is "at(<local wall time>)", evaluated in Timezone.
	Expression string
	// Timezone is the ScheduleExpressionTimezone: the campaign's zone.
	Timezone string
	// FlexibleTimeWindowMode is "OFF".
	FlexibleTimeWindowMode string
	// ActionAfterCompletion is "DELETE": the schedule removes itself.
	ActionAfterCompletion string
	// ClientToken is the task's SchedulerRequestToken, the same on every
	// create of this task's schedule for its time (SendTask.ClientToken).
	ClientToken   string
	TargetArn     string
	RoleArn       string
	DeadLetterArn string
	// MaximumRetryAttempts is 2.
	MaximumRetryAttempts int
	// Input is the JSON the send function receives (FireEvent).
	Input string
}

// Schedule request constants.
const (
	FlexibleWindowOff   = "OFF"
	DeleteAfterComplete = "DELETE"
	ScheduleRetries     = 2
	// ScheduleNamePrefix starts every campaign schedule's name.
	ScheduleNamePrefix = "camp-"
)

// ScheduleName is the name of a task's schedule: one task, one schedule.
func ScheduleName(taskID string) string { return ScheduleNamePrefix + taskID }

// FireEvent is what a schedule hands the send function.
type FireEvent struct {
	CampaignID string `json:"campaignId"`
	TaskID     string `json:"taskId"`
}

// ScheduleFor is the create request of a task's schedule.
func ScheduleFor(t SendTask, to Target) ScheduleRequest {
	in, _ := json.Marshal(FireEvent{CampaignID: t.CampaignID, TaskID: t.ID}) // two strings always marshal
	return ScheduleRequest{
		Name: ScheduleName(t.ID), GroupName: to.GroupName,
		Expression: "at(" + t.Local + ")", Timezone: t.TimeZone,
		FlexibleTimeWindowMode: FlexibleWindowOff, ActionAfterCompletion: DeleteAfterComplete,
		ClientToken: t.ClientToken(),
		TargetArn:   to.FunctionArn, RoleArn: to.RoleArn, DeadLetterArn: to.DeadLetterArn,
		MaximumRetryAttempts: ScheduleRetries, Input: string(in),
	}
}

// Scheduler is the part of EventBridge Scheduler the campaign uses.
type Scheduler interface {
	// Create makes a schedule. The same request again (same ClientToken)
	// succeeds without a second schedule; ErrScheduleExists when the name
	// is taken otherwise; ErrThrottled when refused for rate.
	Create(ctx context.Context, r ScheduleRequest) error
	// Exists reports whether the named schedule exists.
	Exists(ctx context.Context, group, name string) (bool, error)
	// Delete removes a schedule; ErrScheduleNotFound if none.
	Delete(ctx context.Context, group, name string) error
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

// DecodeFire reads a FireEvent.
func DecodeFire(b []byte) (FireEvent, error) {
	var e FireEvent
	if err := json.Unmarshal(b, &e); err != nil {
		return FireEvent{}, fmt.Errorf("decode fire event: %w", err)
	}
	if e.CampaignID == "" || e.TaskID == "" {
		return FireEvent{}, errors.New("fire event needs campaignId and taskId")
	}
	return e, nil
}
