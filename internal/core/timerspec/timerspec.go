// Package timerspec names the timers that can fire a
// schedule-on-write item at its due time, and holds the rules each timer
// adds on top of the item contract: the Step Functions execution name and
// input, the TTL marker item and the stream filter that keeps only TTL
// deletions. Plain Go: no AWS SDK, no CDK. Every timer hands the firing
// function the same payload (contract.Schema.EncodePayload), and the
// firing core (internal/core/fire) claims the item the same way, so the
// adopter's target sees no difference.
package timerspec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
)

// Name is an timer.
type Name string

// The timers.
const (
	// EventBridgeScheduler: one one-off schedule per item (the default).
	EventBridgeScheduler Name = "EventBridgeScheduler"
	// StepFunctions: one Standard execution per item and due time, that
	// waits (Wait with TimestampPath) and then invokes the firing function.
	StepFunctions Name = "StepFunctions"
	// TTL: one marker item per item whose TTL attribute is the due time;
	// DynamoDB's TTL deletion, filtered from the stream, invokes the firing
	// function.
	TTL Name = "TTL"
)

// --- Step Functions -------------------------------------------------------

// MaxExecution is how long a Standard execution may run: one year.
// https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html
// ("Maximum execution time: 1 year"). A due time further away than
// MaxHorizon is rejected (ErrBeyondHorizon), not chained.
const MaxExecution = 365 * 24 * time.Hour

// MaxHorizon is the furthest due time the Step Functions timer accepts,
// counted from the start of the execution: a day less than MaxExecution
// leaves room for the invocation and its retries after the Wait.
const MaxHorizon = MaxExecution - 24*time.Hour

// ErrBeyondHorizon: the due time is more than MaxHorizon away.
var ErrBeyondHorizon = errors.New("due time beyond the Step Functions horizon")

// CheckHorizon returns an error wrapping ErrBeyondHorizon when due is
// more than MaxHorizon after now.
func CheckHorizon(due, now time.Time) error {
	if due.Sub(now) > MaxHorizon {
		return fmt.Errorf("%w: %s is more than %d days after %s (a Standard execution lasts at most one year): "+
			"use the EventBridgeScheduler or TTL timer for such items", ErrBeyondHorizon,
			contract.FormatTime(due), int(MaxHorizon/(24*time.Hour)), contract.FormatTime(now))
	}
	return nil
}

// MaxExecutionName is the longest execution name Step Functions accepts.
const MaxExecutionName = 80

// ExecutionName names the execution of the schedule called name at due:
// "<name>-<unix seconds>", so the same item and due time always give the
// same name (StartExecution is then idempotent), a moved due time a new
// one, and a cancel or move that knows the due time stops the execution
// by its ARN without listing. A contract schedule name (at most
// contract.MaxScheduleName, 64) always fits; a longer one is hashed.
func ExecutionName(name string, due time.Time) string {
	return fitName(name + "-" + strconv.FormatInt(due.UTC().Unix(), 10))
}

// RestartName names a restart of the execution called name (an
// ExecutionName): "<name>-r<unix seconds>", hashed when longer than
// MaxExecutionName. The restarts of one name form a chain: the item was
// armed again for the same due time after a cancel stopped the
// execution, and a closed name cannot be used again for 90 days, so the
// restart of a closed link is named after the second RestartSecond gives
// for it. Each second derives from what DescribeExecution returns (the
// stopDate), so every Create, Get and Delete walks the same chain: a
// second Create finds the restart the first one started.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
func RestartName(name string, t time.Time) string {
	return fitName(name + "-r" + strconv.FormatInt(t.UTC().Unix(), 10))
}

// MaxRestarts bounds the chain of restarts that follows one execution
// name: a walk that finds the MaxRestarts-th restart closed too is an
// error (ErrRestartChain), not an endless walk. Each link is one cancel
// and one re-arm of the item for the same due time.
const MaxRestarts = 10

// ErrRestartChain: an item was cancelled and armed again for the same
// due time more than MaxRestarts times.
var ErrRestartChain = errors.New("restart chain too long")

// RestartSecond is the second that names the restart of a closed link of
// a chain: the second of the link's stop date (DescribeExecution's
// stopDate), or the second after prev (the second that named the closed
// link; zero for the first) when that is not later, so that no two links
// share a name.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
func RestartSecond(prev, stopped time.Time) time.Time {
	t := stopped.UTC().Truncate(time.Second)
	if !prev.IsZero() && !t.After(prev) {
		t = prev.UTC().Truncate(time.Second).Add(time.Second)
	}
	return t
}

// ParseExecutionName inverts ExecutionName: the schedule name and due
// time of an execution called exec. ok is false for any other name: a
// restart (ParseRestartName), a hashed name (never one of a contract
// schedule name: contract.MaxScheduleName plus "-" and ten digits fits
// MaxExecutionName), or one that ExecutionName would not have written
// (no "-<digits>" suffix, leading zeros, a sign). A due time before 1970
// is never armed, so "n--5" reads as the name "n-" at 5 seconds.
func ParseExecutionName(exec string) (name string, due time.Time, ok bool) {
	i := strings.LastIndexByte(exec, '-')
	if i <= 0 {
		return "", time.Time{}, false
	}
	u, err := strconv.ParseInt(exec[i+1:], 10, 64)
	if err != nil {
		return "", time.Time{}, false
	}
	name, due = exec[:i], time.Unix(u, 0).UTC()
	if ExecutionName(name, due) != exec {
		return "", time.Time{}, false
	}
	return name, due, true
}

