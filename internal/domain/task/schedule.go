package task

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// ScheduleNamePrefix starts the name of every task schedule.
const ScheduleNamePrefix = "task-"

// Schedule is a one-off invocation of the expiry function at At.
type Schedule struct {
	// Name is derived from the task id: one task, one schedule.
	Name string
	// At is when the schedule fires (UTC, whole seconds).
	At time.Time
	// ClientToken makes a create idempotent: the same task and deadline
	// always give the same token.
	ClientToken string
	Payload     Payload
}

// Payload is the input the schedule hands the expiry function. DueAt is
// the deadline the schedule was made for; expiry compares it with the
// task's current deadline so a stale schedule can never expire a task.
type Payload struct {
	TaskID string `json:"taskId"`
	UserID string `json:"userId"`
	DueAt  string `json:"dueAt"`
}

// ScheduleName is the schedule name of a task id.
func ScheduleName(taskID string) string { return ScheduleNamePrefix + taskID }

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
// schedule token and the deadline: retries of one create share it, and a
// schedule for a new deadline gets a new one. 64 hex characters, the
// scheduler's limit.
func ClientToken(scheduleToken string, dueAt time.Time) string {
	sum := sha256.Sum256([]byte(scheduleToken + "|" + FormatTime(dueAt)))
	return hex.EncodeToString(sum[:])
}

// ScheduleFor is the schedule a Pending task must have.
func ScheduleFor(t Task) Schedule {
	return Schedule{
		Name:        ScheduleName(t.TaskID),
		At:          t.DueAt.UTC().Truncate(time.Second),
		ClientToken: ClientToken(t.ScheduleToken, t.DueAt),
		Payload:     Payload{TaskID: t.TaskID, UserID: t.UserID, DueAt: FormatTime(t.DueAt)},
	}
}

// AtExpression is the scheduler expression for a one-off schedule at t.
func AtExpression(t time.Time) string {
	return "at(" + t.UTC().Format("2006-01-02T15:04:05") + ")"
}

// ParseAtExpression inverts AtExpression (the expression is in UTC).
func ParseAtExpression(expr string) (time.Time, error) {
	m := atRE.FindStringSubmatch(expr)
	if m == nil {
		return time.Time{}, fmt.Errorf("not a one-off expression: %q", expr)
	}
	t, err := time.Parse("2006-01-02T15:04:05", m[1])
	if err != nil {
		return time.Time{}, fmt.Errorf("parse %q: %w", expr, err)
	}
	return t.UTC(), nil
}

var atRE = regexp.MustCompile(`^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$`)

// EncodePayload renders the schedule input.
func EncodePayload(p Payload) string {
	b, _ := json.Marshal(p) // a struct of strings always marshals
	return string(b)
}

// DecodePayload parses and checks a schedule input.
func DecodePayload(b []byte) (ExpireRequest, error) {
	var p Payload
	if err := json.Unmarshal(b, &p); err != nil {
		return ExpireRequest{}, fmt.Errorf("decode schedule payload: %w", err)
	}
	if !ValidID(p.TaskID) || p.UserID == "" {
		return ExpireRequest{}, fmt.Errorf("schedule payload lacks a task or user id: %s", b)
	}
	due, err := time.Parse(time.RFC3339, p.DueAt)
	if err != nil {
		return ExpireRequest{}, fmt.Errorf("schedule payload dueAt: %w", err)
	}
	return ExpireRequest{UserID: p.UserID, TaskID: p.TaskID, DueAt: due.UTC()}, nil
}
