// Package futureevents is the client of the future-events service
// (constructs/futureevents): "when <event> happens, execute <logic> at
// <moment>". An app's own function calls Schedule when the event happens;
// a Standard Step Functions execution waits until the moment (a Wait state
// on TimestampPath $.timestamp) and then the service's handler invokes the
// registered target function with the payload. Cancel stops the wait.
//
// The input of an execution is Input as JSON. The execution's name is the
// caller's idempotency key: the same name with the same input is the same
// event (no duplicate), the same name with another input is
// ErrNameConflict. Name builds valid names from any parts (an email and a
// year, say).
package futureevents

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/envvars"
)

// EnvStateMachineArn is the environment variable that carries the state
// machine's ARN to an app's function (the construct's GrantSchedule
// callers read it with FromEnv).
const EnvStateMachineArn = envvars.FutureEventsStateMachineArn

// MaxHorizon is how far ahead Schedule accepts a moment. A Standard
// execution runs at most one year
// (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html,
// "Maximum execution time: 1 year"); an hour is kept for the handler and
// its retries after the Wait. A later moment is rejected, never chained.
const MaxHorizon = 365*24*time.Hour - time.Hour

// Input is what an execution carries: the moment (RFC 3339, UTC, whole
// seconds, as the Wait state's TimestampPath requires), the target
// function's ARN and the payload handed to it unchanged.
type Input struct {
	Timestamp string          `json:"timestamp"`
	Target    string          `json:"target"`
	Payload   json.RawMessage `json:"payload"`
}

// Errors of Schedule and Cancel; test with errors.Is.
var (
	// ErrInvalid: a bad argument (an empty or invalid name, no target, a
	// payload that is not JSON, a moment in the past or beyond MaxHorizon).
	ErrInvalid = errors.New("futureevents: invalid request")
	// ErrNameConflict: an execution of that name exists with another
	// input (Step Functions' ExecutionAlreadyExists).
	ErrNameConflict = errors.New("futureevents: an execution with this name exists with a different input")
	// ErrNameUsed: an execution of that name with this input was
	// cancelled or failed; Step Functions keeps a closed execution's name
	// for 90 days, so the same name cannot start again.
	ErrNameUsed = errors.New("futureevents: an execution with this name already closed")
)

// NewInput validates and builds an execution's input. now is the current
// time: at must be after it and at most MaxHorizon ahead.
func NewInput(now, at time.Time, target string, payload []byte) (Input, error) {
	switch {
	case target == "":
		return Input{}, fmt.Errorf("%w: the target function ARN is empty: pass the ARN of a function registered with the construct (AddTarget)", ErrInvalid)
	case !at.After(now):
		return Input{}, fmt.Errorf("%w: the moment %s is not in the future (now %s)", ErrInvalid, at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case at.Sub(now) > MaxHorizon:
		return Input{}, fmt.Errorf("%w: the moment %s is more than %s ahead: a Step Functions execution lasts at most one year; schedule it later, closer to the moment",
			ErrInvalid, at.UTC().Format(time.RFC3339), MaxHorizon)
	}
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	if !json.Valid(payload) {
		return Input{}, fmt.Errorf("%w: the payload is not JSON", ErrInvalid)
	}
	return Input{Timestamp: at.UTC().Truncate(time.Second).Format(time.RFC3339), Target: target, Payload: payload}, nil
}

// maxNameLen and the name rules of StartExecution: 1 to 80 characters,
// none of whitespace, < > { } [ ], ? *, " # % \ ^ | ~ ` $ & , ; : /, or
// control characters; and, for CloudWatch Logs to log the execution, only
// 0-9, A-Z, a-z, - and _.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html#StepFunctions-StartExecution-request-name
const maxNameLen = 80

// hashLen is how many hex digits of SHA-256 a rewritten name keeps.
const hashLen = 16

func nameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

// ValidName reports whether name is a name Name would return unchanged:
// 1..80 characters of 0-9, A-Z, a-z, - and _.
func ValidName(name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	for _, r := range name {
		if !nameChar(r) {
			return false
		}
	}
	return true
}

// Name is the execution name of parts (for example an email and a year):
// the parts joined by "-" when that is a valid name (ValidName); else
// their sanitized text (every other character becomes "_"), cut to fit,
// then "-" and 16 hex digits of the SHA-256 of the parts, so two inputs
// that sanitize alike ("a.b@x.com" and "a_b@x.com") still get different
// names. The same parts always give the same name.
func Name(parts ...string) string {
	joined := strings.Join(parts, "-")
	if ValidName(joined) {
		return joined
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	suffix := "-" + hex.EncodeToString(sum[:])[:hashLen]
	var b strings.Builder
	for _, r := range joined {
		if b.Len() >= maxNameLen-len(suffix) {
			break
		}
		if nameChar(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String() + suffix
}

// ExecutionArn is the ARN of execution name of the state machine
// stateMachineArn (arn:<p>:states:<r>:<a>:stateMachine:<sm> gives
// arn:<p>:states:<r>:<a>:execution:<sm>:<name>).
func ExecutionArn(stateMachineArn, name string) (string, error) {
	i := strings.Index(stateMachineArn, ":stateMachine:")
	if i < 0 || !strings.HasPrefix(stateMachineArn, "arn:") {
		return "", fmt.Errorf("%w: %q is not a state machine ARN", ErrInvalid, stateMachineArn)
	}
	return stateMachineArn[:i] + ":execution:" + stateMachineArn[i+len(":stateMachine:"):] + ":" + name, nil
}

// SameInput reports whether two execution inputs are the same JSON
// (whitespace and key order aside).
func SameInput(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	ca, _ := json.Marshal(x)
	cb, _ := json.Marshal(y)
	return string(ca) == string(cb)
}
