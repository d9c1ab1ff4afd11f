package task

import "github.com/unschedule/unschedule/contract"

// ChangeKind is the kind of a change-feed record, as DynamoDB Streams
// names them.
type ChangeKind string

// The change kinds.
const (
	ChangeInsert ChangeKind = "INSERT"
	ChangeModify ChangeKind = "MODIFY"
	ChangeRemove ChangeKind = "REMOVE"
)

// Change is one record of an item table's change feed, read with the
// table's contract.Schema: what the item was and what it became. Old is
// nil for an insert, New for a remove; either may also be missing from a
// damaged record, but Key is always set. EventID is unique per change and
// stays the same when the record is delivered again. It holds any
// schema's items, the to-do app's tasks (Task.Item) among them.
type Change struct {
	EventID string
	Kind    ChangeKind
	Key     contract.Key
	Old     *contract.Item
	New     *contract.Item
}
