// Package futureevent is the SDK-free part of future events ("when
// <event> happens, execute <logic> at <moment>"): the item a future event
// is, its name rules, and the dispatcher that runs at its moment. The
// client (package futureevents/client) writes and deletes these items;
// the construct (constructs/futureevents) runs the scheduling core on
// their table.
//
// A future event is one item of the core's contract (Schema): keyed by
// its name, due at its moment, armed while Scheduled. Writing it arms one
// Step Functions execution through the core (stream, queue, worker,
// timer); deleting it while Scheduled cancels that execution; at the
// moment the core claims the item (Scheduled to Fired, a conditional
// write) and invokes the dispatcher, which invokes the registered target
// named in the item with the item's payload.
//
// The name is the caller's idempotency key: the same name with the same
// moment, target and payload is the same event (no duplicate), the same
// name with anything else is ErrNameConflict. Name builds valid names
// from any parts (an email and a year, say).
package futureevent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// The future events' environment variables, declared here, beside their
// code (the core's are in internal/core/envvars, which registers these).
const (
	// EnvTableName carries the table's name to an app's function (set by
	// the construct's ConfigureClient, read by the client's FromEnv).
	EnvTableName = "FUTURE_EVENTS_TABLE_NAME"
	// EnvTargetFunctionArns lists the handler's registered target
	// functions, comma-separated (constructs/futureevents).
	EnvTargetFunctionArns = "TARGET_FUNCTION_ARNS"
)

func init() { envvars.Register(EnvTableName, EnvTargetFunctionArns) }

// The item's attributes (all DynamoDB strings) and states.
const (
	// NameAttr is the partition key: the event's name.
	NameAttr = "name"
	// AtAttr is the moment, RFC 3339 in UTC at whole seconds.
	AtAttr = "at"
	// StatusAttr is the state: Scheduled, then Fired once the core
	// claimed the firing.
	StatusAttr = "status"
	// TargetAttr is the ARN of the function to invoke at the moment.
	TargetAttr = "target"
	// PayloadAttr is the JSON handed to the target unchanged.
	PayloadAttr = "payload"

	// Scheduled is the armed state: the event waits for its moment.
	Scheduled = "Scheduled"
	// Fired is the state the core's claim writes at the moment, before
	// the dispatcher runs; the core's deliveredAt says it ran.
	Fired = "Fired"
	// ScheduleNamePrefix starts the name the core derives for an event's
	// execution (a hash of the event's name follows).
	ScheduleNamePrefix = "event-"
)

// Schema is the core's item contract of future events: keyed by NameAttr
// alone, due at AtAttr, armed while StatusAttr is Scheduled, Fired once
// claimed; the core's own attributes (firedAt, claimAt, deliveredAt)
// keep their default names.
func Schema() contract.Schema {
	return contract.Schema{
		PartitionKey: NameAttr, NoSortKey: true, DueAttr: AtAttr, StateAttr: StatusAttr,
		ArmedStates: []string{Scheduled}, FiredState: Fired, ScheduleNamePrefix: ScheduleNamePrefix,
	}.WithDefaults()
}

// MaxHorizon is how far ahead a moment may be. The core's Step Functions
// timer waits in one Standard execution, which runs at most one year
// (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html,
// "Maximum execution time: 1 year"), and it rejects a due time further
// than this (timerspec.MaxHorizon: a year less a day for the firing and its
// retries); it never chains executions. So the client rejects such a
// moment up front instead of writing an item that would never fire.
const MaxHorizon = timerspec.MaxHorizon

// Errors of the client; test with errors.Is.
var (
	// ErrInvalid: a bad argument (an empty or invalid name, no target, a
	// payload that is not JSON, a moment in the past or beyond MaxHorizon).
	ErrInvalid = errors.New("futureevents: invalid request")
	// ErrNameConflict: an event of that name exists with another moment,
	// target or payload.
	ErrNameConflict = errors.New("futureevents: an event with this name exists with a different moment, target or payload")
	// ErrNotFound: no event has that name (never scheduled, or cancelled).
	ErrNotFound = errors.New("futureevents: no event with this name")
)

// Event is one future event: at At, invoke Target with Payload.
type Event struct {
	Name    string
	At      time.Time
	Target  string
	Payload json.RawMessage
}

