// Package cancel is the unscheduling pipeline's logic: which table changes
// warrant touching a schedule (Decide), the stream processor that turns
// change-feed records into queue messages (Processor), and the worker that
// applies them to the scheduler (Worker). It imports no AWS SDK; the
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

	"github.com/unschedule/unschedule/internal/domain/task"
)

// Action is what the worker does with a task's schedule.
type Action string

// The actions.
const (
	// ActionCancel deletes the schedule: the task was completed or removed.
	ActionCancel Action = "cancel"
	// ActionReschedule moves the schedule to the task's new deadline, or
	// creates it again when the old one already fired.
	ActionReschedule Action = "reschedule"
)

// Message is one unit of work on the FIFO queue, as JSON.
type Message struct {
	Action Action `json:"action"`
	UserID string `json:"userId"`
	TaskID string `json:"taskId"`
	// DueAt is the new deadline (reschedule only).
	DueAt time.Time `json:"dueAt,omitzero"`
	// ScheduleToken is the task's token (reschedule only), so the worker
	// derives the same ClientToken as every other create of this task.
	ScheduleToken string `json:"scheduleToken,omitempty"`
	// EventID is the change-feed record the message came from.
	EventID string `json:"eventId"`
}

// MaxIDLen is the longest MessageGroupId or MessageDeduplicationId SQS
// accepts.
const MaxIDLen = 128

// GroupID is the FIFO message group: the task id, so the messages of one
// task are handled in order while different tasks run in parallel.
func (m Message) GroupID() string { return fitID(m.TaskID) }

// DedupID is the FIFO deduplication id, "{taskId}-{eventID}": a replayed
// change-feed record gives the same id, so the queue keeps one message
// (within SQS's five-minute deduplication window; later replays are
// absorbed by the worker's idempotency).
func (m Message) DedupID() string { return fitID(m.TaskID + "-" + m.EventID) }

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

// Schedule is the schedule a reschedule message asks for: the same value
// task.ScheduleFor gives the task at create time, so the ClientToken (and
// with it create idempotency) is shared with every other path.
func (m Message) Schedule() task.Schedule {
	return task.ScheduleFor(task.Task{UserID: m.UserID, TaskID: m.TaskID, DueAt: m.DueAt,
		ScheduleToken: m.ScheduleToken})
}

// Encode renders the message as its queue body.
func (m Message) Encode() []byte {
	b, _ := json.Marshal(m) // strings and a time always marshal
	return b
}

// ErrMalformed marks a message that can never be handled: retrying it
// cannot help. Test with errors.Is.
var ErrMalformed = errors.New("malformed cancellation message")

// Parse reads and checks a queue body. Its errors wrap ErrMalformed.
func Parse(body []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(body, &m); err != nil {
		return Message{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if err := m.validate(); err != nil {
		return Message{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return m, nil
}

func (m Message) validate() error {
	if m.UserID == "" || !task.ValidID(m.TaskID) {
		return fmt.Errorf("needs a user id and a task id (given %q, %q)", m.UserID, m.TaskID)
	}
	switch m.Action {
	case ActionCancel:
		return nil
	case ActionReschedule:
		if m.DueAt.IsZero() || m.ScheduleToken == "" {
			return fmt.Errorf("reschedule of %s needs dueAt and scheduleToken", m.TaskID)
		}
		return nil
	default:
		return fmt.Errorf("unknown action %q (want %q or %q)", m.Action, ActionCancel, ActionReschedule)
	}
}
