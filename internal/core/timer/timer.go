// Package timer holds the ports every timer implements at run time, for
// the core's pipeline and reconciler: the EventBridge Scheduler client,
// the Step Functions executions and the TTL markers (and their in-memory
// counterparts) all speak them, for items of any schema.
package timer

import (
	"context"
	"errors"
	"time"

	"github.com/unschedule/unschedule/contract"
)

// Schedule is what a timer holds for one armed item: a one-off schedule,
// an execution or a marker.
type Schedule = contract.Schedule

// Sentinel errors. Adapters wrap them; callers test with errors.Is.
var (
	// ErrNotFound: the timer holds nothing of that name (and due time,
	// for a timer that names by it).
	ErrNotFound = errors.New("schedule not found")
	// ErrExists: the timer already holds one of that name.
	ErrExists = errors.New("schedule already exists")
	// ErrThrottled: the service refused the call for rate; the same call
	// may succeed later (timer/paced retries it with back-off).
	ErrThrottled = errors.New("timer service throttled")
)

// Timer arms, moves and disarms the timer of an item.
type Timer interface {
	// Arm arms s. A retry with the same ClientToken is a success;
	// another schedule of that name gives ErrExists.
	Arm(ctx context.Context, s Schedule) error
	// Move moves an existing schedule to s; ErrNotFound if none. from
	// is the due time the schedule was made for (zero when the caller
	// does not know it): a timer that names a schedule by its due time
	// (Step Functions) finds the old one by it; the others ignore it.
	Move(ctx context.Context, s Schedule, from time.Time) error
	// Disarm disarms the schedule called name made for at; ErrNotFound
	// if none (at is zero when unknown, as for Move).
	Disarm(ctx context.Context, name string, at time.Time) error
}

// Reader reads what a timer holds: the reconciler's view of it.
type Reader interface {
	// Get reads the schedule called name; ErrNotFound if none. at is the
	// due time the caller expects (zero when unknown): a timer that names
	// by due time (Step Functions) reads the one named for at, and has
	// nothing to read without it; the others ignore it.
	Get(ctx context.Context, name string, at time.Time) (Schedule, error)
	// List pages through what the timer holds for the items (every
	// armed name, and on a timer that may hold several per name, each of
	// them). A listed schedule may lack its At and Payload (EventBridge
	// Scheduler's listing has neither): Get reads them. Cursor is opaque.
	List(ctx context.Context, page PageRequest) (Page, error)
}

// PageRequest asks for one page. Cursor is what the previous Page
// returned ("" for the first page).
type PageRequest struct {
	Cursor string
	Limit  int
}

// Page is one page of schedules. Cursor is "" on the last page.
type Page struct {
	Schedules []Schedule
	Cursor    string
}

// DefaultLimit is a List page's size when the request names none.
const DefaultLimit = 50
