// Package memory holds in-process adapters for the task ports: a store
// with a change feed, a scheduler and a notifier outbox. Tests, the
// simulation and `make dev` run the real handler code on them.
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
	"github.com/unschedule/unschedule/internal/domain/task"
)

// Store is a task.Store in memory. Every write appends to a change feed,
// like a DynamoDB stream with NEW_AND_OLD_IMAGES.
type Store struct {
	mu      sync.Mutex
	items   map[key]task.Task
	pending pendingIndex
	changes []task.Change
	seq     int
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

func (s *Store) fail(op string) error {
	if s.Fail == nil {
		return nil
	}
	return s.Fail(op)
}

// record appends a change of an item whose due attribute's spelling the
// write left as it was; the caller holds mu.
func (s *Store) record(kind task.ChangeKind, old, new *task.Task) {
	k := old
	if k == nil {
		k = new
	}
	text := s.dueText[key{k.UserID, k.TaskID}]
	s.recordSpelled(kind, old, new, text, text)
}

// recordSpelled appends a change whose images spell the due attribute
// oldText and newText ("": task.FormatTime); the caller holds mu.
func (s *Store) recordSpelled(kind task.ChangeKind, old, new *task.Task, oldText, newText string) {
	s.seq++
	k := old
	if k == nil {
		k = new
	}
	s.changes = append(s.changes, task.Change{EventID: fmt.Sprintf("ev-%08d", s.seq), Kind: kind,
		Key: task.Key(k.UserID, k.TaskID), Old: image(old, oldText), New: image(new, newText)})
}

// Changes returns the change feed from position from on, and the next
// position to read from.
func (s *Store) Changes(from int) ([]task.Change, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if from > len(s.changes) {
		from = len(s.changes)
	}
	out := append([]task.Change(nil), s.changes[from:]...)
	return out, len(s.changes)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{t.UserID, t.TaskID}
	oldText := s.dueText[k]
	delete(s.dueText, k)
	if dueAt != task.FormatTime(t.DueAt) {
		s.dueText[k] = dueAt
	}
	if old, ok := s.items[k]; ok {
		s.put(k, t)
		s.recordSpelled(task.ChangeModify, ptr(old), ptr(t), oldText, s.dueText[k])
		return nil
	}
	s.put(k, t)
	s.recordSpelled(task.ChangeInsert, nil, ptr(t), "", s.dueText[k])
	return nil
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

// asStored runs the conditional write of the task at userID/taskID whose
// condition, check, compares the due attribute (and the reminder time
// when remind is set) as stored, string with string as DynamoDB does,
// with the spelling contract.AsStored finds. check returns nil when the
// condition holds (found is false for a missing item), or the error to
// return: task.ErrConditionFailed (wrapped or not) lets AsStored try the
// stored spelling. Then apply's task replaces the stored one, and the
// change is recorded; the due attribute keeps its spelling unless
// newDue (the write sets a due time in the API's spelling).
func (s *Store) asStored(userID, taskID string, due, remind time.Time, newDue bool,
	check func(cur task.Task, it contract.Item, found bool, sp contract.Spelling) error,
	apply func(task.Task) task.Task) (task.Task, error) {
	k := key{userID, taskID}
	var out task.Task
	err := contract.AsStored(due, remind, func(sp contract.Spelling) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		old, it, ok := s.item(k)
		if err := check(old, it, ok, sp); err != nil {
			return err
		}
		out = apply(old)
		oldText := s.dueText[k]
		if newDue {
			delete(s.dueText, k)
		}
		s.put(k, out)
		s.recordSpelled(task.ChangeModify, ptr(old), ptr(out), oldText, s.dueText[k])
		return nil
	}, func(err error) bool { return errors.Is(err, task.ErrConditionFailed) }, func() (contract.Item, bool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		_, it, ok := s.item(k)
		return it, ok, nil
	})
	return out, err
}

// holds is a check of asStored for the writes that fail with
// task.ErrConditionFailed on a missing item.
func holds(ok func(contract.Item, contract.Spelling) bool) func(task.Task, contract.Item, bool, contract.Spelling) error {
	return func(_ task.Task, it contract.Item, found bool, sp contract.Spelling) error {
		if !found || !ok(it, sp) {
			return task.ErrConditionFailed
		}
		return nil
	}
}

// Create implements task.Store.
func (s *Store) Create(_ context.Context, t task.Task) error {
	if err := s.fail("Create"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{t.UserID, t.TaskID}
	if _, ok := s.items[k]; ok {
		return task.ErrAlreadyExists
	}
	delete(s.dueText, k)
	s.put(k, t)
	s.record(task.ChangeInsert, nil, ptr(t))
	return nil
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
func (s *Store) List(_ context.Context, userID string, page task.PageRequest) (task.Page, error) {
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
// as stored (asStored), as the DynamoDB adapter's condition does.
func (s *Store) UpdatePending(_ context.Context, userID, taskID string, p task.Patch, now time.Time) (task.Task, error) {
	if err := s.fail("UpdatePending"); err != nil {
		return task.Task{}, err
	}
	var basisDue time.Time
	if p.Basis != nil {
		basisDue = p.Basis.DueAt
	}
	return s.asStored(userID, taskID, basisDue, time.Time{}, p.DueAt != nil,
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
		}, func(cur task.Task) task.Task { return task.ApplyPatch(cur, p, now) })
}

// Delete implements task.Store.
func (s *Store) Delete(_ context.Context, userID, taskID string) (task.Task, error) {
	if err := s.fail("Delete"); err != nil {
		return task.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok {
		return task.Task{}, task.ErrNotFound
	}
	oldText := s.dueText[k]
	s.remove(k)
	s.recordSpelled(task.ChangeRemove, ptr(old), nil, oldText, "")
	return old, nil
}

// Expire implements task.Store (contract.Schema.Claimable, the due
// attribute compared as stored).
func (s *Store) Expire(_ context.Context, userID, taskID string, dueAt, now time.Time) (task.Task, error) {
	if err := s.fail("Expire"); err != nil {
		return task.Task{}, err
	}
	return s.asStored(userID, taskID, dueAt, time.Time{}, false,
		holds(func(it contract.Item, sp contract.Spelling) bool { return task.Schema.Claimable(it, sp.Due) }),
		func(t task.Task) task.Task {
			t.Status = task.StatusExpired
			t.ExpiredAt = now
			t.UpdatedAt = now
			t.NotifyClaimAt = now
			return t
		})
}

// ClaimNotification implements task.Store (contract.Schema.TakeOverable,
// the due attribute compared as stored).
func (s *Store) ClaimNotification(_ context.Context, userID, taskID string, dueAt, now time.Time, lease time.Duration) error {
	if err := s.fail("ClaimNotification"); err != nil {
		return err
	}
	_, err := s.asStored(userID, taskID, dueAt, time.Time{}, false,
		holds(func(it contract.Item, sp contract.Spelling) bool {
			return task.Schema.TakeOverable(it, sp.Due, now, lease)
		}),
		func(t task.Task) task.Task { t.NotifyClaimAt = now; return t })
	return err
}

// MarkNotified implements task.Store.
func (s *Store) MarkNotified(_ context.Context, userID, taskID string, at time.Time) error {
	if err := s.fail("MarkNotified"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok || !task.Schema.Markable(old.Item()) {
		return task.ErrConditionFailed
	}
	t := old
	t.NotifiedAt = at
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return nil
}

// ClaimReminder implements task.Store (contract.Schema.RemindClaimable,
// both times compared as stored).
func (s *Store) ClaimReminder(_ context.Context, userID, taskID string, dueAt, remindAt, now time.Time, lease time.Duration) (task.Task, error) {
	if err := s.fail("ClaimReminder"); err != nil {
		return task.Task{}, err
	}
	return s.asStored(userID, taskID, dueAt, remindAt, false,
		holds(func(it contract.Item, sp contract.Spelling) bool {
			return task.Schema.RemindClaimable(it, sp, now, lease)
		}),
		func(t task.Task) task.Task { t.RemindClaimAt = now.UTC().Truncate(time.Second); return t })
}

// MarkReminded implements task.Store.
func (s *Store) MarkReminded(_ context.Context, userID, taskID string, remindAt time.Time) error {
	if err := s.fail("MarkReminded"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok || !task.Schema.RemindMarkable(old.Item(), remindAt) {
		return task.ErrConditionFailed
	}
	t := old
	t.RemindedFor = remindAt.UTC().Truncate(time.Second)
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return nil
}

// SetScheduleRepair implements task.Store.
func (s *Store) SetScheduleRepair(_ context.Context, userID, taskID string, repair bool) error {
	if err := s.fail("SetScheduleRepair"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok {
		return task.ErrNotFound
	}
	t := old
	t.ScheduleRepair = repair
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return nil
}

// MarkScheduled implements task.Store: still Pending, same due time
// (compared as stored, as the DynamoDB adapter's condition does).
func (s *Store) MarkScheduled(_ context.Context, userID, taskID string, dueAt time.Time) error {
	if err := s.fail("MarkScheduled"); err != nil {
		return err
	}
	_, err := s.asStored(userID, taskID, dueAt, time.Time{}, false,
		func(cur task.Task, it contract.Item, found bool, sp contract.Spelling) error {
			if !found || cur.Status != task.StatusPending || it.Spelling().Due != sp.Due {
				return task.ErrConditionFailed
			}
			return nil
		}, func(t task.Task) task.Task { t.ScheduledFor, t.ScheduleRepair = dueAt, false; return t })
	return err
}

// String describes the store's size, for logs.
func (s *Store) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "memory.Store{" + strconv.Itoa(len(s.items)) + " tasks, " + strconv.Itoa(len(s.changes)) + " changes}"
}
