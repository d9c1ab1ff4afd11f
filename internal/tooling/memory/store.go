// Package memory holds in-process adapters for the to-do app's and the
// campaigns' ports: the task store with its change feed, the settings,
// the notifier outbox, the campaign store and sender, the senders' limit
// counters and the suppression list. The core's stand-ins (items,
// timers) are in internal/core/inmem. Tests, the simulation and
// `make dev` run the real handler code on them.
package memory

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Store is a task.Store in memory: the task table as the core's
// inmem.Items, each task stored as its item (tableschema.ToItem), so the
// change feed and the due attribute as another writer spelled it are the
// core's. Its sparse indexes are kept from the items' attributes as
// DynamoDB keeps them.
type Store struct {
	mu    sync.Mutex // held around each write's read, condition and write
	items *inmem.Items
	// users holds each user's task ids (a user's Query, and All).
	users map[string]map[string]bool
	// hidden are the feed positions of Put's writes, which record no
	// change.
	hidden  map[int]bool
	pending pendingIndex
	// Fail, when set, is called before each operation; a non-nil error is
	// returned instead of doing it (fault injection).
	Fail func(op string) error
}

var _ task.Store = (*Store)(nil)

// NewStore returns an empty store.
func NewStore() *Store {
	items := inmem.NewItems(tableschema.Todo())
	// DynamoDB refuses an empty string in an index key attribute.
	items.IndexKeys = []string{tableschema.PendingShardAttr, tableschema.PendingSortAttr, tableschema.UserPendingAttr}
	return &Store{items: items, users: map[string]map[string]bool{}, hidden: map[int]bool{}, pending: newPendingIndex()}
}

func (s *Store) fail(op string) error { return inmem.Inject(s.Fail, op) }

// Changes returns the change feed from position from on, and the next
// position to read from.
func (s *Store) Changes(from int) ([]changefeed.Change, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, next := s.items.Changes(from)
	out := all[:0]
	for i, c := range all {
		if !s.hidden[next-len(all)+i] {
			out = append(out, c)
		}
	}
	return out, next
}

// All returns every task, ordered by user then id.
func (s *Store) All() []task.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []task.Task
	for _, u := range slices.Sorted(maps.Keys(s.users)) {
		for _, id := range slices.Sorted(maps.Keys(s.users[u])) {
			out = append(out, s.task(task.Key(u, id)))
		}
	}
	return out
}

// Put writes t as is (test setup and restoring saved state); no change is
// recorded. It panics on a task DynamoDB would refuse (no due time).
func (s *Store) Put(t task.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, pos := s.items.Changes(math.MaxInt)
	if err := s.store(task.Key(t.UserID, t.TaskID), tableschema.ToItem(t)); err != nil {
		panic(err)
	}
	s.hidden[pos] = true
}

// PutItem writes t as a writer that is not the API would, with a plain
// put (no condition, no schedule made): the change feed records it, as an
// INSERT or a MODIFY of what was there.
func (s *Store) PutItem(t task.Task) {
	if err := s.PutItemSpelled(t, task.FormatTime(t.DueAt)); err != nil {
		panic(err) // a task DynamoDB would refuse (no due time)
	}
}

