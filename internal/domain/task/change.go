package task

// ChangeKind is the kind of a change-feed record, as DynamoDB Streams
// names them.
type ChangeKind string

// The change kinds.
const (
	ChangeInsert ChangeKind = "INSERT"
	ChangeModify ChangeKind = "MODIFY"
	ChangeRemove ChangeKind = "REMOVE"
)

// Change is one record of the table's change feed: what an item was and
// what it became. Old is nil for an insert, New for a remove; either may
// also be missing from a damaged record, but UserID and TaskID (the item's
// key) are always set. EventID is unique per change and stays the same
// when the record is delivered again.
type Change struct {
	EventID string
	Kind    ChangeKind
	UserID  string
	TaskID  string
	Old     *Task
	New     *Task
}
