package inmem

import (
	"fmt"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
)

// Inject asks fail, a stand-in's fault injector (nil: none), whether op
// fails.
func Inject(fail func(op string) error, op string) error {
	if fail == nil {
		return nil
	}
	return fail(op)
}

// Feed is a change feed, like a DynamoDB stream with NEW_AND_OLD_IMAGES;
// its owner holds its lock around each call.
type Feed struct{ changes []changefeed.Change }

// Add appends a change of the item at k.
func (f *Feed) Add(kind changefeed.Kind, k contract.Key, old, new *contract.Item) {
	f.changes = append(f.changes, changefeed.Change{EventID: fmt.Sprintf("ev-%08d", len(f.changes)+1), Kind: kind,
		Key: k, Old: old, New: new})
}

// Since returns the changes from position from on, and the next position
// to read from.
func (f *Feed) Since(from int) ([]changefeed.Change, int) {
	from = min(from, len(f.changes))
	return append([]changefeed.Change(nil), f.changes[from:]...), len(f.changes)
}

// Len is how many changes the feed holds.
func (f *Feed) Len() int { return len(f.changes) }
