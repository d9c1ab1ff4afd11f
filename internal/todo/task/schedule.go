package task

import (
	"fmt"
	"time"

	"github.com/unschedule/unschedule/contract"
)

// Schema is the to-do app's item contract: every schedule name,
// ClientToken and payload of a task comes from it. Its names are the ones
// the stored tasks use, set explicitly (contract.Default's neutral names
// differ). It is internal/todo/tableschema.Todo(), which this package cannot
// import; a test there keeps the two equal.
var Schema = contract.Schema{
	PartitionKey: "userId", SortKey: "taskId", DueAttr: "dueAt", StateAttr: "status",
	ArmedStates: []string{string(StatusPending)}, FiredState: string(StatusExpired),
	TokenAttr: "scheduleToken", InlineAttr: "scheduleInline", FiredAtAttr: "expiredAt",
	ClaimAtAttr: "notifyClaimAt", DeliveredAtAttr: "notifiedAt",
	ScheduleNamePrefix: ScheduleNamePrefix, NameBySortKey: true,
	RemindAttr: "remindAt", RemindClaimAtAttr: "remindClaimAt", RemindedAttr: "remindedFor",
	ReminderNamePrefix: "remind-", ReservedSortKeyPrefix: "#",
}

// ScheduleNamePrefix starts the name of every task schedule.
const ScheduleNamePrefix = "task-"

// Schedule is a one-off invocation of the expiry function at At: the
// contract's schedule (name, due time, ClientToken, payload).
type Schedule = contract.Schedule

// Payload is the input the schedule hands the expiry function: the item's
// key and the deadline the schedule was made for; expiry compares it with
// the task's current deadline so a stale schedule can never expire a task.
// Its JSON is Schema.EncodePayload: {"dueAt","taskId","userId"}.
type Payload = contract.Payload

// Key is a task's item key.
func Key(userID, taskID string) contract.Key { return contract.Key{Partition: userID, Sort: taskID} }

// ScheduleName is the schedule name of a task id (the contract's name by
// sort key: a task id is a ULID, unique in the table).
func ScheduleName(taskID string) string { return Schema.ScheduleName(contract.Key{Sort: taskID}) }

// TaskIDFromScheduleName inverts ScheduleName; ok is false for a name this
// package did not make.
func TaskIDFromScheduleName(name string) (id string, ok bool) {
	if len(name) <= len(ScheduleNamePrefix) || name[:len(ScheduleNamePrefix)] != ScheduleNamePrefix {
		return "", false
	}
	id = name[len(ScheduleNamePrefix):]
	return id, ValidID(id)
}

// ClientToken derives the scheduler's idempotency token from the task's
// schedule token and the deadline (contract.Schema.ClientToken): retries
// of one create share it, and a schedule for a new deadline gets a new
// one.
func ClientToken(scheduleToken string, dueAt time.Time) string {
	return Schema.ClientToken(contract.Key{}, scheduleToken, dueAt)
}

// ScheduleFor is the schedule a Pending task must have.
func ScheduleFor(t Task) Schedule { return Schema.ScheduleFor(t.Item()) }

// Item is the task as the contract reads it.
func (t Task) Item() contract.Item {
	return contract.Item{Key: Key(t.UserID, t.TaskID), State: string(t.Status), Due: t.DueAt,
		Token: t.ScheduleToken, Inline: t.ScheduleInline, Delivered: !t.NotifiedAt.IsZero(), ClaimAt: t.NotifyClaimAt,
		Remind: t.RemindAt, RemindClaimAt: t.RemindClaimAt, Reminded: t.RemindedFor}
}

// EncodePayload renders the schedule input.
func EncodePayload(p Payload) string { return Schema.EncodePayload(p) }

// DecodePayload parses and checks a schedule input (the due time's; a
// reminder's reads as the expiry it precedes: see DecodeSchedule).
func DecodePayload(b []byte) (ExpireRequest, error) {
	p, err := DecodeSchedule(b)
	if err != nil {
		return ExpireRequest{}, err
	}
	return ExpireRequest{UserID: p.Key.Partition, TaskID: p.Key.Sort, DueAt: p.Due}, nil
}

// DecodeSchedule parses and checks a schedule input: the due time's, or a
// reminder's (Payload.IsReminder).
func DecodeSchedule(b []byte) (Payload, error) {
	p, err := Schema.DecodePayload(b)
	if err != nil {
		return Payload{}, err
	}
	if !ValidID(p.Key.Sort) {
		return Payload{}, fmt.Errorf("schedule payload lacks a task id: %s", b)
	}
	return p, nil
}
