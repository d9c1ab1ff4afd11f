// Package changefeed is the record the core reads from an item table's
// change feed (a DynamoDB stream, or the in-memory world's feed).
package changefeed

import "github.com/unschedule/unschedule/contract"

// Kind is the kind of a change-feed record, as DynamoDB Streams
// names them.
type Kind string

// The change kinds.
const (
	Insert Kind = "INSERT"
	Modify Kind = "MODIFY"
	Remove Kind = "REMOVE"
)

// Change is one record of an item table's change feed, read with the
// table's contract.Schema: what the item was and what it became. Old is
// nil for an insert, New for a remove; either may also be missing from a
// damaged record, but Key is always set. EventID is unique per change and
// stays the same when the record is delivered again. It holds any
// schema's items, the to-do app's tasks among them.
type Change struct {
	EventID string
	Kind    Kind
	Key     contract.Key
	Old     *contract.Item
	New     *contract.Item
}