// ParseRestartName inverts RestartName of an ExecutionName: the schedule
// name and due time of the execution restarted, and the second that
// names the restart (RestartSecond). ok is false for any other name, and for a restart whose name
// was hashed (a schedule name longer than 57 characters: "-<due>-r<now>"
// adds 23 to it).
func ParseRestartName(exec string) (name string, due, restarted time.Time, ok bool) {
	i := strings.LastIndex(exec, "-r")
	if i <= 0 {
		return "", time.Time{}, time.Time{}, false
	}
	u, err := strconv.ParseInt(exec[i+2:], 10, 64)
	if err != nil || u < 0 {
		return "", time.Time{}, time.Time{}, false
	}
	restarted = time.Unix(u, 0).UTC()
	if RestartName(exec[:i], restarted) != exec {
		return "", time.Time{}, time.Time{}, false
	}
	if name, due, ok = ParseExecutionName(exec[:i]); !ok {
		return "", time.Time{}, time.Time{}, false
	}
	return name, due, restarted, true
}

// fitName returns n when Step Functions accepts its length, else its
// SHA-256 in hex (64 characters): still the same for the same n.
func fitName(n string) string {
	if len(n) <= MaxExecutionName {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	return hex.EncodeToString(sum[:])
}

// Input is the execution input: At is the Wait state's TimestampPath
// ($.at), Payload what the invocation hands the firing function
// ($.payload), unchanged.
type Input struct {
	At      string          `json:"at"`
	Payload json.RawMessage `json:"payload"`
}

// ExecutionInput renders the input of s's execution.
func ExecutionInput(schema contract.Schema, s contract.Schedule) string {
	b, _ := json.Marshal(Input{At: contract.FormatTime(s.At), Payload: json.RawMessage(schema.EncodePayload(s.Payload))})
	return string(b)
}

// State names and paths of the state machine (the construct builds it,
// the tests read it).
const (
	WaitState      = "WaitUntilDue"
	FireState      = "Fire"
	TimestampPath  = "$.at"
	PayloadPath    = "$.payload"
	ExecutionsPath = "execution"
)

// --- TTL ------------------------------------------------------------------

// Marker attributes. A marker is an item of the adopter's table that
// carries the TTL attribute, the payload, and, in the schema's state and
// due attributes, MarkerState and its time: a state no schema arms (so
// the cancellation pipeline's stream filter never sees it), which puts
// the markers in one partition of the state-keyed armed index, in time
// order, where the reconciler and the TTL watch Query them instead of
// scanning the table (internal/core/armedindex).
const (
	// MarkerState is a marker's state attribute.
	MarkerState = "unschedule#ttl"
	// DefaultTTLAttr is the table's TTL attribute (type N, epoch seconds).
	DefaultTTLAttr = "unscheduleTtl"
	// MarkerPayloadAttr holds the payload (S, EncodePayload).
	MarkerPayloadAttr = "unschedulePayload"
	// MarkerKeyPrefix starts the partition key of every marker.
	MarkerKeyPrefix = "unschedule#ttl#"
	// MarkerSortKey is the sort key of every marker (tables with one).
	MarkerSortKey = "marker"
)

// MarkerKey is the key of the marker of the schedule called name.
func MarkerKey(schema contract.Schema, name string) contract.Key {
	k := contract.Key{Partition: MarkerKeyPrefix + name}
	if !schema.NoSortKey {
		k.Sort = MarkerSortKey
	}
	return k
}

// TTLValue is the TTL attribute's value for due: epoch seconds, rounded
// up so the marker never expires before due.
func TTLValue(due time.Time) string {
	u := due.Unix()
	if due.Nanosecond() > 0 {
		u++
	}
	return strconv.FormatInt(u, 10)
}

// TTLPrecision is what AWS promises for a TTL deletion: "DynamoDB
// typically deletes expired items within two days of expiration"
// (UpdateTimeToLive API reference; the developer guide says "within a few
// days"). The construct and the simulation take the bound as 48 hours; it
// is typical, not guaranteed.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html
const TTLPrecision = 48 * time.Hour

// CheckLateness refuses the TTL timer when maxLateness is finer than
// TTLPrecision.
func CheckLateness(maxLateness time.Duration) error {
	if maxLateness < TTLPrecision {
		return fmt.Errorf("the TTL timer deletes an item up to %s after its expiry (a few days, typically within 48 hours), "+
			"coarser than MaxLateness %s: use the EventBridgeScheduler or StepFunctions timer, or allow MaxLateness of at least %s",
			TTLPrecision, maxLateness, TTLPrecision)
	}
	return nil
}

// TTL deletions in the stream: "userIdentity":{"type":"Service",
// "principalId":"dynamodb.amazonaws.com"} on a REMOVE record.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html
const (
	TTLIdentityType      = "Service"
	TTLIdentityPrincipal = "dynamodb.amazonaws.com"
)

// TTLFilterPattern is the Lambda event filter that keeps only TTL
// deletions of markers: REMOVE records deleted by the DynamoDB service
// whose old image carries the marker payload. A user's own delete of a
// marker (a cancel) has no userIdentity and is dropped.
// https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html
func TTLFilterPattern() string {
	p := map[string]any{
		"eventName": []string{"REMOVE"},
		"userIdentity": map[string]any{
			"type":        []string{TTLIdentityType},
			"principalId": []string{TTLIdentityPrincipal},
		},
		"dynamodb": map[string]any{
			"OldImage": map[string]any{
				MarkerPayloadAttr: map[string]any{"S": []map[string]bool{{"exists": true}}},
			},
		},
	}
	b, _ := json.Marshal(p)
	return string(b)
}
