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
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Store is a task.Store in memory. Every write appends to a change feed,
// like a DynamoDB stream with NEW_AND_OLD_IMAGES.
type Store struct {
	mu      sync.Mutex
	items   map[key]task.Task
	pending pendingIndex
	feed    inmem.Feed
	// dueText holds the due attribute as another writer spelled it
	// (PutItemSpelled), where that is not task.FormatTime of the task's
	// DueAt: the conditional writes compare it as DynamoDB does, string
	// with string, and the pending index sorts by it.
	dueText map[key]string
	// Fail, when set, is called before each operation; a non-nil error is
	// returned instead of doing it (fault injection).
	Fail func(op string) error
}

type key struct{ user, id string }

var _ task.Store = (*Store)(nil)

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{items: map[key]task.Task{}, pending: newPendingIndex(), dueText: map[key]string{}}
}

func (s *Store) fail(op string) error { return inmem.Inject(s.Fail, op) }

// recordSpelled appends a change whose images spell the due attribute
// oldText and newText ("": task.FormatTime); the caller holds mu.
func (s *Store) recordSpelled(kind changefeed.Kind, old, new *task.Task, oldText, newText string) {
	k := old
	if k == nil {
		k = new
	}
	s.feed.Add(kind, task.Key(k.UserID, k.TaskID), image(old, oldText), image(new, newText))
}

// Changes returns the change feed from position from on, and the next
// position to read from.
func (s *Store) Changes(from int) ([]changefeed.Change, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.feed.Since(from)
}

// All returns every task, ordered by user then id.
func (s *Store) All() []task.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]task.Task, 0, len(s.items))
	for _, t := range s.items {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].UserID != out[j].UserID {
			return out[i].UserID < out[j].UserID
		}
		return out[i].TaskID < out[j].TaskID
	})
	return out
}

// Put writes t as is (test setup and restoring saved state); no change is
// recorded.
func (s *Store) Put(t task.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.dueText, key{t.UserID, t.TaskID})
	s.put(key{t.UserID, t.TaskID}, t)
}

func ptr(t task.Task) *task.Task { return &t }

// image is a task as the change feed shows it: the contract's view of
// the item (nil for none), its due attribute spelled dueText ("":
// task.FormatTime).
func image(t *task.Task, dueText string) *contract.Item {
	if t == nil {
		return nil
	}
	it := t.Item()
	it.DueText = dueText
	return &it
}