// PutItemSpelled is PutItem with the due attribute spelled dueAt, as
// another service may write it ("2026-12-01T09:00:00+01:00",
// "2026-12-01T08:00:00.000Z"). It fails when dueAt does not name
// t.DueAt's instant (contract.ParseTime).
func (s *Store) PutItemSpelled(t task.Task, dueAt string) error {
	at, err := contract.ParseTime(dueAt)
	if err != nil || !at.Equal(t.DueAt) {
		return fmt.Errorf("memory: due attribute %q does not spell %s (%v)", dueAt, task.FormatTime(t.DueAt), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.store(task.Key(t.UserID, t.TaskID), spelled(t, dueAt))
}

// spelled is t's item with its due attribute spelled due ("": as
// task.FormatTime spells it).
func spelled(t task.Task, due string) map[string]string {
	m := tableschema.ToItem(t)
	if due != "" {
		m[tableschema.AttrDueAt] = due
	}
	return m
}

// DueAttr is the due attribute of the task at userID/taskID as stored
// ("" when there is none).
func (s *Store) DueAttr(userID, taskID string) string {
	attrs, _ := s.items.Attrs(task.Key(userID, taskID))
	return attrs[tableschema.AttrDueAt]
}

// store writes the item attrs at k (nil: deletes it) and keeps the
// indexes in step; the caller holds mu. It fails as inmem.Items.Put does
// (an empty index key value).
func (s *Store) store(k contract.Key, attrs map[string]string) error {
	if attrs == nil {
		s.items.Delete(k)
		delete(s.users[k.Partition], k.Sort)
	} else {
		if err := s.items.Put(attrs); err != nil {
			return err
		}
		if s.users[k.Partition] == nil {
			s.users[k.Partition] = map[string]bool{}
		}
		s.users[k.Partition][k.Sort] = true
	}
	s.pending.note(k, attrs)
	return nil
}

// task reads the stored task at k (zero: none); the caller holds mu.
func (s *Store) task(k contract.Key) task.Task {
	attrs, ok := s.items.Attrs(k)
	if !ok {
		return task.Task{}
	}
	t, err := tableschema.FromItem(attrs)
	if err != nil {
		panic(err) // unreachable: every item is a task's
	}
	return t
}

// check is a write's condition: nil when it holds for the stored task
// cur and its item it (found is false when there is none), the times
// compared in spelling sp; else the error to return.
type check func(cur task.Task, it contract.Item, found bool, sp contract.Spelling) error

// set is the change that edits the stored task and keeps its due
// attribute's spelling.
func set(edit func(*task.Task)) func(task.Task, string) map[string]string {
	return func(t task.Task, due string) map[string]string { edit(&t); return spelled(t, due) }
}

// holds is the check of a write that fails with task.ErrConditionFailed
// when ok does not hold, a missing item included.
func holds(ok func(contract.Item, contract.Spelling) bool) check {
	return func(_ task.Task, it contract.Item, found bool, sp contract.Spelling) error {
		if !found || !ok(it, sp) {
			return task.ErrConditionFailed
		}
		return nil
	}
}

// exists is the check of a write that fails with task.ErrNotFound on a
// missing item, and has no other condition.
func exists(_ task.Task, _ contract.Item, found bool, _ contract.Spelling) error {
	if !found {
		return task.ErrNotFound
	}
	return nil
}

// asStored names the times a write's condition compares as stored, string
// with string as DynamoDB does: the due time, and the reminder time when
// set. On a condition failure the write is tried again in the item's
// spelling of them (contract.AsStored).
type asStored struct{ due, remind time.Time }

// write is every write of the task at k, named op for fault injection
// (Fail): under mu, ok's condition, then next's item (nil: none) replaces
// the stored one, given the stored task and its due attribute as stored.
// times, when not nil, are what ok compares as stored. It returns the
// task before and after (zero for none, and on an error).
func (s *Store) write(op string, k contract.Key, times *asStored, ok check,
	next func(cur task.Task, due string) map[string]string) (before, after task.Task, err error) {
	if err := s.fail(op); err != nil {
		return task.Task{}, task.Task{}, err
	}
	try := func(sp contract.Spelling) error {
		before, after, err = s.writeOnce(k, sp, ok, next)
		return err
	}
	if times == nil {
		err = try(contract.Spelling{})
		return before, after, err
	}
	err = contract.AsStored(times.due, times.remind, try,
		func(err error) bool { return errors.Is(err, task.ErrConditionFailed) },
		func() (contract.Item, bool, error) { return s.items.Get(context.Background(), k) })
	return before, after, err
}

// writeOnce is one try of write, comparing in spelling sp.
func (s *Store) writeOnce(k contract.Key, sp contract.Spelling, ok check,
	next func(task.Task, string) map[string]string) (before, after task.Task, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	attrs, found := s.items.Attrs(k)
	it, _ := tableschema.Todo().ItemFrom(attrs)
	before = s.task(k)
	if err := ok(before, it, found, sp); err != nil {
		return before, task.Task{}, err
	}
	nw := next(before, attrs[tableschema.AttrDueAt])
	if err := s.store(k, nw); err != nil {
		return before, task.Task{}, err
	}
	if nw == nil {
		return before, task.Task{}, nil
	}
	return before, s.task(k), nil
}

// Create implements task.Store.
func (s *Store) Create(_ context.Context, t task.Task) error {
	_, _, err := s.write("Create", task.Key(t.UserID, t.TaskID), nil,
		func(_ task.Task, _ contract.Item, found bool, _ contract.Spelling) error {
			if found {
				return task.ErrAlreadyExists
			}
			return nil
		},
		func(task.Task, string) map[string]string { return tableschema.ToItem(t) })
	return err
}

// Get implements task.Store.
func (s *Store) Get(_ context.Context, userID, taskID string) (task.Task, error) {
	if err := s.fail("Get"); err != nil {
		return task.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.task(task.Key(userID, taskID))
	if t.TaskID == "" {
		return task.Task{}, task.ErrNotFound
	}
	return t, nil
}

// List implements task.Store. The cursor is the last id returned.
func (s *Store) List(_ context.Context, userID string, page timer.PageRequest) (task.Page, error) {
	if err := s.fail("List"); err != nil {
		return task.Page{}, err
	}
	after := ""
	if page.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(page.Cursor)
		if err != nil || !task.ValidID(string(b)) {
			return task.Page{}, task.ErrBadCursor
		}
		after = string(b)
	}
	limit := page.Limit
	if limit <= 0 {
		limit = task.DefaultPageSize
	}
	limit = min(limit, task.MaxPageSize)
	s.mu.Lock()
	defer s.mu.Unlock()
	var p task.Page
	for _, id := range slices.Sorted(maps.Keys(s.users[userID])) {
		if id <= after {
			continue
		}
		if len(p.Tasks) == limit {
			p.Cursor = base64.RawURLEncoding.EncodeToString([]byte(p.Tasks[limit-1].TaskID))
			break
		}
		p.Tasks = append(p.Tasks, s.task(task.Key(userID, id)))
	}
	return p, nil
}

// CountUserPending implements task.Store: exact, under the store's lock,
// reading the user's pending index (tableschema.UserPendingAttr).
func (s *Store) CountUserPending(_ context.Context, userID string, limit int) (int, error) {
	if err := s.fail("CountUserPending"); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id := range s.users[userID] {
		if attrs, _ := s.items.Attrs(task.Key(userID, id)); attrs[tableschema.UserPendingAttr] != "" {
			n++
		}
	}
	if limit > 0 && n > limit {
		n = limit
	}
	return n, nil
}

// UpdatePending implements task.Store. A basis's due time is compared
// as stored, as the DynamoDB adapter's condition does; a new due time is
// spelled as the API spells it.
func (s *Store) UpdatePending(_ context.Context, userID, taskID string, p task.Patch, now time.Time) (task.Task, error) {
	var basisDue time.Time
	if p.Basis != nil {
		basisDue = p.Basis.DueAt
	}
	_, t, err := s.write("UpdatePending", task.Key(userID, taskID), &asStored{due: basisDue},
		func(cur task.Task, it contract.Item, found bool, sp contract.Spelling) error {
			switch {
			case !found:
				return task.ErrNotFound
			case cur.Status != task.StatusPending:
				return &task.NotPendingError{Status: cur.Status}
			case p.Basis != nil && (it.Spelling().Due != sp.Due || cur.Reminder != p.Basis.Reminder):
				return task.ErrConditionFailed
			}
			return nil
		},
		func(cur task.Task, due string) map[string]string {
			if p.DueAt != nil {
				due = ""
			}
			return spelled(task.ApplyPatch(cur, p, now), due)
		})
	return t, err
}

// Delete implements task.Store.
func (s *Store) Delete(_ context.Context, userID, taskID string) (task.Task, error) {
	old, _, err := s.write("Delete", task.Key(userID, taskID), nil, exists,
		func(task.Task, string) map[string]string { return nil })
	return old, err
}

// Expire implements task.Store (contract.Schema.Claimable, the due
// attribute compared as stored).
func (s *Store) Expire(_ context.Context, userID, taskID string, dueAt, now time.Time) (task.Task, error) {
	_, t, err := s.write("Expire", task.Key(userID, taskID), &asStored{due: dueAt},
		holds(func(it contract.Item, sp contract.Spelling) bool { return task.Schema.Claimable(it, sp.Due) }),
		set(func(t *task.Task) {
			t.Status = task.StatusExpired
			t.ExpiredAt = now
			t.UpdatedAt = now
			t.NotifyClaimAt = now
		}))
	return t, err
}

// ClaimNotification implements task.Store (contract.Schema.TakeOverable,
// the due attribute compared as stored).
func (s *Store) ClaimNotification(_ context.Context, userID, taskID string, dueAt, now time.Time, lease time.Duration) error {
	_, _, err := s.write("ClaimNotification", task.Key(userID, taskID), &asStored{due: dueAt},
		holds(func(it contract.Item, sp contract.Spelling) bool {
			return task.Schema.TakeOverable(it, sp.Due, now, lease)
		}),
		set(func(t *task.Task) { t.NotifyClaimAt = now }))
	return err
}

// MarkNotified implements task.Store (contract.Schema.Markable).
func (s *Store) MarkNotified(_ context.Context, userID, taskID string, at time.Time) error {
	_, _, err := s.write("MarkNotified", task.Key(userID, taskID), nil,
		holds(func(it contract.Item, _ contract.Spelling) bool { return task.Schema.Markable(it) }),
		set(func(t *task.Task) { t.NotifiedAt = at }))
	return err
}

// ClaimReminder implements task.Store (contract.Schema.RemindClaimable,
// both times compared as stored).
func (s *Store) ClaimReminder(_ context.Context, userID, taskID string, dueAt, remindAt, now time.Time, lease time.Duration) (task.Task, error) {
	_, t, err := s.write("ClaimReminder", task.Key(userID, taskID), &asStored{due: dueAt, remind: remindAt},
		holds(func(it contract.Item, sp contract.Spelling) bool {
			return task.Schema.RemindClaimable(it, sp, now, lease)
		}),
		set(func(t *task.Task) { t.RemindClaimAt = now }))
	return t, err
}

// MarkReminded implements task.Store (contract.Schema.RemindMarkable).
func (s *Store) MarkReminded(_ context.Context, userID, taskID string, remindAt time.Time) error {
	_, _, err := s.write("MarkReminded", task.Key(userID, taskID), nil,
		holds(func(it contract.Item, _ contract.Spelling) bool { return task.Schema.RemindMarkable(it, remindAt) }),
		set(func(t *task.Task) { t.RemindedFor = remindAt }))
	return err
}

// SetScheduleRepair implements task.Store.
func (s *Store) SetScheduleRepair(_ context.Context, userID, taskID string, repair bool) error {
	_, _, err := s.write("SetScheduleRepair", task.Key(userID, taskID), nil, exists,
		set(func(t *task.Task) { t.ScheduleRepair = repair }))
	return err
}

// MarkScheduled implements task.Store: still Pending, same due time
// (compared as stored, as the DynamoDB adapter's condition does).
func (s *Store) MarkScheduled(_ context.Context, userID, taskID string, dueAt time.Time) error {
	_, _, err := s.write("MarkScheduled", task.Key(userID, taskID), &asStored{due: dueAt},
		func(cur task.Task, it contract.Item, found bool, sp contract.Spelling) error {
			if !found || cur.Status != task.StatusPending || it.Spelling().Due != sp.Due {
				return task.ErrConditionFailed
			}
			return nil
		},
		set(func(t *task.Task) { t.ScheduledFor, t.ScheduleRepair = dueAt, false }))
	return err
}

// String describes the store's size, for logs.
func (s *Store) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ids := range s.users {
		n += len(ids)
	}
	_, changes := s.items.Changes(math.MaxInt)
	return "memory.Store{" + strconv.Itoa(n) + " tasks, " + strconv.Itoa(changes-len(s.hidden)) + " changes}"
}
