// Package inmem holds the scheduling core's in-memory stand-ins, never
// more lenient than the services they stand for: an item table of any
// schema with its change feed (Items, and Armed, the reconciler's view of
// it), each timer (Scheduler for EventBridge Scheduler, Executions for
// Step Functions, TTLMarkers for DynamoDB TTL; NewTimer picks one),
// Remote (latency, throttles and lost answers in front of a timer), the
// reconciler's checkpoint, and the one conditional write (CondWrite) an
// adopter's own stand-ins build on. internal/core/inproc wires the
// pipeline on them; it knows no adopter.
package inmem
