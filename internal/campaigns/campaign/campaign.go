// Package campaign is the data model of scheduled email campaigns: a
// Campaign, one SendTask per recipient, the task's lifecycle
//
//	Pending → Running → Finished | Failed | Cancelled
//	Pending → Suppressed (the address is on the construct's suppression list)
//
// (and Running → Pending when the reconciler recovers a stale claim), as
// functions that refuse illegal moves, and the ports the campaign
// services (provision, send, reconcile) share. It is plain Go: no AWS SDK.
package campaign

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/plan"
)

// State is a send task's lifecycle state.
type State string

// The states of a send task.
const (
	Pending   State = "Pending"
	Running   State = "Running"
	Finished  State = "Finished"
	Failed    State = "Failed"
	Cancelled State = "Cancelled"
	// Suppressed: the recipient is on the suppression list (a
	// hard bounce, a complaint, an unsubscribe): nothing was sent.
	Suppressed State = "Suppressed"
)

// Terminal reports whether no transition leaves s.
func (s State) Terminal() bool {
	return s == Finished || s == Failed || s == Cancelled || s == Suppressed
}

// Status is a campaign's own state.
type Status string

// The states of a campaign.
const (
	// Draft: planned and stored, no schedule created yet.
	Draft Status = "Draft"
	// Provisioning: schedules are being created.
	Provisioning Status = "Provisioning"
	// Active: every schedule has been created.
	Active Status = "Active"
	// Completed: every send task reached a terminal state (Finished,
	// Failed, Cancelled or Suppressed) while the campaign was Provisioning or Active.
	// The store moves it there, once, when it records the last one.
	Completed Status = "Completed"
	// CampaignCancelled: its Pending tasks are cancelled.
	CampaignCancelled Status = "Cancelled"
)

// Campaign is one campaign item.
type Campaign struct {
	ID      string
	OwnerID string
	Subject string
	Body    string
	Rules   plan.Rules
	Status  Status
	// Total is the number of send tasks.
	Total     int
	CreatedAt time.Time
	UpdatedAt time.Time
	// CancelReason says why the campaign was cancelled.
	CancelReason string
}

// Recipient is who a task sends to, snapshotted on the task.
type Recipient struct {
	Email   string
	Subject string
}

// SendTask is one send of a campaign.
type SendTask struct {
	CampaignID string
	// ID is unique in the whole table (the campaign id and the index):
	// the schedule's name derives from it.
	ID    string
	Index int
	// Email and Subject are the recipient snapshot.
	Email   string
	Subject string
	// SendAt is the planned instant; Local the same in the campaign's
	// zone (the at() argument); TimeZone that zone.
	SendAt   time.Time
	Local    string
	TimeZone string
	State    State
	// SchedulerRequestToken is a random UUID chosen once, at creation:
	// the item's token (TaskSchema.TokenAttr), from which the timer's
	// idempotency token of each send time derives (Schedule).
	SchedulerRequestToken string
	// Attempt counts claims (Pending → Running).
	Attempt int
	// Retimed counts the times the reconciler moved SendAt (and Local)
	// to the next usable minute because the fire was lost.
	Retimed int
	// ClaimedAt and LeaseUntil are set by the claim: after LeaseUntil a
	// Running task is stale and the reconciler recovers it.
	ClaimedAt  time.Time
	LeaseUntil time.Time
	SentAt     time.Time
	// MessageID is the sender's id of the sent message.
	MessageID string
	// Error is why the task Failed; Reason why it was Cancelled or
	// Suppressed.
	Error     string
	Reason    string
	UpdatedAt time.Time
}

// Key names a task.
type Key struct{ CampaignID, TaskID string }

// Key of the task.
func (t SendTask) Key() Key { return Key{t.CampaignID, t.ID} }

// IdempotencyKey is the key of the task's one send: every attempt of the
// task uses it, so a recovered task is not sent twice.
func (t SendTask) IdempotencyKey() string { return "send-" + t.ID }

// ErrIllegalTransition is wrapped by every refused move.
var ErrIllegalTransition = errors.New("illegal send task transition")

// TransitionError names a refused move.
type TransitionError struct {
	Task     string
	From, To State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("send task %s: %s cannot move to %s", e.Task, e.From, e.To)
}

func (e *TransitionError) Unwrap() error { return ErrIllegalTransition }

func refuse(t SendTask, to State) error { return &TransitionError{Task: t.ID, From: t.State, To: to} }