// New validates and builds an event. now is the current time: at must be
// after it and at most MaxHorizon ahead; it is kept at whole seconds in
// UTC. An empty payload is {}.
func New(now time.Time, name string, at time.Time, target string, payload []byte) (Event, error) {
	switch {
	case !ValidName(name):
		return Event{}, fmt.Errorf("%w: name %q: use 1 to 80 characters of 0-9, A-Z, a-z, - and _ (futureevent.Name builds one from any parts)", ErrInvalid, name)
	case target == "":
		return Event{}, fmt.Errorf("%w: the target function ARN is empty: pass the ARN of a function registered with the construct (AddTarget)", ErrInvalid)
	case !at.After(now):
		return Event{}, fmt.Errorf("%w: the moment %s is not in the future (now %s)", ErrInvalid, contract.FormatTime(at), contract.FormatTime(now))
	case at.Sub(now) > MaxHorizon:
		return Event{}, fmt.Errorf("%w: the moment %s is more than %d days ahead: the Step Functions timer waits at most one year; schedule it later, closer to the moment",
			ErrInvalid, contract.FormatTime(at), int(MaxHorizon/(24*time.Hour)))
	}
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	if !json.Valid(payload) {
		return Event{}, fmt.Errorf("%w: the payload is not JSON", ErrInvalid)
	}
	return Event{Name: name, At: at.UTC().Truncate(time.Second), Target: target, Payload: json.RawMessage(payload)}, nil
}

// Item is the event as the item the client writes: Scheduled, so the core
// arms its execution.
func (e Event) Item() map[string]string {
	return map[string]string{
		NameAttr: e.Name, AtAttr: contract.FormatTime(e.At), StatusAttr: Scheduled,
		TargetAttr: e.Target, PayloadAttr: string(e.Payload),
	}
}

// FromItem reads an event and its state from an item's attributes;
// ErrBadInput when they are not an event's.
func FromItem(attrs map[string]string) (e Event, status string, err error) {
	at, err := contract.ParseTime(attrs[AtAttr])
	switch {
	case attrs[NameAttr] == "":
		return Event{}, "", fmt.Errorf("%w: the item has no %s", ErrBadInput, NameAttr)
	case err != nil || at.IsZero():
		return Event{}, "", fmt.Errorf("%w: item %s: no moment in %s", ErrBadInput, attrs[NameAttr], AtAttr)
	case attrs[TargetAttr] == "":
		return Event{}, "", fmt.Errorf("%w: item %s: no target in %s", ErrBadInput, attrs[NameAttr], TargetAttr)
	}
	payload := attrs[PayloadAttr]
	if payload == "" {
		payload = "{}"
	}
	return Event{Name: attrs[NameAttr], At: at, Target: attrs[TargetAttr], Payload: json.RawMessage(payload)}, attrs[StatusAttr], nil
}

// Same reports whether e and o are the same event: name, instant, target
// and payload (JSON whitespace and key order aside).
func (e Event) Same(o Event) bool {
	return e.Name == o.Name && e.At.Equal(o.At) && e.Target == o.Target && sameJSON(e.Payload, o.Payload)
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	ca, _ := json.Marshal(x)
	cb, _ := json.Marshal(y)
	return string(ca) == string(cb)
}

// maxNameLen: names are 1 to 80 characters of 0-9, A-Z, a-z, - and _, so
// that they read the same in keys, logs and metrics everywhere (the core
// names the execution after a hash of it, so any such name fits).
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

// Name is the event name of parts (for example an email and a year): the
// parts joined by "-" when that is a valid name (ValidName); else their
// sanitized text (every other character becomes "_"), cut to fit, then
// "-" and 16 hex digits of the SHA-256 of the parts, so two inputs that
// sanitize alike ("a.b@x.com" and "a_b@x.com") still get different names.
// The same parts always give the same name.
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

// The future-events handler's function and metric names (the Function
// dimension and the metrics it writes), declared beside its code; the
// core's are in internal/core/metrics.
const (
	// FunctionFutureEvents is the handler's Function dimension.
	FunctionFutureEvents = "futureevents"
	// MetricDelivered counts the targets invoked successfully.
	MetricDelivered = "FutureEventsDelivered"
	// MetricRefused counts the firings whose target is not registered
	// (or whose item is not a future event): they fail.
	MetricRefused = "FutureEventsRefused"
	// MetricTargetFailed counts the failed invokes of a registered target
	// (the core's timer retries the firing).
	MetricTargetFailed = "FutureEventsTargetFailed"
)