// PutItem writes t as a writer that is not the API would, with a plain
// put (no condition, no schedule made): the change feed records it, as an
// INSERT or a MODIFY of what was there.
func (s *Store) PutItem(t task.Task) {
	if err := s.PutItemSpelled(t, task.FormatTime(t.DueAt)); err != nil {
		panic(err) // unreachable: FormatTime spells DueAt
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
	_, _, err = s.writeOnce(key{t.UserID, t.TaskID}, contract.Spelling{}, always,
		func(_ task.Task, dueText *string) *task.Task {
			*dueText = ""
			if dueAt != task.FormatTime(t.DueAt) {
				*dueText = dueAt
			}
			return &t
		})
	return err
}

// DueAttr is the due attribute of the task at userID/taskID as stored
// ("" when there is none).
func (s *Store) DueAttr(userID, taskID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	t, ok := s.items[k]
	if !ok {
		return ""
	}
	if v, ok := s.dueText[k]; ok {
		return v
	}
	return task.FormatTime(t.DueAt)
}

// item is the contract's view of the stored task at k, with the due
// attribute as stored; the caller holds mu.
func (s *Store) item(k key) (task.Task, contract.Item, bool) {
	t, ok := s.items[k]
	if !ok {
		return task.Task{}, contract.Item{}, false
	}
	return t, *image(&t, s.dueText[k]), true
}

// check is a write's condition: nil when it holds for the stored task
// cur and its item it, the due attribute as stored (found is false when
// there is none), compared in spelling sp; else the error to return.
type check func(cur task.Task, it contract.Item, found bool, sp contract.Spelling) error

// change makes the task that replaces cur (nil: the item is deleted); it
// may set dueText, the due attribute's spelling ("": task.FormatTime),
// which otherwise stays as stored.
type change func(cur task.Task, dueText *string) *task.Task

// set is the change that edits the stored task and keeps its spelling.
func set(edit func(*task.Task)) change {
	return func(t task.Task, _ *string) *task.Task { edit(&t); return &t }
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

// always is the check of a write without a condition.
func always(task.Task, contract.Item, bool, contract.Spelling) error { return nil }

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
// (Fail): under mu, ok's condition, then apply's task replaces the stored
// one and the change feed records the INSERT, MODIFY or REMOVE. times,
// when not nil, are what ok compares as stored. It returns the task
// before and after (zero for none, and on an error).
func (s *Store) write(op string, k key, times *asStored, ok check, apply change) (before, after task.Task, err error) {
	if err := s.fail(op); err != nil {
		return task.Task{}, task.Task{}, err
	}
	try := func(sp contract.Spelling) error {
		before, after, err = s.writeOnce(k, sp, ok, apply)
		return err
	}
	if times == nil {
		err = try(contract.Spelling{})
		return before, after, err
	}
	err = contract.AsStored(times.due, times.remind, try,
		func(err error) bool { return errors.Is(err, task.ErrConditionFailed) },
		func() (contract.Item, bool, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			_, it, found := s.item(k)
			return it, found, nil
		})
	return before, after, err
}

// writeOnce is one try of write, comparing in spelling sp: condWrite,
// the fault injected once by write for all its tries.
func (s *Store) writeOnce(k key, sp contract.Spelling, ok check, apply change) (before, after task.Task, err error) {
	var oldText, text string // the due attribute's spelling before and after
	return inmem.CondWrite(&s.mu, nil, "", func() (task.Task, bool) { t, found := s.items[k]; return t, found },
		func(cur task.Task, found bool) error {
			_, it, _ := s.item(k)
			return ok(cur, it, found, sp)
		},
		func(cur task.Task) (task.Task, bool) {
			oldText = s.dueText[k]
			text = oldText
			next := apply(cur, &text)
			if next == nil {
				return task.Task{}, false
			}
			return *next, true
		},
		func(cur task.Task, found bool, next task.Task, keep bool) {
			var prev *task.Task
			kind := changefeed.Insert
			if found {
				prev, kind = &cur, changefeed.Modify
			}
			if !keep {
				s.remove(k)
				s.recordSpelled(changefeed.Remove, prev, nil, oldText, "")
				return
			}
			delete(s.dueText, k)
			if text != "" {
				s.dueText[k] = text
			}
			s.put(k, next)
			s.recordSpelled(kind, prev, &next, oldText, text)
		})
}

// Create implements task.Store.
func (s *Store) Create(_ context.Context, t task.Task) error {
	_, _, err := s.write("Create", key{t.UserID, t.TaskID}, nil,
		func(_ task.Task, _ contract.Item, found bool, _ contract.Spelling) error {
			if found {
				return task.ErrAlreadyExists
			}
			return nil
		},
		func(_ task.Task, dueText *string) *task.Task { *dueText = ""; return &t })
	return err
}

// Get implements task.Store.
func (s *Store) Get(_ context.Context, userID, taskID string) (task.Task, error) {
	if err := s.fail("Get"); err != nil {
		return task.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.items[key{userID, taskID}]
	if !ok {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []task.Task
	for k, t := range s.items {
		if k.user == userID && k.id > after {
			mine = append(mine, t)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].TaskID < mine[j].TaskID })
	limit := page.Limit
	if limit <= 0 {
		limit = task.DefaultPageSize
	}
	if limit > task.MaxPageSize {
		limit = task.MaxPageSize
	}
	var p task.Page
	if len(mine) > limit {
		mine = mine[:limit]
		p.Cursor = base64.RawURLEncoding.EncodeToString([]byte(mine[limit-1].TaskID))
	}
	p.Tasks = mine
	return p, nil
}

// CountUserPending implements task.Store: exact, under the store's lock.
func (s *Store) CountUserPending(_ context.Context, userID string, limit int) (int, error) {
	if err := s.fail("CountUserPending"); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, t := range s.items {
		if k.user == userID && t.Status == task.StatusPending {
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
	_, t, err := s.write("UpdatePending", key{userID, taskID}, &asStored{due: basisDue},
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
		func(cur task.Task, dueText *string) *task.Task {
			if p.DueAt != nil {
				*dueText = ""
			}
			return ptr(task.ApplyPatch(cur, p, now))
		})
	return t, err
}

// Delete implements task.Store.
func (s *Store) Delete(_ context.Context, userID, taskID string) (task.Task, error) {
	old, _, err := s.write("Delete", key{userID, taskID}, nil, exists,
		func(task.Task, *string) *task.Task { return nil })
	return old, err
}

// Expire implements task.Store (contract.Schema.Claimable, the due
// attribute compared as stored).
func (s *Store) Expire(_ context.Context, userID, taskID string, dueAt, now time.Time) (task.Task, error) {
	_, t, err := s.write("Expire", key{userID, taskID}, &asStored{due: dueAt},
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
	_, _, err := s.write("ClaimNotification", key{userID, taskID}, &asStored{due: dueAt},
		holds(func(it contract.Item, sp contract.Spelling) bool {
			return task.Schema.TakeOverable(it, sp.Due, now, lease)
		}),
		set(func(t *task.Task) { t.NotifyClaimAt = now }))
	return err
}

// MarkNotified implements task.Store (contract.Schema.Markable).
func (s *Store) MarkNotified(_ context.Context, userID, taskID string, at time.Time) error {
	_, _, err := s.write("MarkNotified", key{userID, taskID}, nil,
		holds(func(it contract.Item, _ contract.Spelling) bool { return task.Schema.Markable(it) }),
		set(func(t *task.Task) { t.NotifiedAt = at }))
	return err
}

// ClaimReminder implements task.Store (contract.Schema.RemindClaimable,
// both times compared as stored).
func (s *Store) ClaimReminder(_ context.Context, userID, taskID string, dueAt, remindAt, now time.Time, lease time.Duration) (task.Task, error) {
	_, t, err := s.write("ClaimReminder", key{userID, taskID}, &asStored{due: dueAt, remind: remindAt},
		holds(func(it contract.Item, sp contract.Spelling) bool {
			return task.Schema.RemindClaimable(it, sp, now, lease)
		}),
		set(func(t *task.Task) { t.RemindClaimAt = now.UTC().Truncate(time.Second) }))
	return t, err
}

// MarkReminded implements task.Store (contract.Schema.RemindMarkable).
func (s *Store) MarkReminded(_ context.Context, userID, taskID string, remindAt time.Time) error {
	_, _, err := s.write("MarkReminded", key{userID, taskID}, nil,
		holds(func(it contract.Item, _ contract.Spelling) bool { return task.Schema.RemindMarkable(it, remindAt) }),
		set(func(t *task.Task) { t.RemindedFor = remindAt.UTC().Truncate(time.Second) }))
	return err
}

// SetScheduleRepair implements task.Store.
func (s *Store) SetScheduleRepair(_ context.Context, userID, taskID string, repair bool) error {
	_, _, err := s.write("SetScheduleRepair", key{userID, taskID}, nil, exists,
		set(func(t *task.Task) { t.ScheduleRepair = repair }))
	return err
}

// MarkScheduled implements task.Store: still Pending, same due time
// (compared as stored, as the DynamoDB adapter's condition does).
func (s *Store) MarkScheduled(_ context.Context, userID, taskID string, dueAt time.Time) error {
	_, _, err := s.write("MarkScheduled", key{userID, taskID}, &asStored{due: dueAt},
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
	return "memory.Store{" + strconv.Itoa(len(s.items)) + " tasks, " + strconv.Itoa(s.feed.Len()) + " changes}"
}