// Finish records the send of a Running task.
func Finish(t SendTask, sentAt time.Time, messageID string, now time.Time) (SendTask, error) {
	if t.State != Running {
		return t, refuse(t, Finished)
	}
	t.State, t.SentAt, t.MessageID, t.LeaseUntil, t.UpdatedAt = Finished, sentAt, messageID, time.Time{}, now
	return t, nil
}

// Fail records why a Running task cannot be sent, or why the reconciler
// gave up on a Pending one. The reason must not be empty.
func Fail(t SendTask, reason string, now time.Time) (SendTask, error) {
	if (t.State != Running && t.State != Pending) || reason == "" {
		return t, refuse(t, Failed)
	}
	t.State, t.Error, t.LeaseUntil, t.UpdatedAt = Failed, reason, time.Time{}, now
	return t, nil
}

// Cancel cancels a Pending task. The reason must not be empty.
func Cancel(t SendTask, reason string, now time.Time) (SendTask, error) {
	if t.State != Pending || reason == "" {
		return t, refuse(t, Cancelled)
	}
	t.State, t.Reason, t.UpdatedAt = Cancelled, reason, now
	return t, nil
}

// Suppress ends a Pending task whose address is suppressed; nothing is
// sent. The reason must not be empty.
func Suppress(t SendTask, reason string, now time.Time) (SendTask, error) {
	if t.State != Pending || reason == "" {
		return t, refuse(t, Suppressed)
	}
	t.State, t.Reason, t.UpdatedAt = Suppressed, reason, now
	return t, nil
}

// Requeue returns a Running task whose lease has passed at now to Pending
// (the reconciler, when the send did not happen).
func Requeue(t SendTask, now time.Time) (SendTask, error) {
	if t.State != Running || now.Before(t.LeaseUntil) {
		return t, refuse(t, Pending)
	}
	t.State, t.LeaseUntil, t.ClaimedAt, t.UpdatedAt = Pending, time.Time{}, time.Time{}, now
	return t, nil
}

// Release returns a Running task to Pending by the attempt that holds
// it (the send failed in a way that may succeed later).
func Release(t SendTask, now time.Time) (SendTask, error) {
	if t.State != Running {
		return t, refuse(t, Pending)
	}
	t.State, t.LeaseUntil, t.ClaimedAt, t.UpdatedAt = Pending, time.Time{}, time.Time{}, now
	return t, nil
}

// Retime moves a Pending task whose fire was lost to a new send time.
func Retime(t SendTask, at time.Time, local string, now time.Time) (SendTask, error) {
	if t.State != Pending {
		return t, refuse(t, Pending)
	}
	t.SendAt, t.Local, t.Retimed, t.UpdatedAt = at, local, t.Retimed+1, now
	return t, nil
}

// Stale reports whether t is Running and its lease passed at now.
func Stale(t SendTask, now time.Time) bool { return t.State == Running && !now.Before(t.LeaseUntil) }

// NewToken returns a random UUID (version 4), the scheduler request token.
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// validID: 1-40 letters, digits, '-' or '_'. A loop, not a regexp
// compiled at init: every function that links this package pays for its
// init at each cold start.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 40 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// TaskID is the id of a campaign's index-th task.
func TaskID(campaignID string, index int) string { return fmt.Sprintf("%s-%05d", campaignID, index) }

// NewTasks makes the Pending tasks of a campaign from its plan, one per
// recipient, each with a fresh token from newToken (NewToken when nil).
func NewTasks(c Campaign, recipients []Recipient, sends []plan.Send, newToken func() string, now time.Time) ([]SendTask, error) {
	if !validID(c.ID) {
		return nil, fmt.Errorf("campaign id %q must be 1-40 letters, digits, '-' or '_'", c.ID)
	}
	if len(recipients) != len(sends) {
		return nil, fmt.Errorf("%d recipients but %d planned sends: plan once per recipient", len(recipients), len(sends))
	}
	if newToken == nil {
		newToken = NewToken
	}
	out := make([]SendTask, len(sends))
	for i, s := range sends {
		subj := recipients[i].Subject
		if subj == "" {
			subj = c.Subject
		}
		out[i] = SendTask{
			CampaignID: c.ID, ID: TaskID(c.ID, i), Index: i,
			Email: recipients[i].Email, Subject: subj,
			SendAt: s.At, Local: s.Local, TimeZone: c.Rules.TimeZone,
			State: Pending, SchedulerRequestToken: newToken(), UpdatedAt: now,
		}
	}
	return out, nil
}
