// Package cancel is the unscheduling pipeline's logic: which table changes
// warrant touching a schedule (Decide), the stream processor that turns
// change-feed records into queue messages (Processor), and the worker that
// applies them to the scheduler (Worker), for the items of any
// contract.Schema. It imports no AWS SDK; the
// Lambda functions and the in-process pipeline wire it to real or memory
// adapters.
package cancel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/contract"
)

// Action is what the worker does with an item's schedule.
type Action string

// The actions.
const (
	// ActionCancel deletes the schedule: the item left its armed states,
	// or was removed.
	ActionCancel Action = "cancel"
	// ActionReschedule moves the schedule to the item's new due time, or
	// creates it again when the old one already fired.
	ActionReschedule Action = "reschedule"
	// ActionSchedule creates the schedule of an item that its writer did
	// not schedule itself (a plain put), with the contract's ClientToken;
	// when one of that name exists, it moves it.
	ActionSchedule Action = "schedule"
)

// Message is one unit of work on the FIFO queue, as JSON. It names the
// item by its key; the worker's schema names the schedule.
type Message struct {
	Action Action `json:"action"`
	// Partition and Sort are the item's key (Sort "" for a table
	// without a sort key).
	Partition string `json:"pk"`
	Sort      string `json:"sk,omitempty"`
	// DueAt is the due time (schedule and reschedule only).
	DueAt time.Time `json:"dueAt,omitzero"`
	// RemindAt is the item's reminder time (schedule and reschedule only;
	// zero for none): the worker makes, moves or deletes the reminder
	// schedule to match.
	RemindAt time.Time `json:"remindAt,omitzero"`
	// OldDueAt and OldRemindAt are the due and reminder times the item
	// had before the change (every action; zero when the record had no
	// old image, or the item had none). The worker hands them to the
	// scheduler's Update and Delete: the Step Functions timer names an
	// execution by its due time, and stops the old one by that name.
	OldDueAt    time.Time `json:"oldDueAt,omitzero"`
	OldRemindAt time.Time `json:"oldRemindAt,omitzero"`
	// NoOldReminder says the record showed the item before the change
	// without a reminder time (or it is an insert): there is no reminder
	// schedule to delete, so the worker makes no call for it. Unset (a
	// record without its old image, or a message from before reminders),
	// the worker deletes it; "not found" is success.
	NoOldReminder bool `json:"noOldReminder,omitempty"`
	// Token is the item's token ("" when its writer set none), so the
	// worker derives the same ClientToken as every other create of this
	// item.
	Token string `json:"token,omitempty"`
	// EventID is the change-feed record the message came from.
	EventID string `json:"eventId"`
}

// Key is the item's key.
func (m Message) Key() contract.Key { return contract.Key{Partition: m.Partition, Sort: m.Sort} }

// MaxIDLen is the longest MessageGroupId or MessageDeduplicationId SQS
// accepts.
const MaxIDLen = 128

// GroupID is the FIFO message group: the item's key, so the messages of
// one item are handled in order while different items run in parallel.
func (m Message) GroupID() string { return fitID(m.Key().String()) }

// DedupID is the FIFO deduplication id, "{key}-{eventID}": a replayed
// change-feed record gives the same id, so the queue keeps one message
// (within SQS's five-minute deduplication window; later replays are
// absorbed by the worker's idempotency).
func (m Message) DedupID() string { return fitID(m.Key().String() + "-" + m.EventID) }

// fitID returns s when SQS accepts it as a group or deduplication id (at
// most 128 characters from printable ASCII), else its SHA-256 in hex:
// still deterministic, so replays still collapse.
func fitID(s string) string {
	if len(s) > 0 && len(s) <= MaxIDLen && printableASCII(s) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return true
}

// Schedule is the schedule a schedule or reschedule message asks for:
// the same value s.ScheduleFor gives the item on every path (the API's
// create included), so the ClientToken, and with it create idempotency,
// is shared.
func (m Message) Schedule(s contract.Schema) contract.Schedule {
	return s.ScheduleFor(m.item(s))
}

// Reminder is the reminder schedule a schedule or reschedule message asks
// for (s.ReminderFor of the item); ok is false when there is none.
func (m Message) Reminder(s contract.Schema) (contract.Schedule, bool) {
	return s.ReminderFor(m.item(s))
}

func (m Message) item(s contract.Schema) contract.Item {
	st := ""
	if len(s.ArmedStates) > 0 {
		st = s.ArmedStates[0]
	}
	return contract.Item{Key: m.Key(), State: st, Due: m.DueAt, Token: m.Token, Remind: m.RemindAt}
}

// Encode renders the message as its queue body.
func (m Message) Encode() []byte {
	b, _ := json.Marshal(m) // strings and a time always marshal
	return b
}

// ErrMalformed marks a message that can never be handled: retrying it
// cannot help. Test with errors.Is.
var ErrMalformed = errors.New("malformed cancellation message")

// Parse reads and checks a queue body. Its errors wrap ErrMalformed. A
// body in the format before the generic key (userId, taskId,
// scheduleToken), still queued across a deploy, reads as the to-do item
// it names.
func Parse(body []byte) (Message, error) {
	var m struct {
		Message
		UserID        string `json:"userId"`
		TaskID        string `json:"taskId"`
		ScheduleToken string `json:"scheduleToken"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return Message{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if m.Partition == "" && m.Sort == "" {
		m.Partition, m.Sort = m.UserID, m.TaskID
	}
	if m.Token == "" {
		m.Token = m.ScheduleToken
	}
	if err := m.validate(); err != nil {
		return Message{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return m.Message, nil
}

func (m Message) validate() error {
	if m.Partition == "" {
		return fmt.Errorf("needs the item's key (given %q)", m.Key())
	}
	switch m.Action {
	case ActionCancel:
		return nil
	case ActionReschedule, ActionSchedule:
		if m.DueAt.IsZero() {
			return fmt.Errorf("%s of %s needs dueAt", m.Action, m.Key())
		}
		return nil
	default:
		return fmt.Errorf("unknown action %q (want %q, %q or %q)", m.Action, ActionCancel, ActionReschedule, ActionSchedule)
	}
}
